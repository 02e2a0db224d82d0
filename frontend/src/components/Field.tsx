// Form rows that show the server's (or the client's) reason next to the input it names.
import { useCallback, useId, useState, type ReactNode } from "react";
import { ApiError, describeError } from "../api/client";

export interface InputWiring {
  id: string;
  "aria-invalid": boolean;
  "aria-describedby": string | undefined;
}

interface FieldProps {
  /** Defaults to a generated one; give it when other code must find the input (e.g. to focus an error). */
  id?: string;
  label: ReactNode;
  error?: string;
  hint?: ReactNode;
  required?: boolean;
  className?: string;
  /** Renders the input with the id and aria attributes that tie it to its label and error. */
  children: (wiring: InputWiring) => ReactNode;
}

export function Field({ id: givenId, label, error, hint, required, className, children }: FieldProps) {
  const generated = useId();
  const id = givenId ?? generated;
  const describedBy = [hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ");
  return (
    <div className={className ? `field ${className}` : "field"}>
      <label htmlFor={id}>
        {label}{required && <span className="required" aria-hidden="true">*</span>}
      </label>
      {children({ id, "aria-invalid": Boolean(error), "aria-describedby": describedBy || undefined })}
      {hint && <span id={`${id}-hint`} className="hint">{hint}</span>}
      {error && <span id={`${id}-error`} className="field-error">{error}</span>}
    </div>
  );
}

/** Busy flag and last error of a form's submit; reasonFor() reads the server's per-field reasons. */
export function useSubmit() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const run = useCallback(async (action: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }, []);
  const reasonFor = (field: string) => (error instanceof ApiError ? error.reasonFor(field) : undefined);
  return { busy, error, run, reasonFor, clear: () => setError(null) };
}

/** The part of an error no field shows: the message alone, or the reasons of fields the form lacks. */
export function UnplacedError({ error, fields }: { error: unknown; fields: string[] }) {
  if (!error) return null;
  if (error instanceof ApiError && error.errors.length > 0) {
    const rest = error.errors.filter((e) => !fields.includes(e.field));
    if (rest.length === 0) return null;
    return (
      <div className="error-banner" role="alert">
        <ul className="error-list">
          {rest.map((e) => <li key={e.field + e.reason}><code>{e.field}</code>: {e.reason}</li>)}
        </ul>
      </div>
    );
  }
  return <div className="error-banner" role="alert">{describeError(error)}</div>;
}
