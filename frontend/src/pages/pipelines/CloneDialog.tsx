// "Clone": copies tasks and edges under a new name; the copy starts paused (server rule).
import { useState, type FormEvent } from "react";
import { api } from "../../api/client";
import type { CloneBody, Pipeline } from "../../types";
import { Dialog, SubmitActions } from "../../components/Dialog";
import { Field, UnplacedError, useSubmit } from "../../components/Field";
import { dnsLabelProblem } from "./logic";

interface Props {
  source: Pipeline;
  suggested: string;
  onClose: () => void;
  onCloned: (copy: Pipeline) => void;
}

export function CloneDialog({ source, suggested, onClose, onCloned }: Props) {
  const [name, setName] = useState(suggested);
  const { busy, error, run, reasonFor, clear } = useSubmit();
  const problem = dnsLabelProblem(name);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (problem) return;
    void run(async () => {
      onCloned(await api<Pipeline>(`/api/v1/pipeline/${source.id}/clone`, { method: "POST", body: { name } satisfies CloneBody }));
    });
  };

  return (
    <Dialog title={`Clone ${source.name}`} onClose={onClose}>
      <form onSubmit={submit} noValidate>
        <Field label="Name of the copy" required error={problem ?? reasonFor("name")}
          hint="The copy has the same tasks and starts paused.">
          {(wiring) => (
            <input {...wiring} name="name" autoComplete="off" spellCheck={false} value={name}
              onChange={(e) => { setName(e.target.value); clear(); }} />
          )}
        </Field>
        <UnplacedError error={error} fields={["name"]} />
        <SubmitActions onCancel={onClose} busy={busy} label="Clone" busyLabel="Cloning…" />
      </form>
    </Dialog>
  );
}
