// Create an experiment: pick a pipeline and its declared parameters become the rows of the search space
// (each searched or not, as a float, log float, int or categorical, with bounds or choices), the objective
// (a metric the tasks report, and its direction), the algorithm and seed, the budget and the pruner.
// The form checks what the server checks, with the same field names; the server's reasons show at the
// field they name (`search_space[1].high` at that row), anything else under the form.
import { useState, type FormEvent } from "react";
import { api } from "../../api/client";
import { Dialog, SubmitActions } from "../../components/Dialog";
import { Field, UnplacedError, useSubmit } from "../../components/Field";
import type { Experiment, Pipeline } from "../../types";
import {
  ALGORITHMS, check, emptyForm, placedFields, ROW_KINDS, rowError, rowsFromParameters, searched, toBody,
  type ExperimentForm, type PrunerKind, type RowKind, type SpaceRow,
} from "./logic";

export function NewExperimentDialog({ projectId, pipelines, onClose, onCreated }: {
  projectId: number;
  pipelines: Pipeline[];
  onClose: () => void;
  onCreated: (experiment: Experiment) => void;
}) {
  const [form, setForm] = useState<ExperimentForm>(emptyForm);
  const [checked, setChecked] = useState(false);
  const { busy, error, run, reasonFor } = useSubmit();
  const problems = check(form);
  const shown = (field: string) => (checked ? problems[field] : undefined) ?? reasonFor(field);
  const set = <K extends keyof ExperimentForm>(key: K, value: ExperimentForm[K]) =>
    setForm((old) => ({ ...old, [key]: value }));
  const setRow = (index: number, changes: Partial<SpaceRow>) =>
    setForm((old) => ({ ...old, rows: old.rows.map((r, i) => (i === index ? { ...r, ...changes } : r)) }));
  const pickPipeline = (id: string) => {
    const pipeline = pipelines.find((p) => p.id === Number(id));
    setForm((old) => ({ ...old, pipelineId: pipeline ? pipeline.id : null,
      rows: pipeline ? rowsFromParameters(pipeline.parameters as Record<string, unknown>) : [] }));
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    setChecked(true);
    if (Object.keys(problems).length > 0) return;
    void run(async () => {
      onCreated(await api<Experiment>("/api/v1/experiment/", { method: "POST", body: toBody(form) }));
    });
  };
  const usable = pipelines.filter((p) => p.project_id === projectId);
  const included = searched(form.rows);

  return (
    <Dialog title="New experiment" onClose={onClose} wide>
      <form onSubmit={submit} noValidate className="experiment-form">
        <div className="field-row two">
          <Field label="Name" required error={shown("name")} hint="Lower-case letters, digits and -.">
            {(w) => <input {...w} name="name" autoComplete="off" spellCheck={false} value={form.name}
              onChange={(e) => set("name", e.target.value)} />}
          </Field>
          <Field label="Pipeline" required error={shown("pipeline_id")}
            hint="Each trial is a run of it; its serving steps are left out.">
            {(w) => (
              <select {...w} name="pipeline" value={form.pipelineId ?? ""} onChange={(e) => pickPipeline(e.target.value)}>
                <option value="">Choose…</option>
                {usable.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
              </select>
            )}
          </Field>
        </div>

        <fieldset className="search-space">
          <legend>Search space</legend>
          {form.pipelineId === null ? <p className="muted">Pick a pipeline: its parameters become the rows here.</p>
            : form.rows.length === 0 ? <p className="muted">This pipeline declares no parameters to search.</p> : (
              <table className="data space-table">
                <thead>
                  <tr><th scope="col">Search</th><th scope="col">Parameter</th><th scope="col">Type</th>
                    <th scope="col">Low</th><th scope="col">High</th><th scope="col">Step or choices</th></tr>
                </thead>
                <tbody>
                  {form.rows.map((row, i) => {
                    const at = included.indexOf(row);
                    const rowProblem = at < 0 ? undefined : rowError(shown, at);
                    const bounded = row.kind !== "categorical";
                    return (
                      <tr key={row.name} data-parameter={row.name}>
                        <td><input type="checkbox" aria-label={`Search ${row.name}`} checked={row.include}
                          onChange={(e) => setRow(i, { include: e.target.checked })} /></td>
                        <th scope="row"><code>{row.name}</code>
                          {rowProblem && <span className="field-error" role="alert">{rowProblem}</span>}</th>
                        <td>
                          <select aria-label={`Type of ${row.name}`} value={row.kind} disabled={!row.include}
                            onChange={(e) => setRow(i, { kind: e.target.value as RowKind })}>
                            {ROW_KINDS.map((k) => <option key={k.value} value={k.value}>{k.label}</option>)}
                          </select>
                        </td>
                        <td><input aria-label={`Low of ${row.name}`} value={row.low} disabled={!row.include || !bounded}
                          inputMode="decimal" onChange={(e) => setRow(i, { low: e.target.value })} /></td>
                        <td><input aria-label={`High of ${row.name}`} value={row.high} disabled={!row.include || !bounded}
                          inputMode="decimal" onChange={(e) => setRow(i, { high: e.target.value })} /></td>
                        <td>
                          {bounded ? (
                            <input aria-label={`Step of ${row.name}`} value={row.step} placeholder="any"
                              disabled={!row.include || row.kind === "logfloat"} inputMode="decimal"
                              onChange={(e) => setRow(i, { step: e.target.value })} />
                          ) : (
                            <input aria-label={`Choices of ${row.name}`} value={row.choices} placeholder="a, b, c"
                              disabled={!row.include} onChange={(e) => setRow(i, { choices: e.target.value })} />
                          )}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            )}
          {shown("search_space") && <p className="field-error" role="alert">{shown("search_space")}</p>}
        </fieldset>

        <div className="field-row three">
          <Field label="Objective metric" required error={shown("objectives[0].metric") ?? shown("objectives")}
            hint="A metric the tasks report (metrics.jsonl), e.g. accuracy.">
            {(w) => <input {...w} name="metric" autoComplete="off" spellCheck={false} value={form.metric}
              onChange={(e) => set("metric", e.target.value)} />}
          </Field>
          <Field label="Direction" error={shown("objectives[0].direction")}>
            {(w) => (
              <select {...w} name="direction" value={form.direction}
                onChange={(e) => set("direction", e.target.value as ExperimentForm["direction"])}>
                <option value="maximize">maximize</option>
                <option value="minimize">minimize</option>
              </select>
            )}
          </Field>
          <Field label="Algorithm" error={shown("algorithm")}>
            {(w) => (
              <select {...w} name="algorithm" value={form.algorithm}
                onChange={(e) => set("algorithm", e.target.value as ExperimentForm["algorithm"])}>
                {ALGORITHMS.map((a) => <option key={a} value={a}>{a}</option>)}
              </select>
            )}
          </Field>
        </div>

        <fieldset>
          <legend>Budget</legend>
          <div className="field-row five">
            <Field label="Max trials" error={shown("max_trials")}>
              {(w) => <input {...w} name="max_trials" inputMode="numeric" value={form.maxTrials}
                onChange={(e) => set("maxTrials", e.target.value)} />}
            </Field>
            <Field label="Parallel trials" error={shown("parallel_trials")}>
              {(w) => <input {...w} name="parallel_trials" inputMode="numeric" value={form.parallelTrials}
                onChange={(e) => set("parallelTrials", e.target.value)} />}
            </Field>
            <Field label="Max failed trials" error={shown("max_failed_trials")}>
              {(w) => <input {...w} name="max_failed_trials" inputMode="numeric" value={form.maxFailedTrials}
                onChange={(e) => set("maxFailedTrials", e.target.value)} />}
            </Field>
            <Field label="Time limit (seconds)" error={shown("time_limit_seconds")} hint="Optional.">
              {(w) => <input {...w} name="time_limit_seconds" inputMode="numeric" value={form.timeLimitSeconds}
                onChange={(e) => set("timeLimitSeconds", e.target.value)} />}
            </Field>
            <Field label="Seed" error={shown("seed")} hint="Optional: the same seed asks the same values.">
              {(w) => <input {...w} name="seed" inputMode="numeric" value={form.seed}
                onChange={(e) => set("seed", e.target.value)} />}
            </Field>
          </div>
        </fieldset>

        <fieldset>
          <legend>Early stopping</legend>
          <div className="field-row three">
            <Field label="Pruner" error={shown("early_stopping") ?? shown("early_stopping.kind")}
              hint="Stops a trial whose reported curve falls behind (a single objective only).">
              {(w) => (
                <select {...w} name="pruner" value={form.pruner} onChange={(e) => set("pruner", e.target.value as PrunerKind)}>
                  <option value="">none</option>
                  <option value="median">median</option>
                  <option value="successive_halving">successive halving</option>
                  <option value="hyperband">hyperband</option>
                </select>
              )}
            </Field>
            {form.pruner === "median" && (
              <>
                <Field label="Startup trials" error={shown("early_stopping.startup_trials")}
                  hint="Trials that finish before any is pruned.">
                  {(w) => <input {...w} name="startup_trials" inputMode="numeric" value={form.startupTrials}
                    onChange={(e) => set("startupTrials", e.target.value)} />}
                </Field>
                <Field label="Warm-up steps" error={shown("early_stopping.warmup_steps")}
                  hint="Steps a trial runs before it may be pruned.">
                  {(w) => <input {...w} name="warmup_steps" inputMode="numeric" value={form.warmupSteps}
                    onChange={(e) => set("warmupSteps", e.target.value)} />}
                </Field>
              </>
            )}
            {(form.pruner === "successive_halving" || form.pruner === "hyperband") && (
              <>
                <Field label="Min resource" error={shown("early_stopping.min_resource")} hint="Steps before the first cut.">
                  {(w) => <input {...w} name="min_resource" inputMode="numeric" value={form.minResource}
                    onChange={(e) => set("minResource", e.target.value)} />}
                </Field>
                <Field label="Reduction factor" error={shown("early_stopping.reduction_factor")}>
                  {(w) => <input {...w} name="reduction_factor" inputMode="numeric" value={form.reductionFactor}
                    onChange={(e) => set("reductionFactor", e.target.value)} />}
                </Field>
              </>
            )}
          </div>
        </fieldset>
        <UnplacedError error={error} fields={placedFields(form)} />
        <SubmitActions onCancel={onClose} busy={busy} label="Create and start" busyLabel="Creating…" />
      </form>
    </Dialog>
  );
}
