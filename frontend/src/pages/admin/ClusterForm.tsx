// Create or edit a cluster; its kind is fixed once created (the server refuses a change).
import { useState, type FormEvent } from "react";
import { api } from "../../api/client";
import type { Cluster, ClusterBody, ClusterKind, ServingEngine } from "../../types";
import { Dialog, SubmitActions } from "../../components/Dialog";
import { Field, UnplacedError, useSubmit } from "../../components/Field";
import { dnsLabelProblem } from "../pipelines/logic";
import { orNull, type FormProps } from "./ResourceTab";

const FIELDS = ["name", "kind", "kube_context", "in_cluster", "prometheus_url", "enabled", "serving_engine"];

export function ClusterForm({ item, onClose, onSaved }: FormProps<Cluster>) {
  const [name, setName] = useState(item?.name ?? "");
  const [kind, setKind] = useState<ClusterKind>(item?.kind ?? "kubernetes");
  const [kubeContext, setKubeContext] = useState(item?.kube_context ?? "");
  const [inCluster, setInCluster] = useState(item?.in_cluster ?? false);
  const [prometheusUrl, setPrometheusUrl] = useState(item?.prometheus_url ?? "");
  const [enabled, setEnabled] = useState(item?.enabled ?? true);
  // Unset on a new cluster: the platform's default (MYAPP_SERVING_KSERVE) decides.
  const [servingEngine, setServingEngine] = useState<ServingEngine | "">(item?.serving_engine ?? "");
  const [checked, setChecked] = useState(false);
  const { busy, error, run, reasonFor } = useSubmit();
  const nameProblem = dnsLabelProblem(name);
  const kubernetes = kind === "kubernetes";

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setChecked(true);
    if (nameProblem) return;
    const body = {
      name,
      ...(item ? {} : { kind }),
      // Connection settings mean nothing for the local backend: clear them.
      kube_context: kubernetes && !inCluster ? orNull(kubeContext) : null,
      in_cluster: kubernetes && inCluster,
      prometheus_url: orNull(prometheusUrl),
      enabled,
      // Only Kubernetes clusters run KServe; a local one always serves with its own processes.
      ...(kubernetes && servingEngine ? { serving_engine: servingEngine } : {}),
    } satisfies Partial<ClusterBody>;
    void run(async () => {
      await api(item ? `/api/v1/cluster/${item.id}` : "/api/v1/cluster/", { method: item ? "PUT" : "POST", body });
      onSaved();
    });
  };

  return (
    <Dialog title={item ? `Edit cluster ${item.name}` : "New cluster"} onClose={onClose}>
      <form onSubmit={submit} noValidate>
        <Field label="Name" required error={(checked || name ? nameProblem : null) ?? reasonFor("name")}>
          {(w) => <input {...w} name="name" autoComplete="off" spellCheck={false} value={name}
            onChange={(e) => setName(e.target.value)} />}
        </Field>
        <Field label="Kind" error={reasonFor("kind")} hint={item ? "Cannot be changed after creation." : undefined}>
          {(w) => (
            <select {...w} name="kind" value={kind} disabled={Boolean(item)}
              onChange={(e) => setKind(e.target.value as ClusterKind)}>
              <option value="kubernetes">kubernetes</option>
              <option value="local">local (processes on this machine)</option>
            </select>
          )}
        </Field>
        {kubernetes && (
          <>
            <label className="inline">
              <input type="checkbox" name="in_cluster" checked={inCluster} onChange={(e) => setInCluster(e.target.checked)} />
              Use the in-cluster service account
            </label>
            {reasonFor("in_cluster") && <p className="field-error">{reasonFor("in_cluster")}</p>}
            {!inCluster && (
              <Field label="Kubeconfig context" error={reasonFor("kube_context")}
                hint="Empty: the kubeconfig's current context.">
                {(w) => <input {...w} name="kube_context" spellCheck={false} value={kubeContext}
                  onChange={(e) => setKubeContext(e.target.value)} />}
              </Field>
            )}
            <Field label="Serving engine" error={reasonFor("serving_engine")}
              hint="What inference services on this cluster become; a change moves them on their next look.">
              {(w) => (
                <select {...w} name="serving_engine" value={servingEngine}
                  onChange={(e) => setServingEngine(e.target.value as ServingEngine | "")}>
                  {!item && <option value="">platform default</option>}
                  <option value="deployments">Deployments + Istio (the platform's own)</option>
                  <option value="kserve">KServe InferenceServices (KServe installed)</option>
                </select>
              )}
            </Field>
          </>
        )}
        <Field label="Prometheus URL" error={reasonFor("prometheus_url")} hint="For task metrics; optional.">
          {(w) => <input {...w} name="prometheus_url" type="url" placeholder="http://prometheus:9090" value={prometheusUrl}
            onChange={(e) => setPrometheusUrl(e.target.value)} />}
        </Field>
        <label className="inline">
          <input type="checkbox" name="enabled" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
          Enabled
        </label>
        {reasonFor("enabled") && <p className="field-error">{reasonFor("enabled")}</p>}
        <UnplacedError error={error} fields={FIELDS} />
        <SubmitActions onCancel={onClose} busy={busy} label={item ? "Save" : "Create"} busyLabel="Saving…" />
      </form>
    </Dialog>
  );
}
