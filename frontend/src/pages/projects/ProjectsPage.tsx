// The projects the signed-in person belongs to (an admin: every project): create one (its creator owns
// it), edit its description, delete it (owners; what it runs is listed and stopped first), and work in it.
// Reachable without any project: the empty state of every other page leads here.
import { useState } from "react";
import { api } from "../../api/client";
import { ResourceTable, type Column } from "../../components/ResourceTable";
import { PageHeader } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import { navigate, useLocation } from "../../router";
import { useSession } from "../../session";
import type { Page, Project } from "../../types";
import { DeleteProjectDialog } from "./DeleteProjectDialog";
import { canManageProject } from "./logic";
import { ProjectDialog } from "./ProjectDialog";
import "./projects.css";

type Open = { kind: "new" } | { kind: "edit"; project: Project } | { kind: "delete"; project: Project } | null;

export default function ProjectsPage() {
  const { me, project: selected, setProjectId, refresh } = useSession();
  const { search } = useLocation();
  const list = useAsync(() => api<Page<Project>>("/api/v1/project/?page_size=100&order=name"), []);
  // ?new=1 (the project switcher's "New project…", the empty state's button) opens the form at once.
  const [open, setOpen] = useState<Open>(() => (search.get("new") ? { kind: "new" } : null));
  const [notice, setNotice] = useState("");
  const roleOf = (id: number) => me?.projects.find((p) => p.id === id)?.role;

  const created = async (project: Project) => {
    await refresh(); // the creator is its owner now: it is among their projects
    setProjectId(project.id);
    setOpen(null);
    navigate("/pipelines");
  };
  const saved = () => {
    setOpen(null);
    list.reload();
  };
  const deleted = async (project: Project) => {
    setOpen(null);
    setNotice(`Deleted project ${project.name}; what it ran is being stopped.`);
    await refresh();
    list.reload();
  };

  const columns: Column<Project>[] = [
    { header: "Name", cell: (p) => <strong>{p.name}</strong> },
    { header: "Namespace", cell: (p) => <code>{p.namespace}</code> },
    { header: "Description", cell: (p) => p.description || <span className="muted">—</span>, className: "description" },
    { header: "Your role", cell: (p) => roleOf(p.id) ?? (me?.is_admin ? "admin" : "—") },
    {
      header: "Actions", hiddenHeader: true, className: "actions",
      cell: (p) => (
        <>
          {roleOf(p.id) && p.id !== selected?.id && (
            <button type="button" onClick={() => { setProjectId(p.id); navigate("/pipelines"); }}>Open</button>
          )}
          {canManageProject(roleOf(p.id), me?.is_admin ?? false) && (
            <>
              <button type="button" onClick={() => setOpen({ kind: "edit", project: p })}>Edit</button>
              <button type="button" className="danger" onClick={() => setOpen({ kind: "delete", project: p })}>
                Delete
              </button>
            </>
          )}
        </>
      ),
    },
  ];

  return (
    <section className="projects-page">
      <PageHeader title="Projects">
        <button type="button" className="primary" onClick={() => setOpen({ kind: "new" })}>New project</button>
      </PageHeader>
      {notice && <p className="notice" role="status">{notice}</p>}
      <ResourceTable list={{ rows: list.data?.items, error: list.error, loading: list.loading }} columns={columns}
        rowKey={(p) => p.id} rowAttributes={(p) => ({ "data-project": p.name })} className="projects-table"
        loadingText="Loading projects"
        empty={<p>You have no project yet. <button type="button" className="link-button"
          onClick={() => setOpen({ kind: "new" })}>Create one</button> to start: you will be its owner.</p>} />
      {open?.kind === "new" && <ProjectDialog onClose={() => setOpen(null)} onSaved={created} />}
      {open?.kind === "edit" && <ProjectDialog project={open.project} onClose={() => setOpen(null)} onSaved={saved} />}
      {open?.kind === "delete" && (
        <DeleteProjectDialog project={open.project} onClose={() => setOpen(null)} onDeleted={() => deleted(open.project)} />
      )}
    </section>
  );
}
