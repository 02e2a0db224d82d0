// The pipeline list of the selected project: search, last run, and create / import / clone / delete.
// In the first bundle: keep imports light (no graph libraries).
import { useMemo, useState, type ReactNode } from "react";
import { api, list, listAll } from "../../api/client";
import { Pager } from "../../components/ResourceTable";
import { ErrorBanner, Loading, PageHeader } from "../../components/ui";
import { Link } from "../../router";
import { useProject } from "../../session";
import type { Pipeline, PipelineRun } from "../../types";
import { useAsync } from "../../lib/useAsync";
import { CloneDialog } from "./CloneDialog";
import { ConfirmDialog } from "../../components/Dialog";
import { ImportDialog } from "./ImportDialog";
import { NewPipelineDialog } from "./NewPipelineDialog";
import { PipelineTable } from "./PipelineTable";
import { cloneName, filterPipelines, newestRunByPipeline, pageOf } from "./logic";
import "./pipelines.css";

type Open =
  | { kind: "new" }
  | { kind: "import" }
  | { kind: "clone"; pipeline: Pipeline }
  | { kind: "delete"; pipeline: Pipeline }
  | null;

export function PipelinesPage() {
  const project = useProject();
  // A new project starts from a clean page (search, paging, dialogs).
  return <PipelineList key={project.id} projectId={project.id} projectName={project.name}
    canEdit={project.role !== "viewer"} />;
}

function PipelineList({ projectId, projectName, canEdit }: { projectId: number; projectName: string; canEdit: boolean }) {
  const { data, error, loading, reload } = useAsync(() => Promise.all([
    listAll<Pipeline>("pipeline", { project_id: projectId }),
    // One request for the last-run column: the project's newest runs, newest first.
    list<PipelineRun>("pipeline_run", { project_id: projectId, page_size: 100, order: "-id" }),
  ]), [projectId]);
  const [query, setQuery] = useState("");
  const [page, setPage] = useState(0);
  const [open, setOpen] = useState<Open>(null);
  const [deleteError, setDeleteError] = useState<unknown>(null);
  const [notice, setNotice] = useState<ReactNode>(null);

  const pipelines = data?.[0];
  const lastRuns = useMemo(() => newestRunByPipeline(data?.[1].items ?? []), [data]);
  const matching = useMemo(() => filterPipelines(pipelines ?? [], query), [pipelines, query]);
  const shown = pageOf(matching, page);

  const close = () => {
    setOpen(null);
    setDeleteError(null);
  };
  const remove = async (pipeline: Pipeline) => {
    setDeleteError(null);
    try {
      await api(`/api/v1/pipeline/${pipeline.id}`, { method: "DELETE" });
      close();
      setNotice(<>Deleted <strong>{pipeline.name}</strong>.</>);
      reload();
    } catch (err) {
      setDeleteError(err);
    }
  };

  return (
    <section className="pipelines-page" aria-labelledby="pipelines-title">
      <PageHeader title={<span id="pipelines-title">Pipelines <span className="muted">in {projectName}</span></span>}>
        <input type="search" aria-label="Search pipelines by name" placeholder="Search by name" value={query}
          onChange={(e) => { setQuery(e.target.value); setPage(0); }} />
        {canEdit && (
          <>
            <button type="button" onClick={() => setOpen({ kind: "import" })}>Import YAML</button>
            <button type="button" className="primary" onClick={() => setOpen({ kind: "new" })}>New pipeline</button>
          </>
        )}
      </PageHeader>
      {notice && <p className="notice" role="status">{notice}</p>}
      <ErrorBanner error={error} />
      {!pipelines ? (loading && <Loading what="Loading pipelines" />) : pipelines.length === 0 ? (
        <div className="panel empty">
          <p>No pipelines in this project yet.</p>
          {canEdit && <p className="muted">Create one with <em>New pipeline</em> or bring one in with <em>Import YAML</em>.</p>}
        </div>
      ) : matching.length === 0 ? (
        <p className="panel empty">No pipeline name contains “{query.trim()}”.</p>
      ) : (
        <>
          <PipelineTable pipelines={shown.rows} lastRuns={lastRuns} canEdit={canEdit}
            onClone={(pipeline) => setOpen({ kind: "clone", pipeline })}
            onDelete={(pipeline) => setOpen({ kind: "delete", pipeline })} />
          {shown.pages > 1 && (
            <Pager page={shown.page} pages={shown.pages} setPage={setPage} total={`${matching.length} pipelines`} />
          )}
        </>
      )}

      {open?.kind === "new" && <NewPipelineDialog projectId={projectId} onClose={close} />}
      {open?.kind === "import" && <ImportDialog onClose={close} />}
      {open?.kind === "clone" && (
        <CloneDialog source={open.pipeline} onClose={close}
          suggested={cloneName(open.pipeline.name, new Set((pipelines ?? []).map((p) => p.name)))}
          onCloned={(copy) => {
            close();
            setNotice(<>Cloned as <Link to={`/pipelines/${copy.id}`}>{copy.name}</Link> (paused).</>);
            reload();
          }} />
      )}
      {open?.kind === "delete" && (
        <ConfirmDialog title={`Delete ${open.pipeline.name}?`} confirmLabel="Delete pipeline" onClose={close}
          onConfirm={() => remove(open.pipeline)} error={<ErrorBanner error={deleteError} />}>
          <p>This deletes the pipeline <strong>{open.pipeline.name}</strong>, its tasks and its run history.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}
