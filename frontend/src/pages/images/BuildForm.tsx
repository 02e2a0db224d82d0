// Ask for a build: a name (repository:tag) and a source: a base image plus packages (a requirements.txt,
// and apt packages on Kubernetes), a Dockerfile (Kubernetes), or a snapshot of a notebook's packages.
// The server checks every field again and names the one that is wrong.
import { useState, type FormEvent } from "react";
import { api, ApiError, listAll } from "../../api/client";
import { Field, UnplacedError, useSubmit } from "../../components/Field";
import { useAsync } from "../../lib/useAsync";
import type { BuildSource, ImageBuild, Notebook, ResourceGroup } from "../../types";
import { buildBody, EMPTY_FORM, type BuildForm as Form } from "./logic";

const FIELDS = ["repository", "tag", "source", "base_image", "requirements", "packages", "apt_packages", "dockerfile",
  "notebook_id", "resource_group_id"];
const SOURCES: { value: BuildSource; label: string }[] = [
  { value: "packages", label: "Base image + packages" },
  { value: "dockerfile", label: "Dockerfile" },
  { value: "notebook", label: "Snapshot of a notebook" },
];

export function BuildForm({ projectId, onCreated }: { projectId: number; onCreated: (build: ImageBuild) => void }) {
  const [form, setForm] = useState<Form>(EMPTY_FORM);
  const { busy, error, run, reasonFor } = useSubmit();
  const notebooks = useAsync(() => listAll<Notebook>("notebook", { project_id: projectId })
    .catch(() => [] as Notebook[]), [projectId]);
  const groups = useAsync(() => listAll<ResourceGroup>("resource_group").catch(() => [] as ResourceGroup[]), []);
  const set = (key: keyof Form) => (value: string) => setForm((old) => ({ ...old, [key]: value }));
  // packages[3] and friends: the line's reason shows under the packages box.
  const packagesReason = reasonFor("requirements") ?? reasonFor("packages")
    ?? (error instanceof ApiError ? error.errors.find((e) => e.field.startsWith("packages["))?.reason : undefined);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void run(async () => {
      const created = await api<ImageBuild>("/api/v1/image_build/", { method: "POST", body: buildBody(projectId, form) });
      onCreated(created);
    });
  };

  return (
    <form className="panel build-form" onSubmit={submit} noValidate aria-label="New build">
      <div className="field-row">
        <Field label="Repository" required error={reasonFor("repository")}
          hint="Where the image goes, e.g. registry.example.com/team/env">
          {(w) => <input {...w} name="repository" spellCheck={false} value={form.repository}
            onChange={(e) => set("repository")(e.target.value)} />}
        </Field>
        <Field label="Tag" required error={reasonFor("tag")}>
          {(w) => <input {...w} name="tag" spellCheck={false} value={form.tag} onChange={(e) => set("tag")(e.target.value)} />}
        </Field>
      </div>
      <fieldset className="source-choice">
        <legend>Build from</legend>
        {SOURCES.map((s) => (
          <label key={s.value}>
            <input type="radio" name="source" value={s.value} checked={form.source === s.value}
              onChange={() => set("source")(s.value)} /> {s.label}
          </label>
        ))}
      </fieldset>
      {form.source === "packages" && (
        <>
          <Field label="Base image" error={reasonFor("base_image")} hint="Default python:3.11-slim (locally: this machine's Python)">
            {(w) => <input {...w} name="base_image" spellCheck={false} value={form.baseImage}
              onChange={(e) => set("baseImage")(e.target.value)} />}
          </Field>
          <Field label="Python packages" error={packagesReason}
            hint="A requirements.txt: one requirement a line, e.g. six==1.17.0 (no options or URLs)">
            {(w) => <textarea {...w} name="requirements" rows={5} spellCheck={false} value={form.requirements}
              onChange={(e) => set("requirements")(e.target.value)} />}
          </Field>
          <Field label="apt packages" error={reasonFor("apt_packages")}
            hint="Kubernetes builds only: a local environment has no container to install them in">
            {(w) => <input {...w} name="apt_packages" spellCheck={false} value={form.aptPackages}
              onChange={(e) => set("aptPackages")(e.target.value)} />}
          </Field>
        </>
      )}
      {form.source === "dockerfile" && (
        <Field label="Dockerfile" required error={reasonFor("dockerfile")}
          hint="Built by Kaniko on a Kubernetes resource group; a local build has no container engine">
          {(w) => <textarea {...w} name="dockerfile" rows={8} spellCheck={false} value={form.dockerfile}
            onChange={(e) => set("dockerfile")(e.target.value)} />}
        </Field>
      )}
      {form.source === "notebook" && (
        <Field label="Notebook" required error={reasonFor("notebook_id")}
          hint="Its installed packages (pip freeze) become the build's package list">
          {(w) => (
            <select {...w} name="notebook_id" value={form.notebookId} onChange={(e) => set("notebookId")(e.target.value)}>
              <option value="">Choose…</option>
              {(notebooks.data ?? []).map((n) => <option key={n.id} value={n.id}>{n.name} ({n.image})</option>)}
            </select>
          )}
        </Field>
      )}
      <Field label="Build on" error={reasonFor("resource_group_id")}
        hint="A resource group of a Kubernetes cluster runs Kaniko; none builds a local environment">
        {(w) => (
          <select {...w} name="resource_group_id" value={form.resourceGroupId}
            onChange={(e) => set("resourceGroupId")(e.target.value)}>
            <option value="">This machine (a Python environment)</option>
            {(groups.data ?? []).map((g) => <option key={g.id} value={g.id}>{g.name}</option>)}
          </select>
        )}
      </Field>
      <UnplacedError error={error} fields={FIELDS} />
      <div className="form-actions">
        <button type="submit" className="primary" disabled={busy}>{busy ? "Asking…" : "Build"}</button>
      </div>
    </form>
  );
}
