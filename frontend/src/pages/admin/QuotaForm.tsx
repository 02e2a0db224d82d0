// Create or edit a quota: what one project may use of one resource group; the pair is fixed once created.
import { useState, type FormEvent } from "react";
import { api } from "../../api/client";
import type { Project, Quota, QuotaBody, ResourceGroup } from "../../types";
import { Dialog, SubmitActions } from "../../components/Dialog";
import { Field, UnplacedError, useSubmit } from "../../components/Field";
import { gpuProblem, quantityProblem } from "./quantity";
import type { FormProps } from "./ResourceTab";

const FIELDS = ["project_id", "resource_group_id", "cpu", "memory", "gpus"];

interface Props extends FormProps<Quota> {
  projects: Project[];
  groups: ResourceGroup[];
}

export function QuotaForm({ item, onClose, onSaved, projects, groups }: Props) {
  const [projectId, setProjectId] = useState(String(item?.project_id ?? ""));
  const [groupId, setGroupId] = useState(String(item?.resource_group_id ?? ""));
  const [cpu, setCpu] = useState(item?.cpu ?? "");
  const [memory, setMemory] = useState(item?.memory ?? "");
  const [gpus, setGpus] = useState(String(item?.gpus ?? 0));
  const [checked, setChecked] = useState(false);
  const { busy, error, run, reasonFor } = useSubmit();

  const problems: Record<string, string | null> = {
    project_id: projectId ? null : "pick a project",
    resource_group_id: groupId ? null : "pick a resource group",
    cpu: quantityProblem(cpu, "cpu"),
    memory: quantityProblem(memory, "memory"),
    gpus: gpuProblem(gpus),
  };
  const errorOf = (field: string, value: string) => ((checked || value) ? problems[field] : null) ?? reasonFor(field);
  const group = groups.find((g) => String(g.id) === groupId);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setChecked(true);
    if (Object.values(problems).some(Boolean)) return;
    const amounts = { cpu: cpu.trim(), memory: memory.trim(), gpus: Number(gpus) } satisfies Partial<QuotaBody>;
    void run(async () => {
      if (item) await api(`/api/v1/quota/${item.id}`, { method: "PUT", body: amounts });
      else await api("/api/v1/quota/", {
        method: "POST", body: { project_id: Number(projectId), resource_group_id: Number(groupId), ...amounts } satisfies QuotaBody,
      });
      onSaved();
    });
  };

  const fixed = item ? "Cannot be changed after creation." : undefined;
  return (
    <Dialog title={item ? "Edit quota" : "New quota"} onClose={onClose}>
      <form onSubmit={submit} noValidate className="form-grid">
        <Field label="Project" required error={errorOf("project_id", projectId)} hint={fixed}>
          {(w) => (
            <select {...w} name="project_id" value={projectId} disabled={Boolean(item)}
              onChange={(e) => setProjectId(e.target.value)}>
              <option value="">Choose a project…</option>
              {projects.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
            </select>
          )}
        </Field>
        <Field label="Resource group" required error={errorOf("resource_group_id", groupId)} hint={fixed}>
          {(w) => (
            <select {...w} name="resource_group_id" value={groupId} disabled={Boolean(item)}
              onChange={(e) => setGroupId(e.target.value)}>
              <option value="">Choose a resource group…</option>
              {groups.map((g) => <option key={g.id} value={g.id}>{g.name}</option>)}
            </select>
          )}
        </Field>
        <Field label="CPU" required error={errorOf("cpu", cpu)} hint={group ? `The group has ${group.cpu}.` : "e.g. 16 or 500m"}>
          {(w) => <input {...w} name="cpu" spellCheck={false} value={cpu} onChange={(e) => setCpu(e.target.value)} />}
        </Field>
        <Field label="Memory" required error={errorOf("memory", memory)}
          hint={group ? `The group has ${group.memory}.` : "e.g. 64Gi"}>
          {(w) => <input {...w} name="memory" spellCheck={false} value={memory} onChange={(e) => setMemory(e.target.value)} />}
        </Field>
        <Field label="GPUs" error={errorOf("gpus", gpus)} hint={group ? `The group has ${group.gpus}.` : undefined}>
          {(w) => <input {...w} name="gpus" type="number" min={0} step={1} value={gpus}
            onChange={(e) => setGpus(e.target.value)} />}
        </Field>
        <div className="span-2">
          <UnplacedError error={error} fields={FIELDS} />
          <SubmitActions onCancel={onClose} busy={busy} label={item ? "Save" : "Create"} busyLabel="Saving…" />
        </div>
      </form>
    </Dialog>
  );
}
