// The project's push credentials for Kaniko builds (myapp/images/credentials.py): owners set or clear
// them; every member sees whether they are set and for which registry. The password is sent, never shown
// back: the server keeps it sealed and answers only {set, registry, updated_at}.
import { useState, type FormEvent } from "react";
import { api } from "../../api/client";
import { Field, UnplacedError, useSubmit } from "../../components/Field";
import { formatTime } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import type { RegistryCredentialsBody, RegistryCredentialsState } from "../../types";

const FIELDS = ["registry", "username", "password"];

export function RegistryCredentialsForm({ projectId, owner }: { projectId: number; owner: boolean }) {
  const url = `/api/v1/image_build/project/${projectId}/registry_credentials`;
  const current = useAsync(() => api<RegistryCredentialsState>(url), [url]);
  const [form, setForm] = useState<RegistryCredentialsBody>({ registry: "", username: "", password: "" });
  const { busy, error, run, reasonFor } = useSubmit();
  const state = current.data;
  const set = (key: keyof RegistryCredentialsBody) => (value: string) => setForm((old) => ({ ...old, [key]: value }));

  const save = (event: FormEvent) => {
    event.preventDefault();
    void run(async () => {
      await api<RegistryCredentialsState>(url, { method: "PUT", body: form });
      setForm({ registry: "", username: "", password: "" });
      current.reload();
    });
  };
  const clear = () => void run(async () => {
    await api<RegistryCredentialsState>(url, { method: "DELETE" });
    current.reload();
  });

  return (
    <details className="panel registry-credentials">
      <summary>
        Registry credentials:{" "}
        <span data-testid="registry-credentials-state">
          {!state ? "…" : state.set
            ? <>set for <code>{state.registry}</code>{state.updated_at && ` (${formatTime(state.updated_at)})`}</>
            : "none (Kubernetes builds push with the namespace's registry-credentials Secret)"}
        </span>
      </summary>
      {owner ? (
        <form onSubmit={save} noValidate aria-label="Registry credentials">
          <div className="field-row">
            <Field label="Registry" required error={reasonFor("registry")} hint="e.g. ghcr.io or registry.local:5000">
              {(w) => <input {...w} name="registry" spellCheck={false} value={form.registry}
                onChange={(e) => set("registry")(e.target.value)} />}
            </Field>
            <Field label="Username" required error={reasonFor("username")}>
              {(w) => <input {...w} name="username" autoComplete="off" spellCheck={false} value={form.username}
                onChange={(e) => set("username")(e.target.value)} />}
            </Field>
            <Field label="Password or token" required error={reasonFor("password")}>
              {(w) => <input {...w} name="password" type="password" autoComplete="new-password" value={form.password}
                onChange={(e) => set("password")(e.target.value)} />}
            </Field>
          </div>
          <UnplacedError error={error} fields={FIELDS} />
          <div className="form-actions">
            {state?.set && <button type="button" onClick={clear} disabled={busy}>Clear</button>}
            <button type="submit" className="primary" disabled={busy}>{state?.set ? "Replace" : "Save"}</button>
          </div>
        </form>
      ) : (
        <p className="muted">Project owners set the credentials builds push with.</p>
      )}
    </details>
  );
}
