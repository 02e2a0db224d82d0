// Run with parameters: the pipeline's parameters with their defaults, each editable for this run only
// ({{ params.<name> }} in task arguments); the values the user changed are sent as the run's params.
import { useState, type FormEvent } from "react";
import { Dialog, SubmitActions } from "../../components/Dialog";

interface Props {
  parameters: Record<string, unknown>;
  busy: boolean;
  onRun: (params: Record<string, string>) => void;
  onClose: () => void;
}

/** The values that differ from the defaults (the server fills in the rest). */
export function changedParams(defaults: Record<string, unknown>, values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter(([k, v]) => String(defaults[k] ?? "") !== v));
}

export function RunDialog({ parameters, busy, onRun, onClose }: Props) {
  const names = Object.keys(parameters).sort();
  const [values, setValues] = useState<Record<string, string>>(
    () => Object.fromEntries(names.map((n) => [n, String(parameters[n] ?? "")])));
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onRun(changedParams(parameters, values));
  };
  return (
    <Dialog title="Run with parameters" onClose={onClose}>
      <form onSubmit={submit} aria-label="Run parameters">
        <p className="muted">Task arguments read these as <code>{"{{ params.<name> }}"}</code>.</p>
        {names.map((name) => (
          <label key={name}>
            <span>{name}</span>
            <input name={name} value={values[name]} onChange={(e) => setValues({ ...values, [name]: e.target.value })} />
          </label>
        ))}
        <SubmitActions onCancel={onClose} busy={busy} label="Run" busyLabel="Starting…" />
      </form>
    </Dialog>
  );
}
