// Reset a user's password: the admin sets a new one, or the server generates one, shown once.
import { useState, type FormEvent } from "react";
import { api } from "../../api/client";
import { Dialog, SubmitActions } from "../../components/Dialog";
import { UnplacedError, useSubmit } from "../../components/Field";
import type { PasswordChanged, PasswordResetBody, User } from "../../types";
import { choiceProblem, passwordBody, PasswordChoice, ShownOnce, type PasswordMode } from "./PasswordChoice";

const FIELDS = ["password", "generate_password"];

export function PasswordDialog({ user, onClose, onDone }: { user: User; onClose: () => void; onDone: () => void }) {
  const [mode, setMode] = useState<PasswordMode>("generate");
  const [password, setPassword] = useState("");
  const [checked, setChecked] = useState(false);
  const [generated, setGenerated] = useState<string | null>(null);
  const { busy, error, run, reasonFor } = useSubmit();

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setChecked(true);
    if (choiceProblem(mode, password)) return;
    void run(async () => {
      const answer = await api<PasswordChanged>(`/api/v1/user/${user.id}/password`, {
        method: "POST", body: passwordBody(mode, password) satisfies PasswordResetBody });
      setPassword("");
      onDone();
      if (answer.generated_password) setGenerated(answer.generated_password);
      else onClose();
    });
  };

  if (generated) {
    return (
      <Dialog title={`New password for ${user.username}`} onClose={onClose}>
        <ShownOnce username={user.username} password={generated} />
        <div className="dialog-actions">
          <button type="button" className="primary" onClick={onClose}>Done</button>
        </div>
      </Dialog>
    );
  }

  return (
    <Dialog title={`Reset the password of ${user.username}`} onClose={onClose}>
      <form onSubmit={submit} noValidate className="user-form">
        <p className="muted">Their old password stops working at once.</p>
        <PasswordChoice mode={mode} onMode={setMode} password={password} onPassword={setPassword} checked={checked}
          reasonFor={reasonFor} />
        <UnplacedError error={error} fields={FIELDS} />
        <SubmitActions onCancel={onClose} busy={busy} label="Reset password" busyLabel="Saving…" />
      </form>
    </Dialog>
  );
}
