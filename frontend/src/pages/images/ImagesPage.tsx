// The selected project's image builds (/ui/images): ask for a build, follow its live log, see the history
// and which notebooks, templates and tasks use an image. A worker builds (Kaniko on Kubernetes, a Python
// environment locally); the page records intent and polls the history while something is building.
import { useState } from "react";
import { ResourceTable, type Column } from "../../components/ResourceTable";
import { formatTime, PageHeader } from "../../components/ui";
import { useResourceList } from "../../hooks/useResourceList";
import { useProject } from "../../session";
import type { ImageBuild } from "../../types";
import { BuildDetail } from "./BuildDetail";
import { BuildForm } from "./BuildForm";
import { RegistryCredentialsForm } from "./RegistryCredentialsForm";
import { HISTORY_POLL, reference, sourceLabel } from "./logic";
import "./images.css";

export default function ImagesPage() {
  const project = useProject();
  const history = useResourceList<ImageBuild>("image_build", { project_id: project.id, order: "-id" },
    { pageSize: 50, poll: HISTORY_POLL });
  const [selected, setSelected] = useState<number | null>(null);
  const writer = project.role === "developer" || project.role === "owner";
  const current = history.rows?.find((b) => b.id === selected) ?? null;

  const columns: Column<ImageBuild>[] = [
    { header: "Image", cell: (b) => <code>{reference(b)}</code> },
    { header: "From", className: "muted", cell: sourceLabel },
    {
      header: "State", className: "state-cell", cell: (b) => (
        <>
          <span className={`state state-${b.state}`}>{b.state}</span>
          {b.reason && <span className="reason">{b.reason.split("\n")[0]}</span>}
        </>
      ),
    },
    { header: "Asked", className: "muted", cell: (b) => formatTime(b.created_at) },
    {
      header: "Actions", hiddenHeader: true, className: "row-actions", cell: (b) => (
        <button type="button" aria-label={`Show build ${b.id}`} onClick={() => setSelected(b.id)}>Log</button>
      ),
    },
  ];

  return (
    <section className="images-page" aria-labelledby="images-title">
      <PageHeader title={<span id="images-title">Images</span>} />
      {writer ? (
        <BuildForm projectId={project.id} onCreated={(build) => { setSelected(build.id); history.reload(); }} />
      ) : (
        <p className="muted">Developers and owners build images.</p>
      )}
      <RegistryCredentialsForm projectId={project.id} owner={project.role === "owner"} />
      <h2>History</h2>
      <ResourceTable list={history} columns={columns} rowKey={(b) => b.id} className="build-table"
        rowAttributes={(b) => ({ "data-build": b.id, "data-state": b.state, "aria-selected": b.id === selected })}
        loadingText="Loading builds" empty={<>No builds in {project.name} yet.</>} noun="builds" />
      {current && <BuildDetail key={current.id} build={current} />}
    </section>
  );
}
