// Create a notebook: name, image or environment (the platform's defaults, which the form starts with, then
// the project's images, then the shared catalog; with nothing but the defaults it says how to get more),
// resources, resource group, an optional existing volume. The server checks it all again (409 for a name
// taken, 400 naming the field: an unknown image, resources over the template maximum or the quota).
import { useState, type FormEvent } from "react";
import { api, listAll } from "../../api/client";
import { Dialog, SubmitActions } from "../../components/Dialog";
import { Field, UnplacedError, useSubmit } from "../../components/Field";
import { useAsync } from "../../lib/useAsync";
import { Link } from "../../router";
import type { Notebook, NotebookImageChoices, ResourceGroup } from "../../types";
import {
  CHOICE_GROUPS, createBody, EMPTY_FORM, firstChoice, formProblems, imageChoices, type NotebookForm,
} from "./logic";

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
  const images = useAsync(() => api<NotebookImageChoices>(`/api/v1/notebook/project/${projectId}/images`), [projectId]);
  // Resource groups: listed for everyone who may use one; none listed means the cluster's default.
  const groups = useAsync(() => listAll<ResourceGroup>("resource_group").catch(() => [] as ResourceGroup[]), []);
  const choices = imageChoices(images.data?.items ?? []);
  // The form starts with the first default once the list is in, until the user chooses.
  const current = { ...form, image: form.image || firstChoice(choices) };
  const problems = formProblems(current);
  const set = (key: keyof NotebookForm) => (value: string) => setForm((old) => ({ ...old, [key]: value }));
  const shown = (field: keyof typeof problems) => (checked ? problems[field] : undefined) ?? reasonFor(field);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setChecked(true);
    if (Object.keys(problems).length > 0) return;
    void run(async () => {
      const created = await api<Notebook>("/api/v1/notebook/", { method: "POST", body: createBody(current, projectId) });
      onCreated(created);
    });
  };

  return (
    <Dialog title="New notebook" onClose={onClose}>
      <form onSubmit={submit} noValidate className="notebook-form">
        <Field label="Name" required error={shown("name")}
          hint="Lower-case letters, digits and -; at most 40 characters. Part of the notebook's address.">
          {(w) => <input {...w} name="name" autoComplete="off" spellCheck={false} value={form.name}
            onChange={(e) => set("name")(e.target.value)} />}
        </Field>
        <Field label="Image or environment" required error={shown("image")}
          hint={images.error ? "The image list could not be loaded." : images.data?.only_defaults ? (
            <>Only the platform's default environments exist so far. For other packages,{" "}
              <Link to="/images">build an environment</Link> for this project; it is offered here once built.</>
          ) : "The platform's defaults first, then environments built for this project."}>
          {(w) => (
            <select {...w} name="image" value={current.image} onChange={(e) => set("image")(e.target.value)}>
              <option value="">{images.loading ? "Loading images…" : "Choose…"}</option>
              {CHOICE_GROUPS.map(({ group, label }) => {
                const options = choices.filter((c) => c.group === group);
                return options.length > 0 && (
                  <optgroup key={group} label={label}>
                    {options.map((c) => <option key={c.value} value={c.value}>{c.label}</option>)}
                  </optgroup>
                );
              })}
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
