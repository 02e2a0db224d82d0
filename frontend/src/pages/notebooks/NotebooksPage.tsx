// The selected project's notebooks (/ui/notebooks): live state with its reason and idle time, create,
// open JupyterLab through the platform, start, stop, logs, delete. States come from polling the list
// (fast while one is on its way somewhere); a worker does the work, the page only records intent.
import { api } from "../../api/client";
import { ConfirmDialog } from "../../components/Dialog";
import { ResourceTable, type Column } from "../../components/ResourceTable";
import { ErrorBanner, PageHeader } from "../../components/ui";
import { useResourceList } from "../../hooks/useResourceList";
import { useRowActions } from "../../hooks/useRowActions";
import { useProject } from "../../session";
import type { Notebook } from "../../types";
import { actions, idleTime, LIST_POLL, openUrl, stateClass, stateLabel } from "./logic";
import { LogsDialog } from "./LogsDialog";
import { NewNotebookDialog } from "./NewNotebookDialog";
import "./notebooks.css";

type Open = { kind: "new" } | { kind: "delete"; notebook: Notebook } | { kind: "logs"; notebook: Notebook };

export default function NotebooksPage() {
  const project = useProject();
  const notebooks = useResourceList<Notebook>("notebook", { project_id: project.id, order: "name" }, { poll: LIST_POLL });
  const rowActions = useRowActions<Open>(notebooks.reload);
  const { open, show, close, run } = rowActions;
  const act = (notebook: Notebook, action: "start" | "stop") =>
    void run(() => api<Notebook>(`/api/v1/notebook/${notebook.id}/${action}`, { method: "POST" }));
  const remove = async (notebook: Notebook) => {
    await run(() => api(`/api/v1/notebook/${notebook.id}`, { method: "DELETE" }));
  };
  const writer = project.role === "developer" || project.role === "owner";

  const columns: Column<Notebook>[] = [
    { header: "Name", cell: (nb) => <strong>{nb.name}</strong> },
    {
      header: "State", className: "state-cell", cell: (nb) => (
        <>
          <span className={`state state-${stateClass(nb.state)}`} data-state={nb.state}>{stateLabel(nb.state)}</span>
          {nb.reason && <span className="reason">{nb.reason}</span>}
        </>
      ),
    },
    // Idle time against the clock of the answer, so it moves on at every poll.
    { header: "Idle", className: "muted", cell: (nb) => idleTime(nb, notebooks.readAt) ?? "—" },
    { header: "Image", className: "image", cell: (nb) => <code>{nb.image}</code> },
    {
      header: "Resources", className: "muted", cell: (nb) => (
        <>
          {nb.resources.cpu ?? "?"} CPU, {nb.resources.memory ?? "?"}
          {nb.resources.gpu ? `, ${nb.resources.gpu} GPU` : ""}
        </>
      ),
    },
    { header: "Actions", hiddenHeader: true, className: "row-actions", cell: (nb) => rowButtons(nb) },
  ];

  function rowButtons(nb: Notebook) {
    const allowed = actions(nb, project.role);
    const url = openUrl(nb);
    return (
      <>
        {url ? (
          <a className="button primary" href={url} target="_blank" rel="noopener"
            aria-label={`Open ${nb.name} in JupyterLab`}>Open</a>
        ) : (
          <button type="button" disabled aria-label={`Open ${nb.name} in JupyterLab`}
            title="JupyterLab opens once the notebook is running">Open</button>
        )}
        {allowed.toggle === "start" ? (
          <button type="button" disabled={!allowed.start} title={allowed.locked ?? undefined}
            aria-label={`Start ${nb.name}`} onClick={() => act(nb, "start")}>Start</button>
        ) : (
          <button type="button" disabled={!allowed.stop} title={allowed.locked ?? undefined}
            aria-label={`Stop ${nb.name}`} onClick={() => act(nb, "stop")}>Stop</button>
        )}
        <button type="button" aria-label={`Logs of ${nb.name}`}
          onClick={() => show({ kind: "logs", notebook: nb })}>Logs</button>
        <button type="button" className="danger" disabled={!allowed.remove} title={allowed.locked ?? undefined}
          aria-label={`Delete ${nb.name}`} onClick={() => show({ kind: "delete", notebook: nb })}>
          Delete
        </button>
      </>
    );
  }

  return (
    <section className="notebooks-page" aria-labelledby="notebooks-title">
      <PageHeader title={<span id="notebooks-title">Notebooks</span>}>
        <button type="button" className="primary" disabled={!writer}
          title={writer ? undefined : "Developers and owners create notebooks"}
          onClick={() => show({ kind: "new" })}>
          New notebook
        </button>
      </PageHeader>
      {open?.kind !== "delete" && <ErrorBanner error={rowActions.error} />}
      <ResourceTable list={notebooks} columns={columns} rowKey={(nb) => nb.id} className="notebook-table"
        rowAttributes={(nb) => ({ "data-notebook": nb.name, "data-state": nb.state })}
        loadingText="Loading notebooks" empty={<>No notebooks in {project.name} yet.</>} />
      {open?.kind === "new" && (
        <NewNotebookDialog projectId={project.id} onClose={close}
          onCreated={() => { close(); notebooks.reload(); }} />
      )}
      {open?.kind === "logs" && <LogsDialog notebook={open.notebook} onClose={close} />}
      {open?.kind === "delete" && (
        <ConfirmDialog title={`Delete notebook ${open.notebook.name}?`} confirmLabel="Delete"
          onConfirm={() => remove(open.notebook)} onClose={close}
          error={<ErrorBanner error={rowActions.error} />}>
          <p>JupyterLab stops and the notebook's work folder is deleted with it. This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
