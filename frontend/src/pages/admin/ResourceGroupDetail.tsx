// One resource group now: capacity and use, each project's quota, use and borrowing, what runs where and
// the queue with each attempt's reason and position. Asks the server again every few seconds.
import { useEffect, useState } from "react";
import { api } from "../../api/client";
import { ErrorBanner, Loading } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import { Link } from "../../router";
import type { ResourceGroupStatus } from "../../types";
import { formatCores, formatGiB } from "./quantity";
import { Meter } from "./Meter";
import { borrowedText, discoveryText, isBorrowing, placement, POLL_MS, requestText, since } from "./groupStatus";
import { readings } from "./usage";

export function ResourceGroupDetail({ id }: { id: number }) {
  const status = useAsync(async () => ({
    report: await api<ResourceGroupStatus>(`/api/v1/resource_group/${id}/status`), at: Date.now(),
  }), [id]);
  const { reload } = status;
  const [now, setNow] = useState(() => Date.now());

  useEffect(() => {
    const timer = window.setInterval(() => {
      reload();
      setNow(Date.now());
    }, POLL_MS);
    return () => window.clearInterval(timer);
  }, [reload]);

  const data = status.data?.report;
  const name = data?.resource_group.name ?? `#${id}`;
  return (
    <div className="group-detail">
      <div className="tab-actions">
        <Link to="/admin/resource-groups">← All resource groups</Link>
        <span className="muted" aria-live="polite">
          {status.data ? `Updated ${new Date(status.data.at).toLocaleTimeString()} · refreshes every ${POLL_MS / 1000} s` : ""}
        </span>
      </div>
      {/* A failed refresh keeps the last answer on screen, under the error. */}
      <ErrorBanner error={status.error} />
      {!data ? (status.loading && <Loading what={`Loading resource group ${name}`} />) : (
        <>
          <section className="panel" aria-labelledby="group-capacity">
            <header className="usage-head">
              <h2 id="group-capacity">Resource group {name}</h2>
              <span className="muted">cluster {data.resource_group.cluster} · policy <code>{data.resource_group.policy}</code></span>
            </header>
            <div className="usage-bars">
              {readings(data.used, data.capacity).map((r) => (
                <div key={r.key} className="usage-bar">
                  <span className="usage-label">{r.label}</span>
                  <Meter reading={r} label={`${r.label} used of ${name}`} limitName="capacity" />
                </div>
              ))}
            </div>
            {data.capacity.nodes.length > 0 && (
              <table className="data compact">
                <caption>Nodes</caption>
                <thead><tr><th scope="col">Node</th><th scope="col">GPUs</th><th scope="col">CPU</th><th scope="col">Memory</th></tr></thead>
                <tbody>
                  {data.capacity.nodes.map((n) => (
                    <tr key={n.name} data-node={n.name}>
                      <th scope="row">{n.name}</th><td>{n.gpus}</td><td>{formatCores(n.cpu_millicores)}</td>
                      <td>{formatGiB(n.memory_bytes)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            {data.discovery.enabled && <DiscoveredNodes discovery={data.discovery} />}
          </section>

          <section className="panel" aria-labelledby="group-projects">
            <h2 id="group-projects">Projects</h2>
            {data.projects.length === 0 ? <p className="muted">No project has a quota here or uses it.</p> : (
              <table className="data compact usage-projects">
                <thead>
                  <tr>
                    <th scope="col">Project</th><th scope="col">CPU</th><th scope="col">Memory</th><th scope="col">GPUs</th>
                    <th scope="col">Borrowed</th><th scope="col">Waiting</th>
                  </tr>
                </thead>
                <tbody>
                  {data.projects.map((p) => (
                    <tr key={p.project_id} data-project={p.project}>
                      <th scope="row">{p.project}{p.quota === null && <span className="muted"> · no quota</span>}</th>
                      {readings(p.used, p.quota).map((r) => (
                        <td key={r.key}>
                          <Meter reading={r} label={`${r.label} of ${p.project} against its quota on ${name}`}
                            limitName="quota" />
                        </td>
                      ))}
                      <td className={isBorrowing(p) ? "borrowing" : "muted"}>{borrowedText(p.borrowed)}</td>
                      <td>{p.waiting}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>

          <section className="panel" aria-labelledby="group-running">
            <h2 id="group-running">Running ({data.running.length})</h2>
            {data.running.length === 0 ? <p className="muted">Nothing runs here now.</p> : (
              <table className="data compact">
                <thead>
                  <tr>
                    <th scope="col">Task</th><th scope="col">Asks for</th><th scope="col">Nodes</th>
                    <th scope="col">Running for</th><th scope="col">Preempted</th>
                  </tr>
                </thead>
                <tbody>
                  {data.running.map((r) => (
                    <tr key={r.task_run_id} data-task-run={r.task_run_id}>
                      <th scope="row">
                        <Link to={`/runs/${r.run_id}`}>{r.project} / {r.pipeline} / {r.task}</Link>
                        {r.borrowing && <span className="badge borrowing" title="beyond its project's quota: preempted first when the owner needs it"> borrowing</span>}
                      </th>
                      <td>{requestText(r)}</td>
                      <td>{placement(r.nodes)}</td>
                      <td>{since(r.started_at, now)}</td>
                      <td>{r.preemptions ? `${r.preemptions}×` : "—"}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>

          <section className="panel" aria-labelledby="group-queue">
            <h2 id="group-queue">Queue ({data.queue.length})</h2>
            {data.queue.length === 0 ? <p className="muted">Nothing waits.</p> : (
              <table className="data compact group-queue">
                <thead>
                  <tr>
                    <th scope="col">#</th><th scope="col">Task</th><th scope="col">Why it waits</th>
                    <th scope="col">Asks for</th><th scope="col">Waiting for</th>
                  </tr>
                </thead>
                <tbody>
                  {data.queue.map((w) => (
                    <tr key={w.task_run_id} data-task-run={w.task_run_id}>
                      <td>{w.position}</td>
                      <th scope="row"><Link to={`/runs/${w.run_id}`}>{w.project} / {w.pipeline} / {w.task}</Link></th>
                      <td className="reason">{w.reason}</td>
                      <td>{requestText(w)}</td>
                      <td>{since(w.waiting_since, now)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
        </>
      )}
    </div>
  );
}

// The group's nodes as last listed on its cluster: admission uses the schedulable ones only.
function DiscoveredNodes({ discovery }: { discovery: ResourceGroupStatus["discovery"] }) {
  return (
    <div className="discovered-nodes">
      <p className="muted discovery-summary">
        Discovered on the cluster: {discoveryText(discovery)}
        {discovery.at && ` · listed ${new Date(discovery.at).toLocaleTimeString()}`}
      </p>
      {discovery.error && <p className="field-error" role="alert">Last discovery failed: {discovery.error}</p>}
      {discovery.nodes.length > 0 && (
        <table className="data compact">
          <caption>Discovered nodes</caption>
          <thead><tr><th scope="col">Node</th><th scope="col">GPUs</th><th scope="col">CPU</th><th scope="col">Memory</th><th scope="col">Schedulable</th></tr></thead>
          <tbody>
            {discovery.nodes.map((n) => (
              <tr key={n.name} data-discovered-node={n.name}>
                <th scope="row">{n.name}</th><td>{n.gpus}</td><td>{formatCores(n.cpu_millicores)}</td>
                <td>{formatGiB(n.memory_bytes)}</td><td>{n.schedulable ? "yes" : `no: ${n.why ?? ""}`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
