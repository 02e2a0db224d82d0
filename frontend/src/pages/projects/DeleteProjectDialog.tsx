// Deleting a project asks first; when it runs work (runs, notebooks, model servers, builds) it lists it:
// the delete stops all of it (the server hands it to a worker), nothing keeps running unowned.
import { useState } from "react";
import { api } from "../../api/client";
import { ConfirmDialog } from "../../components/Dialog";
import { ErrorBanner, Loading } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import type { Project, RunningWork } from "../../types";
import { runningGroups } from "./logic";

interface Props {
  project: Project;
  onClose: () => void;
  onDeleted: () => void | Promise<void>;
}

export function DeleteProjectDialog({ project, onClose, onDeleted }: Props) {
  const work = useAsync(() => api<RunningWork>(`/api/v1/project/${project.id}/running`), [project.id]);
  const [error, setError] = useState<unknown>(null);
  const groups = work.data ? runningGroups(work.data) : [];

  const remove = async () => {
    setError(null);
    try {
      await api(`/api/v1/project/${project.id}`, { method: "DELETE" });
      await onDeleted();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <ConfirmDialog title={`Delete project ${project.name}?`} onClose={onClose} onConfirm={remove}
      confirmLabel={groups.length ? "Stop everything and delete" : "Delete project"}
      error={<ErrorBanner error={error ?? work.error} />}>
      <p>Its pipelines, runs, notebooks, models and services are deleted with it. This cannot be undone.</p>
      {work.loading && !work.data && <Loading what="Looking for running work" />}
      {groups.length > 0 && (
        <div className="running-work" role="group" aria-label="Running work">
          <p><strong>It runs work now.</strong> Deleting it stops:</p>
          <ul>
            {groups.map((group) => (
              <li key={group.kind}>{group.kind}: {group.items.join(", ")}</li>
            ))}
          </ul>
        </div>
      )}
      {work.data && groups.length === 0 && <p className="muted">Nothing runs in it now.</p>}
    </ConfirmDialog>
  );
}
