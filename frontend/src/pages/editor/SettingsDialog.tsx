// Pipeline settings (schedule, concurrency, parameters, webhook), saved on their own with
// PUT /api/v1/pipeline/{id}: they are not part of the graph, so not of its undo history.
import { useState, type FormEvent } from "react";
import { api, ApiError } from "../../api";
import { ErrorBanner } from "../../components/ui";
import type { ConcurrencyPolicy, Pipeline, PipelineBody } from "../../types";
import { Dialog } from "../../components/Dialog";
import { Field } from "../../components/Field";
import { checkInt } from "./validation";

interface SettingsDialogProps {
  pipeline: Pipeline;
  readOnly: boolean;
  onSaved: (pipeline: Pipeline) => void;
  onClose: () => void;
}

interface ParamRow {
  id: number;
  key: string;
  text: string;
  /** The stored value, sent back unchanged while its text is not edited (keeps numbers numbers). */
  original?: unknown;
}

const PARAM_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;
const POLICIES: { value: ConcurrencyPolicy; label: string }[] = [
  { value: "wait", label: "wait: queue the new run until a slot frees" },
  { value: "skip", label: "skip: drop the new run" },
  { value: "cancel", label: "cancel: cancel the oldest active run" },
];

function paramText(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

export function SettingsDialog({ pipeline, readOnly, onSaved, onClose }: SettingsDialogProps) {
  const [description, setDescription] = useState(pipeline.description ?? "");
  const [schedule, setSchedule] = useState(pipeline.schedule ?? "");
  const [paused, setPaused] = useState(pipeline.paused);
  const [maxActive, setMaxActive] = useState(String(pipeline.max_active_runs));
  const [policy, setPolicy] = useState<ConcurrencyPolicy>(pipeline.concurrency_policy);
  const [webhook, setWebhook] = useState(pipeline.webhook_url ?? "");
  const [params, setParams] = useState<ParamRow[]>(() => Object.entries(pipeline.parameters ?? {})
    .map(([key, value], id) => ({ id, key, text: paramText(value), original: value })));
  const [nextId, setNextId] = useState(params.length);
  const [error, setError] = useState<unknown>(null);
  const [saving, setSaving] = useState(false);

  const serverReason = (field: string) => (error instanceof ApiError ? error.reasonFor(field) : undefined);
  const maxActiveError = checkInt(maxActive, 1, 100) ?? serverReason("max_active_runs");
  const webhookError = (webhook.trim() && !/^https?:\/\/\S+$/.test(webhook.trim()) ? "must be an http(s) URL" : null)
    ?? serverReason("webhook_url");
  const keyError = (row: ParamRow) => {
    if (!PARAM_KEY.test(row.key)) return "letters, digits and '_', not starting with a digit";
    if (params.some((other) => other !== row && other.key === row.key)) return "used twice";
    return serverReason(`parameters.${row.key}.key`) ?? serverReason(`parameters.${row.key}`);
  };
  const shownFields = new Set(["description", "schedule", "max_active_runs", "concurrency_policy", "webhook_url",
    "parameters", ...params.flatMap((row) => [`parameters.${row.key}`, `parameters.${row.key}.key`])]);
  const invalid = Boolean(maxActiveError || webhookError || params.some((row) => keyError(row)));

  const setRow = (id: number, change: Partial<ParamRow>) =>
    setParams((rows) => rows.map((row) => (row.id === id ? { ...row, ...change } : row)));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (invalid || saving) return;
    setSaving(true);
    setError(null);
    try {
      const saved = await api<Pipeline>(`/api/v1/pipeline/${pipeline.id}`, {
        method: "PUT",
        body: {
          description,
          schedule: schedule.trim() || null,
          paused,
          max_active_runs: Number(maxActive),
          concurrency_policy: policy,
          webhook_url: webhook.trim() || null,
          parameters: Object.fromEntries(params.map((row) => [
            row.key, "original" in row && paramText(row.original) === row.text ? row.original : row.text,
          ])),
        } satisfies Partial<PipelineBody>,
      });
      onSaved(saved);
      onClose();
    } catch (err) {
      setError(err);
    } finally {
      setSaving(false);
    }
  };

  return (
    <Dialog title={`Settings of ${pipeline.name}`} onClose={onClose} wide>
      <form className="settings-form" onSubmit={submit} noValidate>
        <fieldset disabled={readOnly}>
          <Field id="settings-description" label="Description" error={serverReason("description")}>
            {(input) => <textarea {...input} rows={3} value={description} onChange={(e) => setDescription(e.target.value)} />}
          </Field>
          <Field id="settings-schedule" label="Schedule" error={serverReason("schedule")}
            hint="Cron expression, e.g. 0 2 * * *; empty = runs start only by hand or by API.">
            {(input) => <input {...input} type="text" value={schedule} spellCheck={false} autoComplete="off"
              onChange={(e) => setSchedule(e.target.value)} />}
          </Field>
          <div className="field">
            <label className="inline">
              <input type="checkbox" checked={paused} aria-describedby="settings-paused-hint"
                onChange={(e) => setPaused(e.target.checked)} />
              Paused
            </label>
            <div className="hint" id="settings-paused-hint">While paused, no scheduled runs start.</div>
          </div>
          <div className="form-row">
            <Field id="settings-max-active" label="Max active runs" error={maxActiveError} hint="1 to 100">
              {(input) => <input {...input} type="text" inputMode="numeric" value={maxActive}
                onChange={(e) => setMaxActive(e.target.value)} />}
            </Field>
            <Field id="settings-policy" label="Concurrency policy" error={serverReason("concurrency_policy")}
              hint="When a run starts while max active runs are running">
              {(input) => (
                <select {...input} value={policy} onChange={(e) => setPolicy(e.target.value as ConcurrencyPolicy)}>
                  {POLICIES.map((p) => <option key={p.value} value={p.value}>{p.label}</option>)}
                </select>
              )}
            </Field>
          </div>
          <fieldset className="params">
            <legend>Parameters</legend>
            <p className="hint">Task arguments use them as {"{{ params.<name> }}"}; a run can override them.</p>
            {params.map((row, index) => (
              <div key={row.id} className="param-row">
                <Field id={`param-${row.id}-key`} label={`Parameter ${index + 1} name`} error={keyError(row)}>
                  {(input) => <input {...input} type="text" value={row.key} spellCheck={false} autoComplete="off"
                    onChange={(e) => setRow(row.id, { key: e.target.value })} />}
                </Field>
                <Field id={`param-${row.id}-value`} label={`Parameter ${index + 1} value`}>
                  {(input) => <input {...input} type="text" value={row.text} spellCheck={false} autoComplete="off"
                    onChange={(e) => setRow(row.id, { text: e.target.value })} />}
                </Field>
                <button type="button" aria-label={`Remove parameter ${row.key || index + 1}`}
                  onClick={() => setParams((rows) => rows.filter((r) => r.id !== row.id))}>Remove</button>
              </div>
            ))}
            {serverReason("parameters") && <div className="field-error">{serverReason("parameters")}</div>}
            <button type="button" onClick={() => {
              setParams((rows) => [...rows, { id: nextId, key: "", text: "" }]);
              setNextId((n) => n + 1);
            }}>Add parameter</button>
          </fieldset>
          <Field id="settings-webhook" label="Webhook URL" error={webhookError}
            hint="Called when a run finishes; empty = none.">
            {(input) => <input {...input} type="url" value={webhook} placeholder="https://…" autoComplete="off"
              onChange={(e) => setWebhook(e.target.value)} />}
          </Field>
        </fieldset>
        {/* Errors the fields above show are not repeated here. */}
        {!(error instanceof ApiError && error.errors.length > 0 && error.errors.every((e) => shownFields.has(e.field))) && (
          <ErrorBanner error={error} />
        )}
        <div className="dialog-actions">
          <button type="button" onClick={onClose}>{readOnly ? "Close" : "Cancel"}</button>
          {!readOnly && (
            <button type="submit" className="primary" disabled={invalid || saving}>
              {saving ? "Saving…" : "Save settings"}
            </button>
          )}
        </div>
      </form>
    </Dialog>
  );
}
