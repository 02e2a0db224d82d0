// The selected project's notebooks (/ui/notebooks): live state with its reason and idle time, create,
// open JupyterLab through the platform, start, stop, logs, delete. States come from polling the list
// (fast while one is on its way somewhere); a worker does the work, the page only records intent.
import { useEffect, useState } from "react";
import { api, listAll } from "../../api";
import { ConfirmDialog } from "../../components/Dialog";
import { ErrorBanner, Loading, PageHeader } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import { useProject } from "../../session";
import type { Notebook } from "../../types";
import { actions, idleTime, openUrl, pollInterval, stateClass, stateLabel } from "./logic";
import { LogsDialog } from "./LogsDialog";
import { NewNotebookDialog } from "./NewNotebookDialog";
import "./notebooks.css";

type Open = { kind: "new" } | { kind: "delete"; notebook: Notebook } | { kind: "logs"; notebook: Notebook } | null;

export default function NotebooksPage() {
  const project = useProject();
  const { data, error, loading, reload } = useAsync(
    () => listAll<Notebook>("notebook", { project_id: project.id, order: "name" }), [project.id]);
  const [open, setOpen] = useState<Open>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const [now, setNow] = useState(() => Date.now());
  const interval = pollInterval(data ?? []);

  useEffect(() => {
    const timer = window.setInterval(() => {
      setNow(Date.now());
      reload();
    }, interval);
    return () => window.clearInterval(timer);
  }, [interval, reload]);

  const act = async (notebook: Notebook, action: "start" | "stop") => {
    setActionError(null);
    try {
      await api<Notebook>(`/api/v1/notebook/${notebook.id}/${action}`, { method: "POST" });
    } catch (err) {
      setActionError(err);
    }
    reload();
  };
  const remove = async (notebook: Notebook) => {
    setActionError(null);
    try {
      await api(`/api/v1/notebook/${notebook.id}`, { method: "DELETE" });
      setOpen(null);
    } catch (err) {
      setActionError(err);
    }
    reload();
  };
  const writer = project.role === "developer" || project.role === "owner";

  return (
    <section className="notebooks-page" aria-labelledby="notebooks-title">
      <PageHeader title={<span id="notebooks-title">Notebooks</span>}>
        <button type="button" className="primary" disabled={!writer}
          title={writer ? undefined : "Developers and owners create notebooks"}
          onClick={() => { setActionError(null); setOpen({ kind: "new" }); }}>
          New notebook
        </button>
      </PageHeader>
      <ErrorBanner error={error} />
      {open?.kind !== "delete" && <ErrorBanner error={actionError} />}
      {!data ? (loading && <Loading what="Loading notebooks" />) : data.length === 0 ? (
        <div className="panel muted">No notebooks in {project.name} yet.</div>
      ) : (
        <table className="data notebook-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">State</th>
              <th scope="col">Idle</th>
              <th scope="col">Image</th>
              <th scope="col">Resources</th>
              <th scope="col"><span className="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {data.map((nb) => {
              const allowed = actions(nb, project.role);
              const url = openUrl(nb, project.name);
              const idle = idleTime(nb, now);
              return (
                <tr key={nb.id} data-notebook={nb.name} data-state={nb.state}>
                  <td><strong>{nb.name}</strong></td>
                  <td className="state-cell">
                    <span className={`state state-${stateClass(nb.state)}`} data-state={nb.state}>{stateLabel(nb.state)}</span>
                    {nb.reason && <span className="reason">{nb.reason}</span>}
                  </td>
                  <td className="muted">{idle ?? "—"}</td>
                  <td className="image"><code>{nb.image}</code></td>
                  <td className="muted">
                    {nb.resources.cpu ?? "?"} CPU, {nb.resources.memory ?? "?"}
                    {nb.resources.gpu ? `, ${nb.resources.gpu} GPU` : ""}
                  </td>
                  <td className="row-actions">
                    {url ? (
                      <a className="button primary" href={url} target="_blank" rel="noopener"
                        aria-label={`Open ${nb.name} in JupyterLab`}>Open</a>
                    ) : (
                      <button type="button" disabled aria-label={`Open ${nb.name} in JupyterLab`}
                        title="JupyterLab opens once the notebook is running">Open</button>
                    )}
                    {allowed.toggle === "start" ? (
                      <button type="button" disabled={!allowed.start} title={allowed.locked ?? undefined}
                        aria-label={`Start ${nb.name}`} onClick={() => void act(nb, "start")}>Start</button>
                    ) : (
                      <button type="button" disabled={!allowed.stop} title={allowed.locked ?? undefined}
                        aria-label={`Stop ${nb.name}`} onClick={() => void act(nb, "stop")}>Stop</button>
                    )}
                    <button type="button" aria-label={`Logs of ${nb.name}`}
                      onClick={() => setOpen({ kind: "logs", notebook: nb })}>Logs</button>
                    <button type="button" className="danger" disabled={!allowed.remove} title={allowed.locked ?? undefined}
                      aria-label={`Delete ${nb.name}`}
                      onClick={() => { setActionError(null); setOpen({ kind: "delete", notebook: nb }); }}>
                      Delete
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {open?.kind === "new" && (
        <NewNotebookDialog projectId={project.id} onClose={() => setOpen(null)}
          onCreated={() => { setOpen(null); reload(); }} />
      )}
      {open?.kind === "logs" && <LogsDialog notebook={open.notebook} onClose={() => setOpen(null)} />}
      {open?.kind === "delete" && (
        <ConfirmDialog title={`Delete notebook ${open.notebook.name}?`} confirmLabel="Delete"
          onConfirm={() => remove(open.notebook)} onClose={() => setOpen(null)}
          error={<ErrorBanner error={actionError} />}>
          <p>JupyterLab stops and the notebook's work folder is deleted with it. This cannot be undone.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
