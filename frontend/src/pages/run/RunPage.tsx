// The run view: the run's header and actions, its DAG with live task states, and the selected task's panel.
import { useMemo, useState } from "react";
import { api } from "../../api/client";
import { ErrorBanner, Loading } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import { Link } from "../../router";
import { useSession } from "../../session";
import { TERMINAL_RUN_STATES, type MemberList, type PipelineGraph, type PipelineRun, type RunSnapshot } from "../../types";
import { latestAttempts } from "./attempts";
import { startedBy } from "./facts";
import { useEventStream, useNow } from "./hooks";
import { RunGraph } from "./RunGraph";
import { RunHeader } from "./RunHeader";
import { TaskPanel } from "./TaskPanel";
import "./run.css";

export default function RunPage({ runId }: { runId: number }) {
  // A plain GET first: a missing run is a clear 404 message, not a stream that keeps reconnecting.
  const first = useAsync(() => api<PipelineRun>(`/api/v1/pipeline_run/${runId}`), [runId]);
  if (first.error) {
    return (
      <section>
        <ErrorBanner error={first.error} />
        <Link to="/runs">All runs</Link>
      </section>
    );
  }
  if (!first.data) return <Loading what="Loading run" />;
  return <RunView first={first.data} />;
}

function RunView({ first }: { first: PipelineRun }) {
  const { me } = useSession();
  const [snapshot, setSnapshot] = useState<RunSnapshot | null>(null);
  const stream = useEventStream(`/api/v1/pipeline_run/${first.id}/events`, {
    run: (data) => setSnapshot(data as RunSnapshot),
  });
  const run = snapshot?.run ?? first;
  const taskRuns = useMemo(() => snapshot?.task_runs ?? [], [snapshot]);
  const latest = useMemo(() => latestAttempts(taskRuns), [taskRuns]);
  const graph = useAsync(() => api<PipelineGraph>(`/api/v1/pipeline/${first.pipeline_id}/graph`),
    [first.pipeline_id]);
  // The members name who started the run (a viewer may read them; the users list is the admins').
  const members = useAsync(() => api<MemberList>(`/api/v1/project/${first.project_id}/members`),
    [first.project_id]);
  const finished = TERMINAL_RUN_STATES.includes(run.state);
  const now = useNow(!finished);
  const [selectedTaskId, setSelectedTaskId] = useState<number | null>(null);

  const role = me?.projects.find((p) => p.id === run.project_id)?.role;
  const canWrite = role ? role !== "viewer" : Boolean(me?.is_admin);
  const tasks = graph.data?.tasks ?? [];
  const selectedTask = tasks.find((t) => t.id === selectedTaskId);

  return (
    <section className="run-page">
      <RunHeader run={run} pipelineName={graph.data?.pipeline.name} canWrite={canWrite} stream={stream} now={now}
        defaults={graph.data?.pipeline.parameters as Record<string, unknown> | undefined}
        startedByName={startedBy(run.created_by_id, members.data?.items, me?.id)}
        onlyTaskName={tasks.find((t) => t.id === run.only_task_id)?.name} />
      <ErrorBanner error={graph.error} />
      {graph.loading && !graph.data && <Loading what="Loading graph" />}
      {graph.data && (tasks.length === 0
        ? <p className="muted">This pipeline has no tasks.</p>
        : <RunGraph tasks={tasks} edges={graph.data.edges} latest={latest} onlyTaskId={run.only_task_id}
          selectedTaskId={selectedTaskId} onSelect={setSelectedTaskId} now={now} />)}
      {selectedTask
        ? <TaskPanel key={selectedTask.id} task={selectedTask} taskRuns={taskRuns} canWrite={canWrite} now={now}
          onClose={() => setSelectedTaskId(null)} />
        : graph.data && tasks.length > 0 && <p className="hint">Select a task in the graph to see its logs, metrics
          and manifests.</p>}
    </section>
  );
}
