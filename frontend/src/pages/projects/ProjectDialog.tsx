// "New project" and "Edit project": name and namespace are chosen once (the namespace, shown as it will be,
// is where the project's jobs run); the description can change later. Server reasons show next to the field.
import { useState, type FormEvent } from "react";
import { api } from "../../api/client";
import { Dialog, SubmitActions } from "../../components/Dialog";
import { Field, UnplacedError, useSubmit } from "../../components/Field";
import type { Project, ProjectBody } from "../../types";
import { dnsLabelProblem } from "../pipelines/logic";
import { namespaceOf } from "./logic";

interface Props {
  /** The project to edit; none: a new one. */
  project?: Project;
  onClose: () => void;
  onSaved: (project: Project) => void | Promise<void>;
}

export function ProjectDialog({ project, onClose, onSaved }: Props) {
  const creating = !project;
  const [name, setName] = useState(project?.name ?? "");
  const [namespace, setNamespace] = useState(project?.namespace ?? "");
  const [description, setDescription] = useState(project?.description ?? "");
  const [touched, setTouched] = useState(false);
  const { busy, error, run, reasonFor, clear } = useSubmit();
  const shownNamespace = namespaceOf(name, namespace);
  const nameProblem = creating ? dnsLabelProblem(name) : null;
  const namespaceProblem = creating && namespace.trim() ? dnsLabelProblem(namespace.trim()) : null;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setTouched(true);
    if (nameProblem || namespaceProblem) return;
    void run(async () => {
      const saved = creating
        ? await api<Project>("/api/v1/project/", {
          method: "POST", body: { name, namespace: shownNamespace, description } satisfies ProjectBody,
        })
        : await api<Project>(`/api/v1/project/${project.id}`, { method: "PUT", body: { description } });
      await onSaved(saved);
    });
  };

  return (
    <Dialog title={creating ? "New project" : `Edit project ${project.name}`} onClose={onClose}>
      <form onSubmit={submit} noValidate>
        <Field label="Name" required={creating} error={(touched || name ? nameProblem : null) ?? reasonFor("name")}
          hint={creating ? "Lowercase letters, digits and '-'; it cannot change later." : "A project keeps its name."}>
          {(wiring) => (
            <input {...wiring} name="name" autoComplete="off" spellCheck={false} value={name} readOnly={!creating}
              autoFocus={creating} onChange={(e) => { setName(e.target.value.trim()); clear(); }} />
          )}
        </Field>
        <Field label="Namespace" error={namespaceProblem ?? reasonFor("namespace")}
          hint={creating
            ? <>Where its jobs, notebooks and model servers run: <code>{shownNamespace || "—"}</code>. It cannot change later.</>
            : "Where its jobs, notebooks and model servers run."}>
          {(wiring) => (
            <input {...wiring} name="namespace" autoComplete="off" spellCheck={false} readOnly={!creating}
              placeholder={name || "the project's name"} value={namespace}
              onChange={(e) => { setNamespace(e.target.value); clear(); }} />
          )}
        </Field>
        <Field label="Description" error={reasonFor("description")}>
          {(wiring) => (
            <textarea {...wiring} name="description" rows={3} value={description} autoFocus={!creating}
              onChange={(e) => { setDescription(e.target.value); clear(); }} />
          )}
        </Field>
        <UnplacedError error={error} fields={["name", "namespace", "description"]} />
        <SubmitActions onCancel={onClose} busy={busy} label={creating ? "Create project" : "Save"}
          busyLabel={creating ? "Creating…" : "Saving…"} />
      </form>
    </Dialog>
  );
}
