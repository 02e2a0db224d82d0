// Run history: the project's runs (or one pipeline's), filtered and paged, refreshed while any is active.
import { useMemo, useState } from "react";
import { listAll } from "../../api/client";
import { ResourceTable, type Column } from "../../components/ResourceTable";
import { ErrorBanner, PageHeader, StateBadge } from "../../components/ui";
import type { PollPolicy } from "../../hooks/polling";
import { useResourceList } from "../../hooks/useResourceList";
import { useAsync } from "../../lib/useAsync";
import { Link } from "../../router";
import { useProject } from "../../session";
import type { Pipeline, PipelineRun, RunState } from "../../types";
import { useNow } from "./hooks";
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

const ACTIVE: PollPolicy<PipelineRun> = { busy: (r) => r.state === "queued" || r.state === "running", busyMs: 5000 };

function RunHistory({ projectId, pipelineId }: { projectId: number; pipelineId?: number }) {
  const [state, setState] = useState("");
  const [trigger, setTrigger] = useState("");
  const [chosen, setChosen] = useState<number[]>([]);  // runs picked for the comparison page
  const toggle = (id: number) => setChosen((have) => (have.includes(id) ? have.filter((x) => x !== id) : [...have, id]));

  const pipelines = useAsync(() => listAll<Pipeline>("pipeline", { project_id: projectId }), [projectId]);
  const names = useMemo(() => new Map((pipelines.data ?? []).map((p) => [p.id, p.name])), [pipelines.data]);
  // Other filters start again from the first page; refreshed every 5 s while a shown run is active.
  const runs = useResourceList<PipelineRun>("pipeline_run",
    { project_id: projectId, pipeline_id: pipelineId, state, trigger, order: "-id" }, { pageSize: PAGE_SIZE, poll: ACTIVE });

  const active = (runs.rows ?? []).some(ACTIVE.busy);
  const now = useNow(active);
  const filtered = Boolean(state || trigger);

  const pipelineName = pipelineId !== undefined ? names.get(pipelineId) : undefined;
  const title = pipelineId === undefined ? "Runs" : (
    <>Runs of <Link to={`/pipelines/${pipelineId}`}>{pipelineName ?? `pipeline ${pipelineId}`}</Link></>
  );

  const columns: (Column<PipelineRun> | false)[] = [
    pipelineId !== undefined && {
      header: "Compare", hiddenHeader: true, cell: (run) => (
        <input type="checkbox" aria-label={`Compare run ${run.id}`} checked={chosen.includes(run.id)}
          onChange={() => toggle(run.id)} />
      ),
    },
    { header: "Run", cell: (run) => <Link to={`/runs/${run.id}`}>#{run.id}</Link> },
    {
      header: "Pipeline", cell: (run) => (
        <Link to={`/pipelines/${run.pipeline_id}/runs`} title="Runs of this pipeline">
          {names.get(run.pipeline_id) ?? `pipeline ${run.pipeline_id}`}
        </Link>
      ),
    },
    { header: "State", cell: (run) => <StateBadge state={run.state} /> },
    { header: "Trigger", cell: (run) => run.trigger },
    { header: "Logical date", cell: (run) => formatTime(run.logical_date) },
    { header: "Created", cell: (run) => formatTime(run.created_at) },
    { header: "Duration", cell: (run) => duration(run.started_at, run.finished_at, now) },
  ];

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
          <select value={state} onChange={(e) => setState(e.target.value)}>
            <option value="">any</option>
            {STATES.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </label>
        <label className="inline">
          <span>Trigger</span>
          <select value={trigger} onChange={(e) => setTrigger(e.target.value)}>
            <option value="">any</option>
            {TRIGGERS.map((t) => <option key={t} value={t}>{t}</option>)}
          </select>
        </label>
        {runs.rows && <span className="muted">{runs.count} run{runs.count === 1 ? "" : "s"}</span>}
      </div>
      <ErrorBanner error={pipelines.error} />
      <ResourceTable list={runs} columns={columns} rowKey={(run) => run.id} className="runs-table"
        rowAttributes={(run) => ({ "data-run-id": run.id })} loadingText="Loading runs" noun="runs"
        empty={filtered
          ? <p>No runs match these filters. <button type="button" className="link-button"
            onClick={() => { setState(""); setTrigger(""); }}>Clear filters</button></p>
          : <p>No runs yet. <span className="hint">Start one from a pipeline: open it from{" "}
            <Link to={pipelineId === undefined ? "/pipelines" : `/pipelines/${pipelineId}`}>
              {pipelineId === undefined ? "Pipelines" : "its editor"}</Link> and press Run.</span></p>} />
    </section>
  );
}
