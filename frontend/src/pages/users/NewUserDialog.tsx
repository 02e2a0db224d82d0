// Create a user: username, name, email, a password (set, or generated and shown once), the admin flag.
import { useState, type FormEvent } from "react";
import { api } from "../../api/client";
import { Dialog, SubmitActions } from "../../components/Dialog";
import { Field, UnplacedError, useSubmit } from "../../components/Field";
import type { NewUser, UserCreateBody } from "../../types";
import { newUsernameProblem } from "./logic";
import { choiceProblem, passwordBody, PasswordChoice, ShownOnce, type PasswordMode } from "./PasswordChoice";

const FIELDS = ["username", "first_name", "last_name", "email", "password", "generate_password", "is_admin"];

export function NewUserDialog({ onClose, onCreated }: { onClose: () => void; onCreated: (user: NewUser) => void }) {
  const [username, setUsername] = useState("");
  const [firstName, setFirstName] = useState("");
  const [lastName, setLastName] = useState("");
  const [email, setEmail] = useState("");
  const [mode, setMode] = useState<PasswordMode>("generate");
  const [password, setPassword] = useState("");
  const [admin, setAdmin] = useState(false);
  const [checked, setChecked] = useState(false);
  const [created, setCreated] = useState<NewUser | null>(null);
  const { busy, error, run, reasonFor } = useSubmit();
  const usernameProblem = newUsernameProblem(username);
  const firstNameProblem = firstName.trim() === "" ? "is required" : null;
  const emailProblem = email.trim() === "" ? "is required" : null;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setChecked(true);
    if (usernameProblem || firstNameProblem || emailProblem || choiceProblem(mode, password)) return;
    const body = {
      username, first_name: firstName.trim(), last_name: lastName.trim(), email: email.trim(), is_admin: admin,
      ...passwordBody(mode, password),
    } satisfies UserCreateBody;
    void run(async () => {
      const user = await api<NewUser>("/api/v1/user/", { method: "POST", body });
      setPassword("");
      onCreated(user);
      if (user.generated_password) setCreated(user);
      else onClose();
    });
  };

  if (created?.generated_password) {
    return (
      <Dialog title={`User ${created.username} created`} onClose={onClose}>
        <ShownOnce username={created.username} password={created.generated_password} />
        <div className="dialog-actions">
          <button type="button" className="primary" onClick={onClose}>Done</button>
        </div>
      </Dialog>
    );
  }

  const shown = (problem: string | null, field: string) => (checked ? problem : null) ?? reasonFor(field);
  return (
    <Dialog title="New user" onClose={onClose}>
      <form onSubmit={submit} noValidate className="user-form">
        <Field label="Username" required error={(checked || username ? usernameProblem : null) ?? reasonFor("username")}
          hint="Letters, digits and . _ @ -; cannot be changed later.">
          {(w) => <input {...w} name="username" autoComplete="off" spellCheck={false} value={username}
            onChange={(e) => setUsername(e.target.value)} />}
        </Field>
        <div className="field-row">
          <Field label="First name" required error={shown(firstNameProblem, "first_name")}>
            {(w) => <input {...w} name="first_name" autoComplete="off" value={firstName}
              onChange={(e) => setFirstName(e.target.value)} />}
          </Field>
          <Field label="Last name" error={reasonFor("last_name")}>
            {(w) => <input {...w} name="last_name" autoComplete="off" value={lastName}
              onChange={(e) => setLastName(e.target.value)} />}
          </Field>
        </div>
        <Field label="Email" required error={shown(emailProblem, "email")}>
          {(w) => <input {...w} name="email" type="email" autoComplete="off" value={email}
            onChange={(e) => setEmail(e.target.value)} />}
        </Field>
        <PasswordChoice mode={mode} onMode={setMode} password={password} onPassword={setPassword} checked={checked}
          reasonFor={reasonFor} />
        <label className="inline">
          <input type="checkbox" name="is_admin" checked={admin} onChange={(e) => setAdmin(e.target.checked)} />
          Administrator (manages every project, clusters, quotas and users)
        </label>
        <UnplacedError error={error} fields={FIELDS} />
        <SubmitActions onCancel={onClose} busy={busy} label="Create" busyLabel="Creating…" />
      </form>
    </Dialog>
  );
}
