// Create or edit a resource group: capacity as Kubernetes quantities, placement on nodes, Volcano queue.
import { useState, type FormEvent } from "react";
import { api } from "../../api/client";
import type { Cluster, ResourceGroup, ResourceGroupBody } from "../../types";
import { Dialog, SubmitActions } from "../../components/Dialog";
import { Field, UnplacedError, useSubmit } from "../../components/Field";
import { dnsLabelProblem } from "../pipelines/logic";
import { formatKeyValues, parseKeyValues } from "./keyValues";
import { gpuProblem, quantityProblem } from "./quantity";
import { orNull, type FormProps } from "./ResourceTab";

const FIELDS = ["name", "cluster_id", "cpu", "memory", "gpus", "gpu_type", "node_selector", "queue", "gang_scheduling", "discover_nodes"];

export function ResourceGroupForm({ item, onClose, onSaved, clusters }: FormProps<ResourceGroup> & { clusters: Cluster[] }) {
  const [name, setName] = useState(item?.name ?? "");
  const [clusterId, setClusterId] = useState(String(item?.cluster_id ?? (clusters.length === 1 ? clusters[0].id : "")));
  const [cpu, setCpu] = useState(item?.cpu ?? "");
  const [memory, setMemory] = useState(item?.memory ?? "");
  const [gpus, setGpus] = useState(String(item?.gpus ?? 0));
  const [gpuType, setGpuType] = useState(item?.gpu_type ?? "");
  const [nodeSelector, setNodeSelector] = useState(formatKeyValues(item?.node_selector ?? {}));
  const [queue, setQueue] = useState(item?.queue ?? "");
  const [gang, setGang] = useState(item?.gang_scheduling ?? false);
  const [discover, setDiscover] = useState(item?.discover_nodes ?? false);
  const [checked, setChecked] = useState(false);
  const { busy, error, run, reasonFor } = useSubmit();

  const selector = parseKeyValues(nodeSelector);
  const problems: Record<string, string | null> = {
    name: dnsLabelProblem(name),
    cluster_id: clusterId ? null : "pick a cluster",
    cpu: quantityProblem(cpu, "cpu"),
    memory: quantityProblem(memory, "memory"),
    gpus: gpuProblem(gpus),
    node_selector: "problem" in selector ? selector.problem : null,
    queue: queue.trim() ? dnsLabelProblem(queue.trim()) : null,
  };
  // A field's own check shows once the user typed in it or tried to save; the server's reason otherwise.
  const errorOf = (field: string, value: string) =>
    ((checked || value) ? problems[field] : null) ?? reasonFor(field);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setChecked(true);
    if (Object.values(problems).some(Boolean) || !("map" in selector)) return;
    const body = {
      name, cluster_id: Number(clusterId), cpu: cpu.trim(), memory: memory.trim(), gpus: Number(gpus),
      gpu_type: orNull(gpuType), node_selector: selector.map, queue: orNull(queue), gang_scheduling: gang,
      discover_nodes: discover,
    } satisfies ResourceGroupBody;
    void run(async () => {
      await api(item ? `/api/v1/resource_group/${item.id}` : "/api/v1/resource_group/",
        { method: item ? "PUT" : "POST", body });
      onSaved();
    });
  };

  return (
    <Dialog title={item ? `Edit resource group ${item.name}` : "New resource group"} onClose={onClose} wide>
      <form onSubmit={submit} noValidate className="form-grid">
        <Field label="Name" required error={errorOf("name", name)}>
          {(w) => <input {...w} name="name" autoComplete="off" spellCheck={false} value={name}
            onChange={(e) => setName(e.target.value)} />}
        </Field>
        <Field label="Cluster" required error={errorOf("cluster_id", clusterId)}>
          {(w) => (
            <select {...w} name="cluster_id" value={clusterId} onChange={(e) => setClusterId(e.target.value)}>
              <option value="">Choose a cluster…</option>
              {clusters.map((c) => <option key={c.id} value={c.id}>{c.name} ({c.kind})</option>)}
            </select>
          )}
        </Field>
        <Field label="CPU" required error={errorOf("cpu", cpu)} hint="Cores: 64, or millicores: 500m.">
          {(w) => <input {...w} name="cpu" spellCheck={false} value={cpu} onChange={(e) => setCpu(e.target.value)} />}
        </Field>
        <Field label="Memory" required error={errorOf("memory", memory)} hint="256Gi, 512Mi…">
          {(w) => <input {...w} name="memory" spellCheck={false} value={memory} onChange={(e) => setMemory(e.target.value)} />}
        </Field>
        <Field label="GPUs" error={errorOf("gpus", gpus)}>
          {(w) => <input {...w} name="gpus" type="number" min={0} step={1} value={gpus}
            onChange={(e) => setGpus(e.target.value)} />}
        </Field>
        <Field label="GPU type" error={reasonFor("gpu_type")} hint="e.g. nvidia-a100; optional.">
          {(w) => <input {...w} name="gpu_type" spellCheck={false} value={gpuType} onChange={(e) => setGpuType(e.target.value)} />}
        </Field>
        <Field label="Node selector" className="span-2" error={errorOf("node_selector", nodeSelector)}
          hint="One key=value per line; pods of this group only run on matching nodes.">
          {(w) => <textarea {...w} name="node_selector" rows={3} spellCheck={false} className="code-input"
            value={nodeSelector} onChange={(e) => setNodeSelector(e.target.value)} />}
        </Field>
        <Field label="Volcano queue" error={errorOf("queue", queue)} hint="Optional; where Volcano is installed.">
          {(w) => <input {...w} name="queue" spellCheck={false} value={queue} onChange={(e) => setQueue(e.target.value)} />}
        </Field>
        <div className="field checkbox-field">
          <label className="inline">
            <input type="checkbox" name="gang_scheduling" checked={gang} onChange={(e) => setGang(e.target.checked)} />
            Gang scheduling (all pods of a job start together)
          </label>
          {reasonFor("gang_scheduling") && <span className="field-error">{reasonFor("gang_scheduling")}</span>}
        </div>
        <div className="field checkbox-field">
          <label className="inline">
            <input type="checkbox" name="discover_nodes" checked={discover} onChange={(e) => setDiscover(e.target.checked)} />
            Discover its nodes (those matching the node selector; Kubernetes only)
          </label>
          {reasonFor("discover_nodes") && <span className="field-error">{reasonFor("discover_nodes")}</span>}
        </div>
        <div className="span-2">
          <UnplacedError error={error} fields={FIELDS} />
          <SubmitActions onCancel={onClose} busy={busy} label={item ? "Save" : "Create"} busyLabel="Saving…" />
        </div>
      </form>
    </Dialog>
  );
}
