import type { Cluster } from "../../types";
import { ClusterForm } from "./ClusterForm";
import { ResourceTab } from "./ResourceTab";

export function ClustersTab() {
  return (
    <ResourceTab<Cluster> resource="cluster" noun="cluster" rowName={(c) => c.name} renderForm={(props) => <ClusterForm {...props} />}
      empty="No clusters yet. Add one to give resource groups somewhere to run."
      columns={[
        { header: "Name", cell: (c) => <strong>{c.name}</strong> },
        { header: "Kind", cell: (c) => c.kind },
        {
          header: "Connection",
          cell: (c) => c.kind === "local" ? <span className="muted">this machine</span>
            : c.in_cluster ? "in-cluster service account"
              : c.kube_context ? <>context <code>{c.kube_context}</code></> : <span className="muted">default context</span>,
        },
        { header: "Serving", cell: (c) => c.kind === "local" ? <span className="muted">processes</span> : c.serving_engine },
        { header: "Prometheus", cell: (c) => c.prometheus_url ? <code>{c.prometheus_url}</code> : <span className="muted">—</span> },
        { header: "Enabled", cell: (c) => c.enabled ? "yes" : <span className="state state-cancelled">disabled</span> },
      ]} />
  );
}
