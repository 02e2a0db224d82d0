// The selected project's inference services (/ui/services): each service's versions with their weights
// (a slider moves the canary's share), state and reason, promote / roll back / delete, live charts of
// requests/s, p95 latency and errors per version from its router, the sampled request logs, and a test
// panel that sends a request built from the signature and shows the answer and the same call as curl.
import { useEffect, useMemo, useState } from "react";
import { api, getCsrfToken, listAll, qs } from "../../api/client";
import { ErrorBanner, Loading, PageHeader } from "../../components/ui";
import type { PollPolicy } from "../../hooks/polling";
import { useResourceList } from "../../hooks/useResourceList";
import { useAsync } from "../../lib/useAsync";
import { navigate, useLocation } from "../../router";
import { useProject } from "../../session";
import type { InferenceService, ModelVersion, ServiceLogs, ServiceMetrics } from "../../types";
import { Chart } from "../../components/charts/Chart";
import type { Unit } from "../../components/charts/format";
import { timeOption } from "../../components/charts/options";
import { canaryOf, curlCommand, figureSeries, formatLatency, observedShares, sampleRequest, SAMPLING_NOTE, versionRows,
  type Figure } from "./logic";
import "./services.css";

const POLL_MS = 2000;
/** Every service is live: its split and its versions' servers move under the controller. */
const LIVE: PollPolicy<InferenceService> = { busy: () => true, busyMs: POLL_MS };

export default function ServicesPage() {
  const project = useProject();
  const { search } = useLocation();
  const services = useResourceList<InferenceService>("inference_service", { project_id: project.id }, { poll: LIVE });
  const versions = useAsync(() => listAll<ModelVersion>("model_version", { project_id: project.id }), [project.id]);
  const { reload } = services;
  const list = services.rows ?? [];
  const chosen = Number(search.get("service")) || list[0]?.id;
  const service = list.find((s) => s.id === chosen);
  const byId = useMemo(() => new Map((versions.data ?? []).map((v) => [v.id, v])), [versions.data]);

  return (
    <section className="services-page" aria-labelledby="services-title">
      <PageHeader title={<span id="services-title">Services</span>} />
      <ErrorBanner error={services.error} />
      {!services.rows ? (services.loading && <Loading what="Loading services" />) : list.length === 0 ? (
        <div className="panel muted">No inference services in {project.name} yet: deploy a version from the
          Models page.</div>
      ) : (
        <div className="services-layout">
          <nav aria-label="Services" className="service-list">
            {list.map((s) => (
              <button key={s.id} type="button" className={s.id === chosen ? "current" : ""} data-service={s.name}
                onClick={() => navigate(`/services?service=${s.id}`)}>
                <strong>{s.name}</strong> <span className={`state state-${s.state}`}>{s.deleting ? "deleting" : s.state}</span>
              </button>
            ))}
          </nav>
          {service && <ServiceDetail key={service.id} service={service} versions={byId} onChange={reload} />}
        </div>
      )}
    </section>
  );
}

