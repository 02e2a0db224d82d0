// Several runs of one pipeline side by side: parameters, state and duration, the last value of every
// metric the tasks reported, and one chart per metric with a line per run (/pipelines/:id/compare?runs=1,2).
import { api, listAll } from "../../api/client";
import { ErrorBanner, Loading, PageHeader, StateBadge } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import { Link, useLocation } from "../../router";
import type { Pipeline, PipelineRun, Task, TaskRun } from "../../types";
import { Chart } from "../../components/charts/Chart";
import { formatNumber } from "../../components/charts/format";
import { lineOption } from "../../components/charts/options";
import { useNow } from "../run/hooks";
import { duration, formatTime } from "../run/time";
import { differs, lastValue, metricKeys, parameterNames, parameterValue, parseRunIds, runMetrics, seriesPerRun }
  from "./compare";
import "../run/run.css";

interface Loaded {
  pipeline: Pipeline;
  tasks: Task[];
  runs: PipelineRun[];
  taskRuns: TaskRun[][];
}

async function load(pipelineId: number, ids: number[]): Promise<Loaded> {
  const [pipeline, tasks, runs] = await Promise.all([
    api<Pipeline>(`/api/v1/pipeline/${pipelineId}`),
    listAll<Task>("task", { pipeline_id: pipelineId }),
    Promise.all(ids.map((id) => api<PipelineRun>(`/api/v1/pipeline_run/${id}`))),
  ]);
  const taskRuns = await Promise.all(ids.map((id) => listAll<TaskRun>("task_run", { pipeline_run_id: id })));
  return { pipeline, tasks, runs, taskRuns };
}

export default function ComparePage({ pipelineId }: { pipelineId: number }) {
  const { search } = useLocation();
  const ids = parseRunIds(search.get("runs"));
  const data = useAsync(() => load(pipelineId, ids), [pipelineId, ids.join(",")]);
  const now = useNow(Boolean(data.data?.runs.some((r) => r.state === "queued" || r.state === "running")));

  const title = <>Compare runs of <Link to={`/pipelines/${pipelineId}/runs`}>
    {data.data?.pipeline.name ?? `pipeline ${pipelineId}`}</Link></>;
  if (ids.length === 0) {
    return (<section><PageHeader title={title} />
      <p className="muted">Pick the runs to compare in the <Link to={`/pipelines/${pipelineId}/runs`}>run history</Link>.
      </p></section>);
  }
  if (!data.data) return data.error ? <ErrorBanner error={data.error} /> : <Loading what="Loading runs" />;
  const { pipeline, tasks, runs, taskRuns } = data.data;
  const foreign = runs.filter((r) => r.pipeline_id !== pipelineId);
  const defaults = pipeline.parameters ?? {};
  const params = parameterNames(runs, defaults);
  const perRun = taskRuns.map((trs) => runMetrics(trs, tasks));
  const keys = metricKeys(perRun);

  return (
    <section className="compare-page">
      <PageHeader title={title} />
      {foreign.length > 0 && <p role="alert">Run {foreign.map((r) => r.id).join(", ")} belongs to another pipeline.</p>}
      <table className="data compare-table" aria-label="Runs side by side">
        <thead>
          <tr><th scope="col" />{runs.map((r) => <th key={r.id} scope="col"><Link to={`/runs/${r.id}`}>#{r.id}</Link></th>)}</tr>
        </thead>
        <tbody>
          <tr><th scope="row">State</th>{runs.map((r) => <td key={r.id}><StateBadge state={r.state} /></td>)}</tr>
          <tr><th scope="row">Logical date</th>{runs.map((r) => <td key={r.id}>{formatTime(r.logical_date)}</td>)}</tr>
          <tr><th scope="row">Duration</th>
            {runs.map((r) => <td key={r.id}>{duration(r.started_at, r.finished_at, now)}</td>)}</tr>
          {params.map((name) => (
            <CompareRow key={`p-${name}`} className="compare-param" name={`params.${name}`} ids={runs.map((r) => r.id)}
              cells={runs.map((r) => parameterValue(r, name, defaults))} />
          ))}
          {keys.map((key) => (
            <CompareRow key={`m-${key}`} className="compare-metric" name={key} ids={runs.map((r) => r.id)}
              cells={runs.map((_, i) => {
                const value = lastValue(perRun[i].get(key));
                return value === undefined ? "—" : formatNumber(value);
              })} />
          ))}
        </tbody>
      </table>
      {keys.length === 0
        ? <p className="muted">These runs reported no metrics (a task writes them to $MYAPP_OUTPUT_DIR/metrics.jsonl).</p>
        : (
          <div className="charts" aria-label="Metrics over steps">
            {keys.map((key) => (
              <figure key={key} className="chart">
                <figcaption>{key}</figcaption>
                <Chart label={`${key} per run`} option={lineOption({ series: seriesPerRun(runs, perRun, key),
                  x: { name: "step", integer: true }, y: { name: key.slice(key.lastIndexOf("/") + 1) } })} />
              </figure>
            ))}
          </div>
        )}
    </section>
  );
}

/** A row of values, one per run, marked when they differ. */
function CompareRow({ name, cells, ids, className }: { name: string; cells: string[]; ids: number[];
  className: string }) {
  const marked = differs(cells);
  return (
    <tr className={marked ? `${className} differs` : className} data-differs={marked ? "true" : "false"}>
      <th scope="row">{name}{marked && <span className="visually-hidden"> (differs)</span>}</th>
      {cells.map((cell, i) => <td key={ids[i]}>{cell}</td>)}
    </tr>
  );
}
