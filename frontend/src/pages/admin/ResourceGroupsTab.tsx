import { listAll } from "../../api/client";
import { ErrorBanner } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import { Link, useLocation } from "../../router";
import type { Cluster, ResourceGroup } from "../../types";
import { ResourceGroupDetail } from "./ResourceGroupDetail";
import { ResourceGroupForm } from "./ResourceGroupForm";
import { ResourceTab } from "./ResourceTab";

export function ResourceGroupsTab() {
  const group = Number(useLocation().search.get("group"));
  return group > 0 ? <ResourceGroupDetail key={group} id={group} /> : <ResourceGroupList />;
}

function ResourceGroupList() {
  const clusters = useAsync(() => listAll<Cluster>("cluster", { order: "name" }), []);
  const clusterName = (id: number) => clusters.data?.find((c) => c.id === id)?.name ?? `#${id}`;
  return (
    <>
      <ErrorBanner error={clusters.error} />
      <ResourceTab<ResourceGroup> resource="resource_group" noun="resource group" rowName={(g) => g.name}
        empty="No resource groups yet. A resource group is a pool of a cluster's capacity that tasks run in."
        deleteNote="Quotas on it go too; tasks that still use it keep it from being deleted."
        createBlocked={clusters.data?.length === 0
          ? <p className="muted">Add a <Link to="/admin/clusters">cluster</Link> first.</p> : undefined}
        renderForm={(props) => <ResourceGroupForm {...props} clusters={clusters.data ?? []} />}
        columns={[
          {
            header: "Name",
            cell: (g) => (
              <Link to={`/admin/resource-groups?group=${g.id}`} aria-label={`Open resource group ${g.name}`}>
                <strong>{g.name}</strong>
              </Link>
            ),
          },
          { header: "Cluster", cell: (g) => clusterName(g.cluster_id) },
          { header: "CPU", cell: (g) => g.cpu },
          { header: "Memory", cell: (g) => g.memory },
          { header: "GPUs", cell: (g) => g.gpus ? `${g.gpus}${g.gpu_type ? ` × ${g.gpu_type}` : ""}` : "0" },
          {
            header: "Scheduling",
            cell: (g) => (
              <div className="scheduling">
                {Object.entries(g.node_selector).map(([k, v]) => <code key={k}>{k}={v}</code>)}
                {g.tolerations.length > 0 && <span className="muted">{g.tolerations.length} tolerations</span>}
                {g.queue && <span>queue <code>{g.queue}</code></span>}
                {g.gang_scheduling && <span>gang</span>}
                {!Object.keys(g.node_selector).length && !g.tolerations.length && !g.queue && !g.gang_scheduling
                  && <span className="muted">any node</span>}
              </div>
            ),
          },
        ]} />
    </>
  );
}
