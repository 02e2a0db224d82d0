// One experiment (/ui/experiments/:id): its settings and state, cancel, the best trial (its run, its model:
// register, deploy: BestTrial.tsx), the live trials table (parameters, objective, state with "pruned at
// step N", duration, the trial's run) and the charts: optimisation history, parallel coordinates,
// intermediate values per trial, parameter importances. Trials are read every second while one runs.
import { useState } from "react";
import { api } from "../../api/client";
import { Chart } from "../../components/charts/Chart";
import { ConfirmDialog } from "../../components/Dialog";
import { ResourceTable, type Column } from "../../components/ResourceTable";
import { ErrorBanner, Loading, PageHeader, StateBadge, formatDuration } from "../../components/ui";
import { useResourceList } from "../../hooks/useResourceList";
import { useAsync } from "../../lib/useAsync";
import { Link } from "../../router";
import { useProject } from "../../session";
import type { Experiment, ParamImportances, Pipeline, Trial } from "../../types";
import { BestTrial } from "./BestTrial";
import { historyOption, importancesOption, intermediateOption, parallelCoordinatesOption } from "./charts";
import { bestTrial, formatObjective, formatParameter, progress, TRIAL_POLL, trialStateLabel } from "./logic";
import "./experiments.css";

const TABS = [
  { id: "history", label: "Optimisation history" },
  { id: "parallel", label: "Parallel coordinates" },
  { id: "intermediate", label: "Intermediate values" },
  { id: "importances", label: "Parameter importances" },
] as const;
type Tab = (typeof TABS)[number]["id"];

