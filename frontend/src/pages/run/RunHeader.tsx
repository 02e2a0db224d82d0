// The run's title, facts and actions (cancel while it runs, retry once it has finished).
import { useState } from "react";
import { api } from "../../api/client";
import { ErrorBanner, PageHeader, StateBadge } from "../../components/ui";
import { Link, navigate } from "../../router";
import { TERMINAL_RUN_STATES, type PipelineRun, type RunSnapshot } from "../../types";
import type { StreamStatus } from "./hooks";
import { StreamIndicator } from "./StreamIndicator";
import { runParameters, showsLogicalDate } from "./facts";
import { duration, formatTime } from "./time";

interface Props {
  /** As GET /pipeline_run/{id} or the run's event stream gives it. */
  run: RunSnapshot["run"];
  pipelineName: string | undefined;
  /** The pipeline's parameters (their defaults); undefined while the pipeline loads. */
  defaults: Record<string, unknown> | undefined;
  /** Who started the run, as shown ("ann", "you"). */
  startedByName: string;
  onlyTaskName: string | undefined;
  canWrite: boolean;
  stream: StreamStatus;
  now: number;
}

export function RunHeader({ run, pipelineName, defaults, startedByName, onlyTaskName, canWrite, stream, now }: Props) {
  const finished = TERMINAL_RUN_STATES.includes(run.state);
  const parameters = runParameters(defaults, run.parameters);
  const [busy, setBusy] = useState<"cancel" | "retry" | null>(null);
  const [cancelAsked, setCancelAsked] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const cancel = async () => {
    setBusy("cancel");
    setError(null);
    try {
      await api(`/api/v1/pipeline_run/${run.id}/cancel`, { method: "POST" });
      setCancelAsked(true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(null);
    }
  };

  const retry = async () => {
    setBusy("retry");
    setError(null);
    try {
      const created = await api<PipelineRun>(`/api/v1/pipeline_run/${run.id}/rerun`, { method: "POST" });
      navigate(`/runs/${created.id}`);
    } catch (err) {
      setError(err);
      setBusy(null);
    }
  };

  const title = (
    <span className="run-title">
      <Link to={`/pipelines/${run.pipeline_id}`}>{pipelineName ?? `pipeline ${run.pipeline_id}`}</Link>
      <span className="muted"> / </span>run #{run.id} <StateBadge state={run.state} />
    </span>
  );

  return (
    <>
      <PageHeader title={title}>
        <StreamIndicator status={stream} />
        <Link to={`/pipelines/${run.pipeline_id}/runs`} className="button">Run history</Link>
        {canWrite && !finished && (
          <button type="button" className="danger" onClick={() => void cancel()} disabled={busy !== null || cancelAsked}>
            {cancelAsked ? "Cancelling…" : "Cancel"}
          </button>
        )}
        {canWrite && finished && (
          <button type="button" className="primary" onClick={() => void retry()} disabled={busy !== null}
            title="A new run that keeps the succeeded tasks and runs the others">
            {busy === "retry" ? "Retrying…" : "Retry"}
          </button>
        )}
      </PageHeader>
      <ErrorBanner error={error} />
      <dl className="run-facts panel">
        <Fact label="Trigger">{run.trigger}{onlyTaskName && <> (only task <b>{onlyTaskName}</b>)</>}</Fact>
        {showsLogicalDate(run)
          ? <Fact label="Logical date">{formatTime(run.logical_date)}</Fact>
          : <Fact label="Started by">{startedByName}</Fact>}
        <Fact label="Created">{formatTime(run.created_at)}</Fact>
        <Fact label="Started">{formatTime(run.started_at)}</Fact>
        <Fact label="Finished">{formatTime(run.finished_at)}</Fact>
        <Fact label="Duration">{duration(run.started_at, run.finished_at, now)}</Fact>
        {run.rerun_of_id !== null && (
          <Fact label="Rerun of"><Link to={`/runs/${run.rerun_of_id}`}>run #{run.rerun_of_id}</Link></Fact>
        )}
        {parameters.length > 0 && (
          <Fact label="Parameters" wide>
            <ul className="run-parameters">
              {parameters.map((p) => (
                <li key={p.name} className={p.differs ? "differs" : undefined}
                  title={p.differs ? "set for this run (not the pipeline's default)" : "the pipeline's default"}>
                  <code>{p.name}={p.value}</code>{p.differs && <span className="muted"> (set for this run)</span>}
                </li>
              ))}
            </ul>
          </Fact>
        )}
        {run.reason && <Fact label="Reason" wide>{run.reason}</Fact>}
      </dl>
    </>
  );
}

function Fact({ label, wide, children }: { label: string; wide?: boolean; children: React.ReactNode }) {
  return (
    <div className={wide ? "fact wide" : "fact"}>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}
