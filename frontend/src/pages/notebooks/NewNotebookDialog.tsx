// Create a notebook: name, image or environment (the project's images, then the shared catalog),
// resources, resource group, an optional existing volume. The server checks it all again (409 for a name
// taken, 400 naming the field: an unknown image, resources over the template maximum or the quota).
import { useState, type FormEvent } from "react";
import { api, listAll } from "../../api/client";
import { Dialog, SubmitActions } from "../../components/Dialog";
import { Field, UnplacedError, useSubmit } from "../../components/Field";
import { useAsync } from "../../lib/useAsync";
import type { Image, Notebook, ResourceGroup } from "../../types";
import { createBody, EMPTY_FORM, formProblems, imageChoices, type NotebookForm } from "./logic";

const FIELDS = ["name", "image", "resources.cpu", "resources.memory", "resources.gpu",
  "resource_group_id", "volume"];

export function NewNotebookDialog({ projectId, onClose, onCreated }: {
  projectId: number;
  onClose: () => void;
  onCreated: (notebook: Notebook) => void;
}) {
  const [form, setForm] = useState<NotebookForm>(EMPTY_FORM);
  const [checked, setChecked] = useState(false);
  const { busy, error, run, reasonFor } = useSubmit();
  const images = useAsync(() => listAll<Image>("image"), []);
  // Resource groups: listed for everyone who may use one; none listed means the cluster's default.
  const groups = useAsync(() => listAll<ResourceGroup>("resource_group").catch(() => [] as ResourceGroup[]), []);
  const choices = imageChoices(images.data ?? [], projectId);
  const problems = formProblems(form);
  const set = (key: keyof NotebookForm) => (value: string) => setForm((old) => ({ ...old, [key]: value }));
  const shown = (field: keyof typeof problems) => (checked ? problems[field] : undefined) ?? reasonFor(field);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setChecked(true);
    if (Object.keys(problems).length > 0) return;
    void run(async () => {
      const created = await api<Notebook>("/api/v1/notebook/", { method: "POST", body: createBody(form, projectId) });
      onCreated(created);
    });
  };

  const project = choices.filter((c) => c.group === "project");
  const catalog = choices.filter((c) => c.group === "catalog");
  return (
    <Dialog title="New notebook" onClose={onClose}>
      <form onSubmit={submit} noValidate className="notebook-form">
        <Field label="Name" required error={shown("name")}
          hint="Lower-case letters, digits and -; at most 40 characters. Part of the notebook's address.">
          {(w) => <input {...w} name="name" autoComplete="off" spellCheck={false} value={form.name}
            onChange={(e) => set("name")(e.target.value)} />}
        </Field>
        <Field label="Image or environment" required error={shown("image")}
          hint={images.error ? "The image list could not be loaded." : "Environments built for this project come first."}>
          {(w) => (
            <select {...w} name="image" value={form.image} onChange={(e) => set("image")(e.target.value)}>
              <option value="">{images.loading ? "Loading images…" : "Choose…"}</option>
              {project.length > 0 && (
                <optgroup label="This project">
                  {project.map((c) => <option key={c.value} value={c.value}>{c.label}</option>)}
                </optgroup>
              )}
              {catalog.length > 0 && (
                <optgroup label="Catalog">
                  {catalog.map((c) => <option key={c.value} value={c.value}>{c.label}</option>)}
                </optgroup>
              )}
            </select>
          )}
        </Field>
        <div className="field-row three">
          <Field label="CPU" error={shown("resources.cpu")}>
            {(w) => <input {...w} name="cpu" value={form.cpu} onChange={(e) => set("cpu")(e.target.value)} />}
          </Field>
          <Field label="Memory" error={shown("resources.memory")}>
            {(w) => <input {...w} name="memory" value={form.memory} onChange={(e) => set("memory")(e.target.value)} />}
          </Field>
          <Field label="GPUs" error={shown("resources.gpu")}>
            {(w) => <input {...w} name="gpu" inputMode="numeric" value={form.gpu}
              onChange={(e) => set("gpu")(e.target.value)} />}
          </Field>
        </div>
        <Field label="Resource group" error={reasonFor("resource_group_id")}>
          {(w) => (
            <select {...w} name="resource_group_id" value={form.resourceGroupId}
              onChange={(e) => set("resourceGroupId")(e.target.value)}>
              <option value="">Default</option>
              {(groups.data ?? []).map((g) => <option key={g.id} value={g.id}>{g.name}</option>)}
            </select>
          )}
        </Field>
        <Field label="Volume" error={shown("volume")}
          hint="Optional: an existing volume claim of the project, mounted in the work folder as volume/.">
          {(w) => <input {...w} name="volume" autoComplete="off" spellCheck={false} value={form.volume}
            onChange={(e) => set("volume")(e.target.value)} />}
        </Field>
        <UnplacedError error={error} fields={FIELDS} />
        <SubmitActions onCancel={onClose} busy={busy} label="Create and start" busyLabel="Creating…" />
      </form>
    </Dialog>
  );
}