function ServiceDetail({ service, versions, onChange }: { service: InferenceService;
  versions: Map<number, ModelVersion>; onChange: () => void }) {
  const project = useProject();
  const writer = project.role === "developer" || project.role === "owner";
  const rows = versionRows(service, versions);
  const canary = canaryOf(service);
  const traffic = service.traffic as Record<string, number>;
  const [weight, setWeight] = useState(canary !== null ? traffic[String(canary)] : 0);
  const [error, setError] = useState<unknown>(null);

  const act = async (path: string, body: unknown, method: "POST" | "PUT" | "DELETE" = "POST") => {
    setError(null);
    try {
      await api(`/api/v1/inference_service/${service.id}${path}`, { method, body });
    } catch (err) {
      setError(err);
    }
    onChange();
  };
  const applyWeight = () => {
    if (canary === null) return;
    void act("", { traffic: { [String(service.model_version_id)]: 100 - weight, [String(canary)]: weight } }, "PUT");
  };

  return (
    <div className="service-detail" data-service={service.name} data-state={service.state}>
      <div className="panel">
        <h2>{service.name} <span className={`state state-${service.state}`} data-testid="service-state">
          {service.deleting ? "deleting" : service.state}</span></h2>
        {service.reason && <p className="reason" data-testid="service-reason">{service.reason}</p>}
        <p className="muted">Endpoint <code>{service.endpoint}</code> · model {service.model_name} ·
          replicas {service.min_replicas}–{service.max_replicas} · autoscale on {service.autoscale_metric}</p>
        <ErrorBanner error={error} />
        <table className="data versions">
          <thead><tr><th scope="col">Version</th><th scope="col">Role</th><th scope="col">Weight</th>
            <th scope="col">Server</th></tr></thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.id} data-version={r.label}>
                <td><strong>{r.label}</strong></td>
                <td>{r.stable ? "stable" : r.shadow ? "shadow" : "canary"}</td>
                <td data-testid={`weight-${r.label}`}>{r.shadow && !r.weight ? "mirror" : `${r.weight} %`}</td>
                <td><span className={`state state-${r.state}`}>{r.state}</span>
                  {r.reason && <span className="reason"> {r.reason}</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {canary !== null && (
          <div className="weight-row">
            <label>Canary share: <strong>{weight} %</strong>
              <input type="range" min={0} max={100} value={weight} disabled={!writer} aria-label="Canary share"
                onChange={(e) => setWeight(Number(e.target.value))} />
            </label>
            <button type="button" disabled={!writer} onClick={applyWeight}>Apply</button>
            <button type="button" className="primary" disabled={!writer} onClick={() => void act("/promote", {})}>
              Promote canary</button>
            <button type="button" disabled={!writer} onClick={() => void act("/rollback", {})}>Roll back</button>
          </div>
        )}
        <button type="button" className="danger" disabled={!writer || service.deleting}
          onClick={() => void act("", undefined, "DELETE")}>Delete service</button>
      </div>
      <Charts service={service} />
      <TestPanel service={service} version={versions.get(service.model_version_id)} />
      <RequestLogs service={service} />
    </div>
  );
}

const FIGURES: { figure: Figure; title: string; unit: Unit }[] = [
  { figure: "rps", title: "Requests per second", unit: "req/s" },
  { figure: "p95", title: "p95 latency", unit: "ms" },
  { figure: "errors", title: "Errors per second", unit: "errors/s" },
];

