// The selected project's experiments (/ui/experiments): each with its pipeline, state (and why it ended),
// the best objective so far and trials ended against the budget; New experiment opens the create dialog;
// a name opens the experiment (ExperimentPage.tsx). The list and its trials are read again every 2 s while
// one runs.
import { useState } from "react";
import { listAll } from "../../api/client";
import { ResourceTable, type Column } from "../../components/ResourceTable";
import { PageHeader, StateBadge, formatTime } from "../../components/ui";
import { useResourceList } from "../../hooks/useResourceList";
import { useAsync } from "../../lib/useAsync";
import { Link, navigate } from "../../router";
import { useProject } from "../../session";
import type { Experiment, Pipeline, Trial } from "../../types";
import { bestTrial, EXPERIMENT_POLL, formatObjective, progress } from "./logic";
import { NewExperimentDialog } from "./NewExperimentDialog";
import "./experiments.css";

export default function ExperimentsPage() {
  const project = useProject();
  const experiments = useResourceList<Experiment>("experiment", { project_id: project.id, order: "-id" },
    { poll: EXPERIMENT_POLL });
  // The trials of the experiments listed, read again with them (readAt changes at every answer).
  const trials = useAsync(() => listAll<Trial>("trial", { project_id: project.id }), [project.id, experiments.readAt]);
  const pipelines = useAsync(() => listAll<Pipeline>("pipeline", { project_id: project.id }), [project.id]);
  const [creating, setCreating] = useState(false);
  const writer = project.role === "developer" || project.role === "owner";
  const byExperiment = (id: number) => (trials.data ?? []).filter((t) => t.experiment_id === id);
  const pipelineName = (id: number) => pipelines.data?.find((p) => p.id === id)?.name ?? `#${id}`;

  const columns: Column<Experiment>[] = [
    { header: "Name", cell: (e) => <Link to={`/experiments/${e.id}`}>{e.name}</Link> },
    { header: "Pipeline", cell: (e) => pipelineName(e.pipeline_id) },
    {
      header: "State", className: "state-cell", cell: (e) => (
        <><StateBadge state={e.state} />{e.reason && <span className="reason">{e.reason}</span>}</>
      ),
    },
    {
      header: "Best", cell: (e) => {
        const best = bestTrial(e, byExperiment(e.id));
        const objective = e.objectives[0];
        return best ? <span>{objective.metric} <strong>{formatObjective(best.values?.[0])}</strong></span>
          : <span className="muted">—</span>;
      },
    },
    {
      header: "Trials", cell: (e) => {
        const { done, total } = progress(e, byExperiment(e.id));
        return <span data-testid={`progress-${e.name}`}>{done} / {total}</span>;
      },
    },
    { header: "Algorithm", className: "muted", cell: (e) => e.algorithm + (e.early_stopping ? `, ${e.early_stopping.kind} pruning` : "") },
    { header: "Created", className: "muted", cell: (e) => formatTime(e.created_at) },
  ];

  return (
    <section className="experiments-page" aria-labelledby="experiments-title">
      <PageHeader title={<span id="experiments-title">Experiments</span>}>
        <button type="button" className="primary" disabled={!writer}
          title={writer ? undefined : "Viewers cannot create experiments"}
          onClick={() => setCreating(true)}>New experiment</button>
      </PageHeader>
      <p className="muted intro">Hyperparameter search over a pipeline's parameters: each trial is a run of the
        pipeline with the values the algorithm asks for; pruning stops trials whose curve falls behind.</p>
      <ResourceTable list={experiments} columns={columns} rowKey={(e) => e.id} className="experiment-table"
        rowAttributes={(e) => ({ "data-experiment": e.name, "data-state": e.state })}
        loadingText="Loading experiments" noun="experiments"
        empty={<div className="panel muted">No experiments in {project.name} yet.</div>} />
      {creating && (
        <NewExperimentDialog projectId={project.id} pipelines={pipelines.data ?? []} onClose={() => setCreating(false)}
          onCreated={(e) => navigate(`/experiments/${e.id}`)} />
      )}
    </section>
  );
}
