// Task attempts as the run's event stream sends them, grouped per task.
import type { AttemptSummary, TaskState } from "../../types";

/** The latest attempt (highest attempt number) of each task, by task id. */
export function latestAttempts(taskRuns: AttemptSummary[]): Map<number, AttemptSummary> {
  const latest = new Map<number, AttemptSummary>();
  for (const run of taskRuns) {
    const seen = latest.get(run.task_id);
    if (!seen || run.attempt > seen.attempt) latest.set(run.task_id, run);
  }
  return latest;
}

/** One task's attempts, oldest first. */
export function attemptsOf(taskRuns: AttemptSummary[], taskId: number): AttemptSummary[] {
  return taskRuns.filter((r) => r.task_id === taskId).sort((a, b) => a.attempt - b.attempt);
}

const ACTIVE: TaskState[] = ["queued", "pending", "waiting", "running"];

export function isActive(state: TaskState): boolean {
  return ACTIVE.includes(state);
}

/** The reason, and while the attempt waits for its resource group, its place in the queue. */
export function waitingReason(attempt: AttemptSummary): string {
  const position = attempt.state === "queued" ? attempt.queue_position : null;
  return position ? `${attempt.reason} (position ${position})` : attempt.reason ?? "";
}

// Why an attempt ended when the machine, not its program, ended it (TaskRun.cause; docs/failures.md).
const LOSSES = ["replica-lost", "evicted", "node-lost"];

/** Why this attempt exists when its task's previous attempt was preempted or lost a replica (a killed
 * process, an evicted pod, a node gone): that attempt's reason ("preempted ... for project X's quota ...;
 * the task resumes from epoch 6 ...", "worker-0 evicted from node n: the whole gang restarts from its
 * checkpoint ..."), else null. */
export function restartedBefore(attempts: AttemptSummary[], attempt: AttemptSummary): string | null {
  const previous = attempts.find((a) => a.task_id === attempt.task_id && a.attempt === attempt.attempt - 1);
  if (!previous) return null;
  const preempted = attempt.preemptions > previous.preemptions;
  const lost = previous.cause !== null && LOSSES.includes(previous.cause);
  return preempted || lost ? previous.reason : null;
}
