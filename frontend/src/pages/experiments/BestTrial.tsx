// The best trial so far: its objective and parameters, its run, the model versions its run registered
// (a pipeline's register step does that in trials too), and registering its model as a version of a
// model of one's choosing (the registry's register-from-run: the version records the trial's run, its
// parameters and metrics); each version deploys through the Models page's Deploy dialog.
import { useState, type FormEvent } from "react";
import { api, listAll } from "../../api/client";
import { Dialog, SubmitActions } from "../../components/Dialog";
import { Field, UnplacedError, useSubmit } from "../../components/Field";
import { useAsync } from "../../lib/useAsync";
import { Link, navigate } from "../../router";
import { useProject } from "../../session";
import type { Experiment, ModelStage, ModelVersion, TaskRun, Trial } from "../../types";
import { formatObjective, formatParameters } from "./logic";

const STAGES: ModelStage[] = ["none", "staging", "production"];

export function BestTrial({ experiment, trial }: { experiment: Experiment; trial: Trial }) {
  const project = useProject();
  const runId = trial.pipeline_run_id;
  const [registering, setRegistering] = useState(false);
  const versions = useAsync(() => (runId === null ? Promise.resolve([] as ModelVersion[])
    : listAll<ModelVersion>("model_version", { project_id: project.id })
      .then((all) => all.filter((v) => v.run_id === runId))), [project.id, runId]);
  const writer = project.role === "developer" || project.role === "owner";
  const mine = versions.data ?? [];
  return (
    <div className="panel best-trial" data-trial={trial.number}>
      <h2>Best trial: #{trial.number}</h2>
      <p>
        {experiment.objectives[0].metric} <strong data-testid="best-value">{formatObjective(trial.values?.[0])}</strong>
        {" "}with {formatParameters(trial.parameters)}.
        {runId !== null && <> <Link to={`/runs/${runId}`}>Open its run #{runId}</Link></>}
      </p>
      {mine.length > 0 && (
        <ul className="best-versions" aria-label="Model versions of the best trial">
          {mine.map((v) => (
            <li key={v.id} data-version={`${v.name}:${v.version}`}>
              <Link to="/models">{v.name} v{v.version}</Link> <span className="muted">({v.stage})</span>{" "}
              <button type="button" disabled={!writer} aria-label={`Deploy ${v.name} v${v.version}`}
                onClick={() => navigate(`/models?deploy=${v.id}`)}>Deploy</button>
            </li>
          ))}
        </ul>
      )}
      <button type="button" className="primary" disabled={!writer || runId === null}
        title={writer ? undefined : "Viewers cannot register models"}
        onClick={() => setRegistering(true)}>Register model</button>
      {registering && runId !== null && (
        <RegisterDialog experiment={experiment} trial={trial} runId={runId} registered={mine}
          onClose={() => setRegistering(false)} onDone={() => { setRegistering(false); versions.reload(); }} />
      )}
    </div>
  );
}

const FIELDS = ["name", "uri", "stage", "task_run_id"];

function RegisterDialog({ experiment, trial, runId, registered, onClose, onDone }: {
  experiment: Experiment; trial: Trial; runId: number; registered: ModelVersion[];
  onClose: () => void; onDone: () => void;
}) {
  const project = useProject();
  const from = registered[0];
  const [name, setName] = useState(`${experiment.name}-best`.slice(0, 63));
  const [uri, setUri] = useState(from?.uri ?? "");
  const [stage, setStage] = useState<ModelStage>("staging");
  const { busy, error, run, reasonFor } = useSubmit();
  // The task the version comes from: the one that registered it before, else the run's last task.
  const tasks = useAsync(() => listAll<TaskRun>("task_run", { pipeline_run_id: runId }), [runId]);
  const taskRunId = from?.task_run_id ?? (Math.max(0, ...(tasks.data ?? []).map((t) => t.id)) || null);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void run(async () => {
      await api<ModelVersion>("/api/v1/model_version/", { method: "POST", body: {
        project_id: project.id, name, uri, stage, task_run_id: taskRunId,
        ...(from ? { framework: from.framework, signature: from.signature } : {}),
        description: `The best trial (#${trial.number}) of experiment ${experiment.name}.`,
      } });
      onDone();
    });
  };
  return (
    <Dialog title={`Register the model of trial #${trial.number}`} onClose={onClose}>
      <form onSubmit={submit} noValidate className="register-form">
        <Field label="Model name" required error={reasonFor("name")}
          hint="A new model, or the next version of an existing one.">
          {(w) => <input {...w} name="name" autoComplete="off" spellCheck={false} value={name}
            onChange={(e) => setName(e.target.value)} />}
        </Field>
        <Field label="Model file" required error={reasonFor("uri")}
          hint={from ? `The file the trial's run registered as ${from.name} v${from.version}.`
            : "Where the trial's run wrote its model (a path in the project's data folder, s3://…)."}>
          {(w) => <input {...w} name="uri" autoComplete="off" spellCheck={false} value={uri}
            onChange={(e) => setUri(e.target.value)} />}
        </Field>
        <Field label="Stage" error={reasonFor("stage")}>
          {(w) => (
            <select {...w} name="stage" value={stage} onChange={(e) => setStage(e.target.value as ModelStage)}>
              {STAGES.map((s) => <option key={s} value={s}>{s}</option>)}
            </select>
          )}
        </Field>
        <UnplacedError error={error} fields={FIELDS} />
        <SubmitActions onCancel={onClose} busy={busy} label="Register" busyLabel="Registering…" />
      </form>
    </Dialog>
  );
}
