// Shapes of the run view's streams and graph (the REST resources are in src/types.ts).
import type { Edge, LogLine, Pipeline, PipelineRun, Task, TaskRun } from "../../types";

/** A task run as the run's `run` event carries it: no manifests. */
export type AttemptSummary = Pick<TaskRun, "id" | "task_id" | "attempt" | "state" | "reason" | "exit_code" |
  "backend" | "created_at" | "submitted_at" | "started_at" | "finished_at">;

/** Data of a `run` event from /pipeline_run/<id>/events. */
export interface RunSnapshot {
  run: PipelineRun;
  task_runs: AttemptSummary[];
}

/** Data of a `lines` event from /task_run/<id>/log_stream. */
export interface LogBatch {
  state: string;
  items: LogLine[];
}

export interface PipelineGraph {
  pipeline: Pipeline;
  tasks: Task[];
  edges: Edge[];
}
