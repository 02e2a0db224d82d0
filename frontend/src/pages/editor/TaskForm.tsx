// The selected task's form: name, the image or environment it runs in, the template's arguments
// (generated from its args_schema), resources and retry policy. Every change goes through `onEdit` into the undoable draft.
import { memo } from "react";
import type { ArgProperty, JobTemplate, ResourceGroup, TriggerRule } from "../../types";
import { Field, type InputWiring as InputProps } from "../../components/Field";
import type { ImageChoice } from "../notebooks/logic";
import { canChooseImage, imageGroups } from "./imageChoice";
import type { DraftTask } from "./model";
import { argProperties, LIMITS, type FieldErrors } from "./validation";

export type TaskEdit = (key: string, field: string, change: (task: DraftTask) => DraftTask) => void;

const RESOURCE_LABELS = { cpu: "CPU", memory: "Memory", gpu: "GPUs" };

interface TaskFormProps {
  task: DraftTask;
  template: JobTemplate | undefined;
  errors: FieldErrors;
  resourceGroups: ResourceGroup[];
  /** What the pipeline's project may run (the images a notebook of it may run). */
  images: readonly ImageChoice[];
  readOnly: boolean;
  onEdit: TaskEdit;
  onBlur: () => void;
}

const TRIGGER_RULES: { value: TriggerRule; label: string }[] = [
  { value: "all_success", label: "all_success: every upstream task succeeded" },
  { value: "all_done", label: "all_done: every upstream task finished, whatever the outcome" },
  { value: "one_failed", label: "one_failed: as soon as one upstream task failed" },
];

