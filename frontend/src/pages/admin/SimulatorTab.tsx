// The scheduling simulator: replay a bundled trace through two policies on the server, compare their
// figures side by side and plot utilization, waiting jobs and JCT over the trace's time.
import { useState, type FormEvent } from "react";
import { api } from "../../api/client";
import { ErrorBanner, Loading } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import type { SimulateBody, Simulation, SimulatorTraces } from "../../types";
import { Chart } from "../../components/charts/Chart";
import type { Unit } from "../../components/charts/format";
import { lineOption } from "../../components/charts/options";
import "../run/run.css";
import { compareRows, seriesOf, type SeriesKey } from "./simulator";

type Policy = SimulateBody["policies"][number];

const CHARTS: { key: SeriesKey; title: string; axis: string; unit: Unit; max?: number }[] = [
  { key: "utilization", title: "GPU utilization over time", axis: "GPU utilization", unit: "%", max: 100 },
  { key: "waiting", title: "Jobs waiting over time", axis: "waiting", unit: "jobs" },
  { key: "avg_jct_s", title: "Average JCT (hours) by submission time", axis: "average JCT", unit: "h" },
];

export function SimulatorTab() {
  const options = useAsync(() => api<SimulatorTraces>("/api/v1/scheduler/traces"), []);
  return (
    <div className="simulator">
      <ErrorBanner error={options.error} />
      {options.data ? <SimulatorForm options={options.data} /> : options.loading && <Loading what="Loading traces" />}
    </div>
  );
}

function SimulatorForm({ options }: { options: SimulatorTraces }) {
  const first = options.traces[0];
  const [trace, setTrace] = useState(first?.name ?? "");
  const [gpus, setGpus] = useState(String(first?.default_gpus ?? 64));
  const [jobs, setJobs] = useState("");
  const [policyA, setPolicyA] = useState<Policy>("gang-fifo");
  const [policyB, setPolicyB] = useState<Policy | "">(options.default_policy as Policy);
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [answer, setAnswer] = useState<Simulation | null>(null);

  const pickTrace = (name: string) => {
    setTrace(name);
    const chosen = options.traces.find((t) => t.name === name);
    if (chosen) setGpus(String(chosen.default_gpus));
  };

  const run = async (event: FormEvent) => {
    event.preventDefault();
    setRunning(true);
    setError(null);
    const policies = policyB && policyB !== policyA ? [policyA, policyB] : [policyA];
    const body: SimulateBody = { trace, gpus: Number(gpus), policies };
    if (jobs.trim()) body.jobs = Number(jobs);
    try {
      setAnswer(await api<Simulation>("/api/v1/scheduler/simulate", { method: "POST", body }));
    } catch (err) {
      setError(err);
    } finally {
      setRunning(false);
    }
  };

  return (
    <>
      <form className="panel simulator-form" onSubmit={run} aria-label="Simulation">
        <label>
          Trace
          <select aria-label="Trace" value={trace} onChange={(e) => pickTrace(e.target.value)}>
            {options.traces.map((t) => <option key={t.name} value={t.name}>{t.name}: {t.description}</option>)}
          </select>
        </label>
        <label>
          GPUs (nodes of {options.node_gpus})
          <input type="number" min={options.node_gpus} max={options.max_gpus} step={options.node_gpus} required value={gpus}
            onChange={(e) => setGpus(e.target.value)} />
        </label>
        <label>
          Jobs <span className="muted">(first N; all when empty, at most {options.max_jobs.toLocaleString()})</span>
          <input type="number" min={1} max={options.max_jobs} value={jobs} onChange={(e) => setJobs(e.target.value)} />
        </label>
        <label>
          Policy
          <select aria-label="Policy" value={policyA} onChange={(e) => setPolicyA(e.target.value as Policy)}>
            {options.policies.map((p) => <option key={p} value={p}>{p}</option>)}
          </select>
        </label>
        <label>
          Compare with
          <select aria-label="Compare with" value={policyB} onChange={(e) => setPolicyB(e.target.value as Policy | "")}>
            <option value="">nothing</option>
            {options.policies.map((p) => <option key={p} value={p}>{p}</option>)}
          </select>
        </label>
        <button type="submit" className="primary" disabled={running || !trace}>
          {running ? "Simulating…" : "Run simulation"}
        </button>
      </form>
      <ErrorBanner error={error} />
      {running && <Loading what="Simulating" />}
      {answer && <SimulationView answer={answer} />}
    </>
  );
}

function SimulationView({ answer }: { answer: Simulation }) {
  const policies = answer.results.map((r) => r.policy);
  const rows = compareRows(answer.results);
  return (
    <section className="panel simulation" aria-labelledby="simulation-title">
      <h2 id="simulation-title">
        {answer.trace}: {answer.jobs.toLocaleString()} jobs on {answer.gpus} GPUs
      </h2>
      <table className="data compact simulation-figures">
        <thead>
          <tr>
            <th scope="col">Figure</th>
            {policies.map((p) => <th key={p} scope="col" data-policy={p}>{p}</th>)}
            {policies.slice(1).map((p) => <th key={`ratio-${p}`} scope="col">{p} ÷ {policies[0]}</th>)}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.label}>
              <th scope="row">{row.label}</th>
              {row.values.map((v, i) => <td key={policies[i]}>{v}</td>)}
              {row.ratios.map((v, i) => <td key={`ratio-${policies[i + 1]}`}>{v ?? "—"}</td>)}
            </tr>
          ))}
        </tbody>
      </table>
      <div className="charts">
        {CHARTS.map((chart) => {
          const series = seriesOf(answer.results, chart.key);
          return (
            <figure key={chart.key} className="chart" data-chart={chart.key}>
              <figcaption>{chart.title}</figcaption>
              <Chart label={`${chart.title}: ${policies.join(" and ")}`} option={lineOption({ series,
                x: { name: "days since the first submission", unit: "d", fromZero: true },
                y: { name: chart.axis, unit: chart.unit, fromZero: true, max: chart.max } })} />
            </figure>
          );
        })}
      </div>
    </section>
  );
}