function Charts({ service }: { service: InferenceService }) {
  const [loaded, setLoaded] = useState<{ metrics: ServiceMetrics; at: number } | null>(null);
  useEffect(() => {
    let live = true;
    const load = () => api<ServiceMetrics>(`/api/v1/inference_service/${service.id}/metrics${qs({ window: 120 })}`)
      .then((m) => { if (live) setLoaded({ metrics: m, at: Math.floor(Date.now() / 1000) }); }, () => undefined);
    load();
    const timer = window.setInterval(load, POLL_MS);
    return () => { live = false; window.clearInterval(timer); };
  }, [service.id]);
  if (!loaded) return null;
  const { metrics, at: t1 } = loaded;
  const shares = observedShares(metrics);
  return (
    <div className="panel charts" aria-label="Traffic">
      <h2>Traffic, last 2 minutes</h2>
      {Object.keys(metrics.versions).length === 0 && (
        <p className="muted" data-testid="no-traffic">No requests in the last 2 minutes: send one from the test panel.</p>
      )}
      <table className="data figures">
        <thead><tr><th scope="col">Version</th><th scope="col">Requests</th><th scope="col">Share</th>
          <th scope="col">req/s</th><th scope="col">p50</th><th scope="col">p95</th><th scope="col">p99</th>
          <th scope="col">Errors</th></tr></thead>
        <tbody>
          {Object.entries(metrics.versions).sort(([a], [b]) => a.localeCompare(b)).map(([v, f]) => (
            <tr key={v} data-figures={v}>
              <td>{v}</td><td>{f.requests}</td><td data-testid={`share-${v}`}>{shares[v] ?? "—"}{v in shares ? " %" : ""}</td>
              <td>{f.rps}</td><td>{f.p50 ?? "—"}</td><td>{f.p95 ?? "—"}</td><td>{f.p99 ?? "—"}</td><td>{f.errors}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <div className="chart-grid">
        {FIGURES.map((spec) => (
          <figure key={spec.figure}>
            <figcaption>{spec.title}</figcaption>
            <Chart label={`${spec.title} per version`} height={200} option={timeOption({
              series: figureSeries(metrics, spec.figure), window: [t1 - 120, t1],
              y: { name: spec.title, unit: spec.unit, fromZero: true } })} />
          </figure>
        ))}
      </div>
    </div>
  );
}

function TestPanel({ service, version }: { service: InferenceService; version: ModelVersion | undefined }) {
  const [body, setBody] = useState(() => sampleRequest(version));
  const [answer, setAnswer] = useState<{ status: number; version: string | null; text: string; ms: number } | null>(
    null);
  const [error, setError] = useState<string | null>(null);
  const send = async () => {
    setError(null);
    try {
      const started = performance.now();
      const response = await fetch(`${service.endpoint}predict`, { method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": getCsrfToken() }, body });
      const text = await response.text();
      // From sending to the whole answer read, as this browser saw it (through the platform's proxy).
      const ms = performance.now() - started;
      setAnswer({ status: response.status, version: response.headers.get("X-Model-Version"), text, ms });
    } catch (err) {
      setError(String(err));
    }
  };
  return (
    <div className="panel test-panel" aria-label="Test">
      <h2>Test</h2>
      <label>Request (<code>POST {service.endpoint}predict</code>)
        <textarea rows={4} value={body} aria-label="Request body" onChange={(e) => setBody(e.target.value)} />
      </label>
      <button type="button" className="primary" onClick={() => void send()}>Send</button>
      {error && <p role="alert" className="error">{error}</p>}
      {answer && (
        <div className="answer" data-testid="test-answer">
          <p>HTTP {answer.status} · answered by <strong data-testid="answered-by">{answer.version ?? "—"}</strong> in{" "}
            <strong data-testid="latency">{formatLatency(answer.ms)}</strong></p>
          <pre>{answer.text}</pre>
        </div>
      )}
      <details>
        <summary>The same with curl</summary>
        <pre data-testid="curl">{curlCommand(window.location.origin, service.endpoint, "predict", body)}</pre>
      </details>
    </div>
  );
}

function RequestLogs({ service }: { service: InferenceService }) {
  const [q, setQ] = useState("");
  const { data, reload } = useAsync(
    () => api<ServiceLogs>(`/api/v1/inference_service/${service.id}/logs${qs({ q, limit: 50 })}`), [service.id, q]);
  return (
    <div className="panel request-logs" aria-label="Request logs">
      <h2>Request logs <button type="button" onClick={reload}>Refresh</button></h2>
      <p className="muted" data-testid="sampling">{SAMPLING_NOTE}</p>
      <input type="search" placeholder="Search (version, status, text of the request or answer)" value={q}
        aria-label="Search request logs" onChange={(e) => setQ(e.target.value)} />
      <table className="data">
        <thead><tr><th scope="col">Time</th><th scope="col">Version</th><th scope="col">Status</th>
          <th scope="col">ms</th><th scope="col">Request</th><th scope="col">Answer</th></tr></thead>
        <tbody>
          {data && data.items.length === 0 && (
            <tr><td colSpan={6} className="muted">No sampled requests{q ? " match" : " yet"}.</td></tr>
          )}
          {(data?.items ?? []).map((e, i) => (
            <tr key={`${e.time}-${i}`}>
              <td>{new Date(e.time * 1000).toLocaleTimeString()}</td><td>{e.version}</td><td>{e.status}</td>
              <td>{e.ms}</td><td><code>{e.request.slice(0, 80)}</code></td><td><code>{e.response.slice(0, 80)}</code></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
