// A labelled form field: label, input, hint and error, the input described by the last two.
import type { ReactNode } from "react";

export interface InputProps {
  id: string;
  "aria-invalid": boolean;
  "aria-describedby"?: string;
}

interface FieldProps {
  id: string;
  label: ReactNode;
  error?: string | null;
  hint?: ReactNode;
  children: (input: InputProps) => ReactNode;
}

export function Field({ id, label, error, hint, children }: FieldProps) {
  const described = [hint ? `${id}-hint` : "", error ? `${id}-error` : ""].filter(Boolean).join(" ");
  return (
    <div className="form-field">
      <label htmlFor={id}>{label}</label>
      {children({ id, "aria-invalid": Boolean(error), "aria-describedby": described || undefined })}
      {hint && <div className="hint" id={`${id}-hint`}>{hint}</div>}
      {error && <div className="field-error" id={`${id}-error`}>{error}</div>}
    </div>
  );
}
