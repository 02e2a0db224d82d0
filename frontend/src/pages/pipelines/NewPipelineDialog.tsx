// "New pipeline": name checked as a DNS label while typing; server reasons (e.g. 409) next to the field.
import { useState, type FormEvent } from "react";
import { api } from "../../api/client";
import { navigate } from "../../router";
import type { Pipeline, PipelineBody } from "../../types";
import { Dialog, SubmitActions } from "../../components/Dialog";
import { Field, UnplacedError, useSubmit } from "../../components/Field";
import { dnsLabelProblem } from "./logic";

export function NewPipelineDialog({ projectId, onClose }: { projectId: number; onClose: () => void }) {
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const [touched, setTouched] = useState(false);
  const { busy, error, run, reasonFor, clear } = useSubmit();
  const problem = dnsLabelProblem(name);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setTouched(true);
    if (problem) return;
    void run(async () => {
      const created = await api<Pipeline>("/api/v1/pipeline/", {
        method: "POST", body: { project_id: projectId, name, description } satisfies PipelineBody,
      });
      navigate(`/pipelines/${created.id}`);
    });
  };

  return (
    <Dialog title="New pipeline" onClose={onClose}>
      <form onSubmit={submit} noValidate>
        <Field label="Name" required error={(touched || name ? problem : null) ?? reasonFor("name")}
          hint="Lowercase letters, digits and '-'; at most 63 characters.">
          {(wiring) => (
            <input {...wiring} name="name" autoComplete="off" spellCheck={false} value={name}
              onChange={(e) => { setName(e.target.value); clear(); }} onBlur={() => setTouched(true)} />
          )}
        </Field>
        <Field label="Description" error={reasonFor("description")}>
          {(wiring) => (
            <textarea {...wiring} name="description" rows={3} value={description}
              onChange={(e) => setDescription(e.target.value)} />
          )}
        </Field>
        <UnplacedError error={error} fields={["name", "description"]} />
        <SubmitActions onCancel={onClose} busy={busy} label="Create" busyLabel="Creating…" />
      </form>
    </Dialog>
  );
}