export default function ExperimentPage({ experimentId }: { experimentId: number }) {
  const project = useProject();
  const trials = useResourceList<Trial>("trial", { experiment_id: experimentId, order: "number" }, { poll: TRIAL_POLL });
  // Read again with every read of the trials: its state moves with them.
  const experiment = useAsync(() => api<Experiment>(`/api/v1/experiment/${experimentId}`), [experimentId, trials.readAt]);
  const e = experiment.data;
  const pipeline = useAsync(() => (e ? api<Pipeline>(`/api/v1/pipeline/${e.pipeline_id}`) : Promise.resolve(null)),
    [e?.pipeline_id]);
  const [cancelling, setCancelling] = useState(false);
  const [cancelError, setCancelError] = useState<unknown>(null);
  const writer = project.role === "developer" || project.role === "owner";
  if (!e) return experiment.error ? <ErrorBanner error={experiment.error} /> : <Loading what="Loading the experiment" />;

  const rows = trials.rows ?? [];
  const best = bestTrial(e, rows);
  const { done, total } = progress(e, rows);
  const objective = e.objectives[0];
  const running = e.state === "running" || e.state === "created";
  const cancel = async () => {
    setCancelError(null);
    try {
      await api(`/api/v1/experiment/${e.id}/cancel`, { method: "POST" });
      setCancelling(false);
      experiment.reload();
    } catch (err) {
      setCancelError(err);
    }
  };

  const columns: Column<Trial>[] = [
    { header: "Trial", cell: (t) => <strong>#{t.number}</strong> },
    ...e.search_space.map((p): Column<Trial> => ({
      header: p.name, className: "num", cell: (t) => formatParameter(t.parameters[p.name]),
    })),
    { header: objective.metric, className: "num", cell: (t) => formatObjective(t.values?.[0]) },
    {
      header: "State", className: "state-cell", cell: (t) => (
        <><span className={`state state-${t.state}`} data-state={t.state}>{trialStateLabel(t)}</span>
          {t.reason && t.state !== "pruned" && <span className="reason">{t.reason}</span>}</>
      ),
    },
    { header: "Duration", className: "muted", cell: (t) => formatDuration(t.created_at, t.finished_at) },
    { header: "Run", cell: (t) => (t.pipeline_run_id !== null
      ? <Link to={`/runs/${t.pipeline_run_id}`}>run #{t.pipeline_run_id}</Link>
      : <span className="muted">—</span>) },
  ];

  return (
    <section className="experiment-page" aria-labelledby="experiment-title" data-state={e.state}>
      <PageHeader title={<span id="experiment-title">{e.name}</span>}>
        <Link to="/experiments">All experiments</Link>
        <button type="button" className="danger" disabled={!writer || !running}
          title={!writer ? "Viewers cannot cancel" : running ? undefined : "The experiment has ended"}
          onClick={() => setCancelling(true)}>Cancel experiment</button>
      </PageHeader>
      <ErrorBanner error={experiment.error} />
      <div className="panel experiment-facts">
        <dl>
          <div><dt>State</dt><dd><StateBadge state={e.state} />{e.reason && <span className="reason">{e.reason}</span>}</dd></div>
          <div><dt>Pipeline</dt><dd>{pipeline.data ? <Link to={`/pipelines/${e.pipeline_id}`}>{pipeline.data.name}</Link>
            : `#${e.pipeline_id}`}</dd></div>
          <div><dt>Objective</dt><dd>{objective.direction} {objective.metric}</dd></div>
          <div><dt>Algorithm</dt><dd>{e.algorithm}{e.seed !== null ? ` (seed ${e.seed})` : ""}</dd></div>
          <div><dt>Early stopping</dt><dd>{e.early_stopping ? e.early_stopping.kind.replace("_", " ") : "none"}</dd></div>
          <div><dt>Trials</dt><dd data-testid="trials-done">{done} / {total}</dd></div>
          <div><dt>Budget</dt><dd>{e.parallel_trials} at once, {e.max_failed_trials} may fail
            {e.time_limit_seconds ? `, ${e.time_limit_seconds} s` : ""}</dd></div>
        </dl>
      </div>
      {best && <BestTrial experiment={e} trial={best} />}
      <h2>Trials</h2>
      <ResourceTable list={trials} columns={columns} rowKey={(t) => t.id} className="trial-table"
        rowAttributes={(t) => ({ "data-trial": t.number, "data-state": t.state })}
        loadingText="Loading trials" noun="trials"
        empty={<div className="panel muted">{e.state === "created" ? "Not started yet." : "No trial yet."}</div>} />
      {rows.length > 0 && <Charts experiment={e} trials={rows} />}
      {cancelling && (
        <ConfirmDialog title={`Cancel ${e.name}?`} confirmLabel="Cancel experiment" onConfirm={cancel}
          onClose={() => setCancelling(false)} error={<ErrorBanner error={cancelError} />}>
          <p>The experiment ends and every running trial's run is cancelled. Finished trials stay.</p>
        </ConfirmDialog>
      )}
    </section>
  );
}

function Charts({ experiment, trials }: { experiment: Experiment; trials: Trial[] }) {
  const [tab, setTab] = useState<Tab>("history");
  const metric = experiment.objectives[0].metric;
  return (
    <div className="panel experiment-charts">
      <div role="tablist" aria-label="Charts">
        {TABS.map((t) => (
          <button key={t.id} type="button" role="tab" id={`chart-tab-${t.id}`} aria-selected={tab === t.id}
            aria-controls="chart-panel" onClick={() => setTab(t.id)}>{t.label}</button>
        ))}
      </div>
      <div role="tabpanel" id="chart-panel" aria-labelledby={`chart-tab-${tab}`}>
        {tab === "history" && <Chart height={280} label={`${metric} per trial and the best so far`}
          option={historyOption(experiment, trials)} />}
        {tab === "parallel" && <Chart height={320} label="Parallel coordinates of the trials' parameters and objective"
          option={parallelCoordinatesOption(experiment, trials)} />}
        {tab === "intermediate" && <Chart height={300} label={`${metric} per step, one line per trial`}
          option={intermediateOption(experiment, trials)} />}
        {tab === "importances" && <Importances experiment={experiment} trials={trials} />}
      </div>
    </div>
  );
}

function Importances({ experiment, trials }: { experiment: Experiment; trials: Trial[] }) {
  // Computed on the server (fANOVA, a fraction of a second): read again only when a trial completes.
  const complete = trials.filter((t) => t.state === "complete").length;
  const answer = useAsync(() => api<ParamImportances>(`/api/v1/experiment/${experiment.id}/importances`),
    [experiment.id, complete]);
  if (answer.error) return <ErrorBanner error={answer.error} />;
  if (!answer.data) return <Loading what="Computing importances" />;
  if (answer.data.reason) return <p className="muted" data-testid="importances-reason">{answer.data.reason}</p>;
  return <Chart height={60 + 36 * answer.data.importances.length} label="Importance of each parameter to the objective"
    option={importancesOption(answer.data)} />;
}
