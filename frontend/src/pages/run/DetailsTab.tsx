// An attempt's facts, the list of attempts, and "run this task alone" (a debug run).
import { useState } from "react";
import { api } from "../../api/client";
import { ErrorBanner, StateBadge } from "../../components/ui";
import { navigate } from "../../router";
import type { AttemptSummary, RunId, Task } from "../../types";
import { restartedBefore, waitingReason } from "./attempts";
import { duration, formatTime } from "./time";

interface Props {
  task: Task;
  attempts: AttemptSummary[];
  attempt: AttemptSummary | undefined;
  canWrite: boolean;
  now: number;
  onSelectAttempt: (id: number) => void;
}

export function DetailsTab({ task, attempts, attempt, canWrite, now, onSelectAttempt }: Props) {
  const [starting, setStarting] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const runAlone = async () => {
    setStarting(true);
    setError(null);
    try {
      const { run_id } = await api<RunId>(`/api/v1/task/${task.id}/run`, { method: "POST" });
      navigate(`/runs/${run_id}`);
    } catch (err) {
      setError(err);
      setStarting(false);
    }
  };

  return (
    <div className="details-tab">
      {attempt ? (
        <dl className="run-facts">
          <div className="fact"><dt>State</dt><dd><StateBadge state={attempt.state} /></dd></div>
          <div className="fact"><dt>Attempt</dt><dd>{attempt.attempt} of {task.retries + 1}</dd></div>
          <div className="fact"><dt>Exit code</dt><dd>{attempt.exit_code ?? "—"}</dd></div>
          <div className="fact"><dt>Backend</dt><dd>{attempt.backend ?? "—"}</dd></div>
          <div className="fact"><dt>Created</dt><dd>{formatTime(attempt.created_at)}</dd></div>
          <div className="fact"><dt>Submitted</dt><dd>{formatTime(attempt.submitted_at)}</dd></div>
          <div className="fact"><dt>Started</dt><dd>{formatTime(attempt.started_at)}</dd></div>
          <div className="fact"><dt>Finished</dt><dd>{formatTime(attempt.finished_at)}</dd></div>
          <div className="fact"><dt>Duration</dt><dd>{duration(attempt.started_at, attempt.finished_at, now)}</dd></div>
          {attempt.preemptions > 0 && (
            <div className="fact"><dt>Preempted</dt><dd>{attempt.preemptions} {attempt.preemptions === 1 ? "time" : "times"} before</dd></div>
          )}
          {restartedBefore(attempts, attempt) && (
            <div className="fact wide"><dt>Restarted</dt><dd>{restartedBefore(attempts, attempt)}</dd></div>
          )}
          {attempt.reason && (
            <div className="fact wide"><dt>Reason</dt><dd>{waitingReason(attempt)}</dd></div>
          )}
        </dl>
      ) : <p className="muted">Not started yet: this task has no attempt in this run.</p>}

      {attempts.length > 0 && (
        <table className="data attempts">
          <caption>Attempts</caption>
          <thead>
            <tr><th>Attempt</th><th>State</th><th>Started</th><th>Duration</th><th>Exit code</th><th aria-label="Actions" /></tr>
          </thead>
          <tbody>
            {attempts.map((a) => (
              <tr key={a.id} aria-current={a.id === attempt?.id ? "true" : undefined}>
                <td>{a.attempt}</td>
                <td><StateBadge state={a.state} /></td>
                <td>{formatTime(a.started_at)}</td>
                <td>{duration(a.started_at, a.finished_at, now)}</td>
                <td>{a.exit_code ?? "—"}</td>
                <td>
                  {a.id === attempt?.id ? <span className="muted">shown</span>
                    : <button type="button" className="link-button" onClick={() => onSelectAttempt(a.id)}>
                      Show attempt {a.attempt}
                    </button>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      {canWrite && (
        <div className="run-alone">
          <button type="button" onClick={() => void runAlone()} disabled={starting}>
            {starting ? "Starting…" : "Run this task alone"}
          </button>
          <span className="hint">A debug run of only this task; its upstream tasks are not run.</span>
          <ErrorBanner error={error} />
        </div>
      )}
    </div>
  );
}