function show(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

/** Constraint summary shown under an argument, so the rules are visible before they are broken. */
function argHint(prop: ArgProperty, mandatory: boolean): string {
  const parts: string[] = mandatory ? ["Required"] : [];
  if (prop.description) parts.push(prop.description);
  if (prop.minimum !== undefined || prop.maximum !== undefined) parts.push(`${prop.minimum ?? "…"} to ${prop.maximum ?? "…"}`);
  if (prop.pattern && prop.pattern.length <= 40) parts.push(`pattern ${prop.pattern}`); // long ones are noise
  if (prop.maxLength !== undefined) parts.push(`at most ${prop.maxLength} characters`);
  if (prop.type === "array") parts.push("one item per line (or a JSON list)");
  if ("default" in prop) parts.push(`default ${show(prop.default) || '""'}`);
  return parts.join(" · ");
}

function fieldId(key: string, field: string) {
  return `task-${key}-${field.replace(/[^A-Za-z0-9_-]/g, "_")}`;
}

function ArgInput({ prop, value, required, input, onChange, onBlur }: {
  prop: ArgProperty; value: string; required: boolean; input: InputProps;
  onChange: (text: string) => void; onBlur: () => void;
}) {
  const unset = "default" in prop ? `(default: ${show(prop.default) || '""'})` : required ? "(choose)" : "(not set)";
  if (prop.enum || prop.type === "boolean") {
    const options = prop.enum ?? [true, false];
    return (
      <select {...input} value={value} onChange={(e) => onChange(e.target.value)} onBlur={onBlur}>
        <option value="">{unset}</option>
        {options.map((o) => <option key={String(o)} value={String(o)}>{String(o)}</option>)}
        {value !== "" && !options.some((o) => String(o) === value) && <option value={value}>{value}</option>}
      </select>
    );
  }
  // Arrays (one item per line) and long texts (scripts, commands) get room to write.
  if (prop.type === "array" || (prop.type === "string" && (prop.maxLength ?? 0) > 1024)) {
    return <textarea {...input} rows={3} value={value} placeholder={argPlaceholder(prop)}
      onChange={(e) => onChange(e.target.value)} onBlur={onBlur} />;
  }
  const mode = prop.type === "integer" ? "numeric" : prop.type === "number" ? "decimal" : undefined;
  return <input {...input} type="text" inputMode={mode} aria-required={required && !("default" in prop)} value={value} placeholder={argPlaceholder(prop)}
    onChange={(e) => onChange(e.target.value)} onBlur={onBlur} spellCheck={false} autoComplete="off" />;
}

function argPlaceholder(prop: ArgProperty): string | undefined {
  if (!("default" in prop)) return undefined;
  return Array.isArray(prop.default) ? prop.default.map(String).join("\n") : show(prop.default);
}

export const TaskForm = memo(function TaskForm(props: TaskFormProps) {
  const { task, template, errors, resourceGroups, images, readOnly, onEdit, onBlur } = props;
  const key = task.key;
  const edit = (field: string, change: (t: DraftTask) => DraftTask) => onEdit(key, field, change);
  const required = new Set(template?.args_schema?.required ?? []);
  // What must be filled in comes first; the rest keeps the schema's order.
  const mustFill = ([name, prop]: [string, ArgProperty]) => (required.has(name) && !("default" in prop) ? 0 : 1);
  const properties = argProperties(template?.args_schema).sort((a, b) => mustFill(a) - mustFill(b));
  const unknownArgs = Object.keys(task.args).filter((name) => !template?.args_schema?.properties?.[name]);
  const defaults = template?.default_resources ?? {};
  const max = template?.max_resources ?? {};

  return (
    <form className="task-form" aria-label={`Task ${task.name}`} onSubmit={(e) => e.preventDefault()}>
      <fieldset disabled={readOnly}>
        <p className="task-form-template">
          <strong>{template ? `${template.name} ${template.version}` : `Template #${task.templateId}`}</strong>
          {template && <span className="muted"> · {template.kind}</span>}
        </p>
        {template?.description && <p className="hint">{template.description}</p>}
        {errors.template_id && <div className="field-error">{errors.template_id}</div>}
        {errors.task && <div className="field-error">{errors.task}</div>}

        <Field id={fieldId(key, "name")} label="Task name" error={errors.name}
          hint="Lowercase letters, digits and '-', unique in the pipeline">
          {(input) => (
            <input {...input} type="text" value={task.name} maxLength={100} spellCheck={false} autoComplete="off"
              onBlur={onBlur} onChange={(e) => edit("name", (t) => ({ ...t, name: e.target.value }))} />
          )}
        </Field>

        {(canChooseImage(template) || task.image !== null) && (
          <Field id={fieldId(key, "image")} label="Image or environment" error={errors.image}
            hint={template ? `Where the task's code runs; the template's image is ${template.image}` : undefined}>
            {(input) => (
              <select {...input} value={task.image ?? ""}
                onChange={(e) => edit("image", (t) => ({ ...t, image: e.target.value || null }))}>
                <option value="">Template's image</option>
                {imageGroups(images, task.image).map((group) => (
                  <optgroup key={group.label} label={group.label}>
                    {group.options.map((o) => <option key={o.value} value={o.value}>{o.label}</option>)}
                  </optgroup>
                ))}
              </select>
            )}
          </Field>
        )}

        <h3>Arguments</h3>
        {properties.length === 0 && unknownArgs.length === 0 && <p className="muted">This template takes no arguments.</p>}
        {properties.map(([name, prop]) => (
          <Field key={name} id={fieldId(key, `args.${name}`)} error={errors[`args.${name}`]}
            hint={argHint(prop, required.has(name) && !("default" in prop))}
            label={name}>
            {(input) => (
              <ArgInput prop={prop} value={task.args[name] ?? ""} required={required.has(name)}
                input={input} onBlur={onBlur}
                onChange={(text) => edit(`args.${name}`, (t) => ({ ...t, args: { ...t.args, [name]: text } }))} />
            )}
          </Field>
        ))}
        {unknownArgs.map((name) => (
          <div key={name} className="field">
            <span>{name} = {task.args[name]}</span>
            <div className="field-error">{errors[`args.${name}`] ?? "unknown argument"}</div>
            <button type="button" onClick={() => edit(`args.${name}`, (t) => {
              const args = { ...t.args };
              delete args[name];
              return { ...t, args };
            })}>Remove {name}</button>
          </div>
        ))}

        <h3>Resources</h3>
        {errors.resources && <div className="field-error">{errors.resources}</div>}
        <div className="form-row">
          {(["cpu", "memory", "gpu"] as const).map((r) => (
            <Field key={r} id={fieldId(key, `resources.${r}`)} label={RESOURCE_LABELS[r]} error={errors[`resources.${r}`]}
              hint={max[r] !== undefined ? `max ${max[r]}` : undefined}>
              {(input) => (
                <input {...input} type="text" value={task.resources[r]} spellCheck={false} autoComplete="off"
                  inputMode={r === "gpu" ? "numeric" : undefined} onBlur={onBlur}
                  placeholder={defaults[r] === undefined ? undefined : String(defaults[r])}
                  onChange={(e) => edit(`resources.${r}`, (t) => ({ ...t, resources: { ...t.resources, [r]: e.target.value } }))} />
              )}
            </Field>
          ))}
        </div>
        <p className="hint">Quantities like 500m, 2 or 4Gi; empty uses the template default.</p>

        <Field id={fieldId(key, "resource_group_id")} label="Resource group" error={errors.resource_group_id}
          hint="Where the task's pods run; none uses the project default">
          {(input) => (
            <select {...input} value={task.resourceGroupId ?? ""} onChange={(e) => edit("resource_group_id",
              (t) => ({ ...t, resourceGroupId: e.target.value ? Number(e.target.value) : null }))}>
              <option value="">(none)</option>
              {resourceGroups.map((g) => <option key={g.id} value={g.id}>{g.name}</option>)}
              {task.resourceGroupId !== null && !resourceGroups.some((g) => g.id === task.resourceGroupId) && (
                <option value={task.resourceGroupId}>group #{task.resourceGroupId}</option>
              )}
            </select>
          )}
        </Field>

        <h3>Retries and limits</h3>
        <div className="form-row">
          <Field id={fieldId(key, "retries")} label="Retries" error={errors.retries}
            hint={`${LIMITS.retries[0]} to ${LIMITS.retries[1]}`}>
            {(input) => (
              <input {...input} type="text" inputMode="numeric" value={task.retries} onBlur={onBlur}
                onChange={(e) => edit("retries", (t) => ({ ...t, retries: e.target.value }))} />
            )}
          </Field>
          <Field id={fieldId(key, "retry_delay")} label="Retry delay (s)" error={errors.retry_delay}
            hint={`${LIMITS.retryDelay[0]} to ${LIMITS.retryDelay[1]}`}>
            {(input) => (
              <input {...input} type="text" inputMode="numeric" value={task.retryDelay} onBlur={onBlur}
                onChange={(e) => edit("retry_delay", (t) => ({ ...t, retryDelay: e.target.value }))} />
            )}
          </Field>
        </div>
        <Field id={fieldId(key, "timeout")} label="Timeout (s)" error={errors.timeout}
          hint={`Optional, ${LIMITS.timeout[0]} to ${LIMITS.timeout[1]}; empty = no limit`}>
          {(input) => (
            <input {...input} type="text" inputMode="numeric" value={task.timeout} onBlur={onBlur}
              onChange={(e) => edit("timeout", (t) => ({ ...t, timeout: e.target.value }))} />
          )}
        </Field>
        <Field id={fieldId(key, "trigger_rule")} label="Trigger rule" error={errors.trigger_rule}>
          {(input) => (
            <select {...input} value={task.triggerRule}
              onChange={(e) => edit("trigger_rule", (t) => ({ ...t, triggerRule: e.target.value as TriggerRule }))}>
              {TRIGGER_RULES.map((r) => <option key={r.value} value={r.value}>{r.label}</option>)}
            </select>
          )}
        </Field>
      </fieldset>
    </form>
  );
});
