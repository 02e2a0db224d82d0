import { listAll } from "../../api/client";
import { ErrorBanner } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import { Link } from "../../router";
import type { Project, Quota, ResourceGroup } from "../../types";
import { QuotaForm } from "./QuotaForm";
import { ResourceTab } from "./ResourceTab";

export function QuotasTab() {
  const lookups = useAsync(() => Promise.all([
    listAll<Project>("project", { order: "name" }),
    listAll<ResourceGroup>("resource_group", { order: "name" }),
  ]), []);
  const [projects, groups] = lookups.data ?? [[], []];
  const projectName = (id: number) => projects.find((p) => p.id === id)?.name ?? `#${id}`;
  const groupName = (id: number) => groups.find((g) => g.id === id)?.name ?? `#${id}`;
  return (
    <>
      <ErrorBanner error={lookups.error} />
      <ResourceTab<Quota> resource="quota" noun="quota"
        rowName={(q) => `${projectName(q.project_id)} on ${groupName(q.resource_group_id)}`}
        empty="No quotas yet. Without a quota a project's use of a resource group is not limited."
        createBlocked={lookups.data && groups.length === 0
          ? <p className="muted">Add a <Link to="/admin/resource-groups">resource group</Link> first.</p> : undefined}
        renderForm={(props) => <QuotaForm {...props} projects={projects} groups={groups} />}
        columns={[
          { header: "Project", cell: (q) => <strong>{projectName(q.project_id)}</strong> },
          { header: "Resource group", cell: (q) => groupName(q.resource_group_id) },
          { header: "CPU", cell: (q) => q.cpu },
          { header: "Memory", cell: (q) => q.memory },
          { header: "GPUs", cell: (q) => q.gpus },
        ]} />
    </>
  );
}
