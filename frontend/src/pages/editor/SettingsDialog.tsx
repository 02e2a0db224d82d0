// Pipeline settings (schedule, concurrency, parameters, webhook), saved on their own with
// PUT /api/v1/pipeline/{id}: they are not part of the graph, so not of its undo history.
import { useState, type FormEvent } from "react";
import { api, ApiError } from "../../api/client";
import { ErrorBanner } from "../../components/ui";
import type { ConcurrencyPolicy, Pipeline, PipelineBody, WebhookEvent, WebhookSecret } from "../../types";
import { Dialog } from "../../components/Dialog";
import { Field } from "../../components/Field";
import { checkInt } from "./validation";
import { checkEvents, checkWebhookUrl, EVENT_PRESETS, eventsReason, toggleEvent, WEBHOOK_EVENTS } from "./webhook";

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
  const [events, setEvents] = useState<WebhookEvent[]>(pipeline.webhook_events);
  const [params, setParams] = useState<ParamRow[]>(() => Object.entries(pipeline.parameters ?? {})
    .map(([key, value], id) => ({ id, key, text: paramText(value), original: value })));
  const [nextId, setNextId] = useState(params.length);
  const [error, setError] = useState<unknown>(null);
  const [saving, setSaving] = useState(false);

  const serverReason = (field: string) => (error instanceof ApiError ? error.reasonFor(field) : undefined);
  const maxActiveError = checkInt(maxActive, 1, 100) ?? serverReason("max_active_runs");
  const webhookError = checkWebhookUrl(webhook) ?? serverReason("webhook_url");
  const eventsError = (webhook.trim() ? checkEvents(events) : null) ?? eventsReason(serverReason, events);
  const keyError = (row: ParamRow) => {
    if (!PARAM_KEY.test(row.key)) return "letters, digits and '_', not starting with a digit";
    if (params.some((other) => other !== row && other.key === row.key)) return "used twice";
    return serverReason(`parameters.${row.key}.key`) ?? serverReason(`parameters.${row.key}`);
  };
  const shownFields = new Set(["description", "schedule", "max_active_runs", "concurrency_policy", "webhook_url",
    "webhook_events", ...events.map((_, i) => `webhook_events[${i}]`),
    "parameters", ...params.flatMap((row) => [`parameters.${row.key}`, `parameters.${row.key}.key`])]);
  const invalid = Boolean(maxActiveError || webhookError || eventsError || params.some((row) => keyError(row)));

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
          ...(events.length > 0 ? { webhook_events: events } : {}),
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
        {/* The fields scroll; the error and the buttons below them stay in view (dialog.css). */}
        <div className="dialog-body">
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
            <fieldset className="params webhook">
              <legend>Webhook</legend>
              <Field id="settings-webhook" label="Webhook URL" error={webhookError}
                hint="A signed JSON POST for each event chosen below; empty = none. Private, loopback and link-local addresses are refused unless an admin allows them.">
                {(input) => <input {...input} type="url" value={webhook} placeholder="https://…" autoComplete="off"
                  onChange={(e) => setWebhook(e.target.value)} />}
              </Field>
              <div className="field" role="group" aria-labelledby="settings-events-label"
                aria-describedby={eventsError ? "settings-events-error" : undefined}>
                <span id="settings-events-label">Events</span>
                {WEBHOOK_EVENTS.map((event) => (
                  <label key={event.value} className="inline">
                    <input type="checkbox" checked={events.includes(event.value)}
                      onChange={(e) => setEvents((now) => toggleEvent(now, event.value, e.target.checked))} />
                    {event.label}
                  </label>
                ))}
                <div className="form-row">
                  {EVENT_PRESETS.map((preset) => (
                    <button key={preset.label} type="button" onClick={() => setEvents(preset.events)}>{preset.label}</button>
                  ))}
                </div>
                {eventsError && <span id="settings-events-error" className="field-error">{eventsError}</span>}
              </div>
            </fieldset>
          </fieldset>
          {!readOnly && pipeline.webhook_url && <WebhookSecretPanel pipelineId={pipeline.id} />}
        </div>
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

/** The signing secret of a saved webhook: shown on request, rotated on request (at once, not on Save). */
function WebhookSecretPanel({ pipelineId }: { pipelineId: number }) {
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const call = async (path: string) => {
    setBusy(true);
    setError(null);
    try {
      setSecret((await api<WebhookSecret>(`/api/v1/pipeline/${pipelineId}/${path}`, { method: "POST" })).secret ?? null);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const rotate = () => {
    if (window.confirm("Rotate the secret? Deliveries are signed with the new one at once; receivers must be given it.")) {
      void call("webhook_secret/rotate");
    }
  };

  return (
    <fieldset className="params webhook-secret">
      <legend>Signing secret</legend>
      <p className="hint">
        Each delivery carries X-Myapp-Signature: sha256=HMAC-SHA256(secret, X-Myapp-Timestamp + "." + body).
      </p>
      {secret !== null && (
        <Field id="settings-webhook-secret" label="Secret">
          {(input) => <input {...input} type="text" readOnly value={secret} spellCheck={false} autoComplete="off"
            onFocus={(e) => e.target.select()} />}
        </Field>
      )}
      <div className="form-row">
        <button type="button" disabled={busy} onClick={() => (secret === null ? void call("webhook_secret") : setSecret(null))}>
          {secret === null ? "Show secret" : "Hide secret"}
        </button>
        <button type="button" disabled={busy} onClick={rotate}>Rotate secret</button>
      </div>
      <ErrorBanner error={error} />
    </fieldset>
  );
}
