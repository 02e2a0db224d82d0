// Capacity against use per resource group, and each project's quota against its use; refreshed every 10 s.
import { useEffect } from "react";
import { api, listAll } from "../../api/client";
import { ErrorBanner, Loading } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import type { Cluster, UsageReport } from "../../types";
import { Meter } from "./Meter";
import { describeRunning, readings } from "./usage";

const REFRESH_MS = 10_000;

export function UsageTab() {
  const usage = useAsync(async () => ({ report: await api<UsageReport>("/api/v1/quota/usage"), at: new Date() }), []);
  const clusters = useAsync(() => listAll<Cluster>("cluster"), []);
  const { reload } = usage;

  useEffect(() => {
    const timer = window.setInterval(reload, REFRESH_MS);
    return () => window.clearInterval(timer);
  }, [reload]);

  const clusterName = (id: number | null) =>
    id === null ? null : clusters.data?.find((c) => c.id === id)?.name ?? `cluster #${id}`;
  const groups = usage.data?.report.items;
  const updatedAt = usage.data?.at;

  return (
    <div className="usage-tab">
      <div className="tab-actions">
        <span className="muted" aria-live="polite">
          {updatedAt ? `Updated ${updatedAt.toLocaleTimeString()} · refreshes every 10 s` : ""}
        </span>
        <button type="button" onClick={reload} disabled={usage.loading}>Refresh now</button>
      </div>
      {/* A failed refresh keeps the last numbers on screen, under the error. */}
      <ErrorBanner error={usage.error} />
      {!groups ? (usage.loading && <Loading what="Loading usage" />) : groups.length === 0 ? (
        <p className="panel muted">No resource groups and nothing running yet.</p>
      ) : groups.map((group) => (
        <section key={group.resource_group_id ?? "none"} className="panel usage-group"
          data-group={group.name} aria-labelledby={`usage-${group.resource_group_id ?? "none"}`}>
          <header className="usage-head">
            <h2 id={`usage-${group.resource_group_id ?? "none"}`}>{group.name}</h2>
            <span className="muted">
              {[clusterName(group.cluster_id), group.gpu_type].filter(Boolean).join(" · ")}
            </span>
          </header>
          {group.capacity === null && (
            <p className="hint">Tasks that name no resource group: use only, no capacity to compare with.</p>
          )}
          <div className="usage-bars">
            {readings(group.used, group.capacity).map((r) => (
              <div key={r.key} className="usage-bar">
                <span className="usage-label">{r.label}</span>
                <Meter reading={r} label={`${r.label} used of ${group.name}`} limitName="capacity" />
              </div>
            ))}
          </div>
          {group.projects.length > 0 && (
            <table className="data compact usage-projects">
              <caption className="visually-hidden">Projects on {group.name}</caption>
              <thead>
                <tr>
                  <th scope="col">Project</th><th scope="col">Running</th><th scope="col">CPU</th>
                  <th scope="col">Memory</th><th scope="col">GPUs</th>
                </tr>
              </thead>
              <tbody>
                {group.projects.map((p) => (
                  <tr key={p.project_id} data-project={p.project}>
                    <th scope="row">{p.project}{p.quota === null && <span className="muted"> · no quota</span>}</th>
                    <td className="usage-running">{describeRunning(p.running)}</td>
                    {readings(p.used, p.quota).map((r) => (
                      <td key={r.key}>
                        <Meter reading={r} label={`${r.label} of ${p.project} against its quota on ${group.name}`}
                          limitName="quota" />
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      ))}
    </div>
  );
}
