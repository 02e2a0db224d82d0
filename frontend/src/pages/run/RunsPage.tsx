// Run history: the project's runs (or one pipeline's), filtered and paged, refreshed while any is active.
import { useMemo, useState } from "react";
import { list, listAll } from "../../api";
import { ErrorBanner, Loading, PageHeader, StateBadge } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import { Link } from "../../router";
import { useProject } from "../../session";
import type { Pipeline, PipelineRun, RunState } from "../../types";
import { useInterval, useNow } from "./hooks";
import { duration, formatTime } from "./time";
import "./run.css";

const PAGE_SIZE = 25;
const STATES: RunState[] = ["queued", "running", "succeeded", "failed", "cancelled"];
const TRIGGERS = ["manual", "schedule", "backfill", "debug"];

export default function RunsPage({ pipelineId }: { pipelineId?: number }) {
  const project = useProject();
  // Another project starts over: its own filters and first page.
  return <RunHistory key={project.id} projectId={project.id} pipelineId={pipelineId} />;
}

function RunHistory({ projectId, pipelineId }: { projectId: number; pipelineId?: number }) {
  const [state, setState] = useState("");
  const [trigger, setTrigger] = useState("");
  const [page, setPage] = useState(0);
  const [chosen, setChosen] = useState<number[]>([]);  // runs picked for the comparison page
  const toggle = (id: number) => setChosen((have) => (have.includes(id) ? have.filter((x) => x !== id) : [...have, id]));

  const pipelines = useAsync(() => listAll<Pipeline>("pipeline", { project_id: projectId }), [projectId]);
  const names = useMemo(() => new Map((pipelines.data ?? []).map((p) => [p.id, p.name])), [pipelines.data]);
  const runs = useAsync(() => list<PipelineRun>("pipeline_run", {
    project_id: projectId, pipeline_id: pipelineId, state, trigger, page, page_size: PAGE_SIZE, order: "-id",
  }), [projectId, pipelineId, state, trigger, page]);

  const items = runs.data?.items ?? [];
  const active = items.some((r) => r.state === "queued" || r.state === "running");
  useInterval(runs.reload, 5000, active);
  const now = useNow(active);
  const pages = Math.max(1, Math.ceil((runs.data?.count ?? 0) / PAGE_SIZE));
  const filtered = Boolean(state || trigger);

  const pipelineName = pipelineId !== undefined ? names.get(pipelineId) : undefined;
  const title = pipelineId === undefined ? "Runs" : (
    <>Runs of <Link to={`/pipelines/${pipelineId}`}>{pipelineName ?? `pipeline ${pipelineId}`}</Link></>
  );

  const filter = (set: (value: string) => void) => (value: string) => {
    set(value);
    setPage(0);
  };

  return (
    <section className="runs-page">
      <PageHeader title={title}>
        {active && <span className="stream stream-live" role="status">auto-refresh</span>}
        {pipelineId !== undefined && chosen.length >= 2 && (
          <Link to={`/pipelines/${pipelineId}/compare?runs=${chosen.join(",")}`} className="button">
            Compare {chosen.length} runs</Link>
        )}
        {pipelineId !== undefined && <Link to={`/pipelines/${pipelineId}`} className="button">Open editor</Link>}
      </PageHeader>
      <div className="runs-filters">
        <label className="inline">
          <span>State</span>
          <select value={state} onChange={(e) => filter(setState)(e.target.value)}>
            <option value="">any</option>
            {STATES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </label>
        <label className="inline">
          <span>Trigger</span>
          <select value={trigger} onChange={(e) => filter(setTrigger)(e.target.value)}>
            <option value="">any</option>
            {TRIGGERS.map((t) => <option key={t} value={t}>{t}</option>)}
          </select>
        </label>
        {runs.data && <span className="muted">{runs.data.count} run{runs.data.count === 1 ? "" : "s"}</span>}
      </div>
      <ErrorBanner error={runs.error ?? pipelines.error} />
      {!runs.data ? (!runs.error && <Loading what="Loading runs" />) : items.length === 0 ? (
        <div className="panel empty">
          {filtered
            ? <p>No runs match these filters. <button type="button" className="link-button"
              onClick={() => { setState(""); setTrigger(""); setPage(0); }}>Clear filters</button></p>
            : <p>No runs yet. <span className="hint">Start one from a pipeline: open it from{" "}
              <Link to={pipelineId === undefined ? "/pipelines" : `/pipelines/${pipelineId}`}>
                {pipelineId === undefined ? "Pipelines" : "its editor"}</Link> and press Run.</span></p>}
        </div>
      ) : (
        <>
          <table className="data runs-table">
            <thead>
              <tr>
                {pipelineId !== undefined && <th scope="col" aria-label="Compare" />}
                <th scope="col">Run</th><th scope="col">Pipeline</th><th scope="col">State</th>
                <th scope="col">Trigger</th><th scope="col">Logical date</th><th scope="col">Created</th>
                <th scope="col">Duration</th>
              </tr>
            </thead>
            <tbody>
              {items.map((run) => (
                <tr key={run.id} data-run-id={run.id}>
                  {pipelineId !== undefined && (
                    <td><input type="checkbox" aria-label={`Compare run ${run.id}`} checked={chosen.includes(run.id)}
                      onChange={() => toggle(run.id)} /></td>
                  )}
                  <td><Link to={`/runs/${run.id}`}>#{run.id}</Link></td>
                  <td>
                    <Link to={`/pipelines/${run.pipeline_id}/runs`} title="Runs of this pipeline">
                      {names.get(run.pipeline_id) ?? `pipeline ${run.pipeline_id}`}
                    </Link>
                  </td>
                  <td><StateBadge state={run.state} /></td>
                  <td>{run.trigger}</td>
                  <td>{formatTime(run.logical_date)}</td>
                  <td>{formatTime(run.created_at)}</td>
                  <td>{duration(run.started_at, run.finished_at, now)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <nav className="pager" aria-label="Pages">
            <button type="button" onClick={() => setPage(page - 1)} disabled={page === 0}>Previous</button>
            <span>page {page + 1} of {pages}</span>
            <button type="button" onClick={() => setPage(page + 1)} disabled={page + 1 >= pages}>Next</button>
          </nav>
        </>
      )}
    </section>
  );
}
