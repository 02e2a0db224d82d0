// The selected project's model registry (/ui/models): versions per model with stage, framework,
// signature, metrics and the run that produced them; compare versions side by side (CompareVersions.tsx);
// deploy one as a service (a new one, or as a canary of the service already serving the model); upload a
// model file as a new version. `?deploy=<version id>` opens Deploy for that version (an experiment's best
// trial leads here).
import { useState } from "react";
import { api, describeError, listAll } from "../../api/client";
import { Dialog } from "../../components/Dialog";
import { ErrorBanner, Loading, PageHeader, formatTime } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import { Link, navigate, useLocation } from "../../router";
import { useProject } from "../../session";
import type { InferenceService, ModelStage, ModelVersion, ResourceGroup } from "../../types";
import { CompareVersions } from "./CompareVersions";
import { DTYPES, FRAMEWORKS, STAGES, byModel, formatMetric, formatSignature, serviceName, uploadForm } from "./logic";
import "./models.css";

/** Versions compared at once: the last ones ticked. */
const MAX_COMPARED = 4;

export default function ModelsPage() {
  const project = useProject();
  const versions = useAsync(() => listAll<ModelVersion>("model_version", { project_id: project.id }), [project.id]);
  const services = useAsync(() => listAll<InferenceService>("inference_service", { project_id: project.id }),
    [project.id]);
  const [picked, setPicked] = useState<number[]>([]);
  const [deploying, setDeploying] = useState<ModelVersion | null>(null);
  const [uploading, setUploading] = useState(false);
  const [actionError, setActionError] = useState<unknown>(null);
  const writer = project.role === "developer" || project.role === "owner";
  const all = versions.data ?? [];
  const deployId = Number(useLocation().search.get("deploy")) || null;
  const toDeploy = deploying ?? all.find((v) => v.id === deployId) ?? null;

  const setStage = async (v: ModelVersion, stage: ModelStage) => {
    setActionError(null);
    try {
      await api(`/api/v1/model_version/${v.id}`, { method: "PUT", body: { stage } });
    } catch (err) {
      setActionError(err);
    }
    versions.reload();
  };
  const toggle = (id: number) =>
    setPicked((now) => (now.includes(id) ? now.filter((x) => x !== id) : [...now.slice(1 - MAX_COMPARED), id]));
  const compared = picked.map((id) => all.find((v) => v.id === id)).filter((v): v is ModelVersion => !!v);

  return (
    <section className="models-page" aria-labelledby="models-title">
      <PageHeader title={<span id="models-title">Models</span>}>
        {writer && <button type="button" className="primary" onClick={() => setUploading(true)}>Upload</button>}
      </PageHeader>
      <ErrorBanner error={versions.error} />
      <ErrorBanner error={actionError} />
      {!versions.data ? (versions.loading && <Loading what="Loading models" />) : all.length === 0 ? (
        <div className="panel muted">No model versions in {project.name} yet: a pipeline's model-register task,
          <code> myapp model register</code>, Upload or the API adds them.</div>
      ) : byModel(all).map(([name, list]) => (
        <div key={name} className="panel model" data-model={name}>
          <h2>{name}</h2>
          <table className="data">
            <thead>
              <tr>
                <th scope="col"><span className="visually-hidden">Compare</span></th>
                <th scope="col">Version</th><th scope="col">Stage</th><th scope="col">Framework</th>
                <th scope="col">Signature</th><th scope="col">Metrics</th><th scope="col">Run</th>
                <th scope="col">Registered</th><th scope="col"><span className="visually-hidden">Actions</span></th>
              </tr>
            </thead>
            <tbody>
              {list.map((v) => (
                <tr key={v.id} data-version={v.version}>
                  <td><input type="checkbox" aria-label={`Compare ${name} v${v.version}`} checked={picked.includes(v.id)}
                    onChange={() => toggle(v.id)} /></td>
                  <td><strong>v{v.version}</strong></td>
                  <td>
                    <select aria-label={`Stage of ${name} v${v.version}`} value={v.stage} disabled={!writer}
                      onChange={(e) => void setStage(v, e.target.value as ModelStage)}>
                      {STAGES.map((s) => <option key={s} value={s}>{s}</option>)}
                    </select>
                  </td>
                  <td>{v.framework}</td>
                  <td><code>{formatSignature(v)}</code></td>
                  <td className="metrics">{Object.entries(v.metrics).map(([k, m]) => (
                    <span key={k}>{k} {formatMetric(m)}</span>))}</td>
                  <td>{v.run_id !== null ? <Link to={`/runs/${v.run_id}`}>run #{v.run_id}</Link>
                    : <span className="muted">—</span>}</td>
                  <td className="muted">{formatTime(v.created_at)}</td>
                  <td><button type="button" disabled={!writer} aria-label={`Deploy ${name} v${v.version}`}
                    onClick={() => setDeploying(v)}>Deploy</button></td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
      {compared.length >= 2 && <CompareVersions versions={compared} />}
      {toDeploy && (
        <DeployDialog version={toDeploy} services={(services.data ?? []).filter(
          (s) => s.model_name === toDeploy.name && !s.deleting)} onClose={() => {
          setDeploying(null);
          if (deployId !== null) navigate("/models", true);  // closed: not opened again by the next read
        }} />
      )}
      {uploading && (
        <UploadDialog names={byModel(all).map(([name]) => name)} onClose={() => setUploading(false)}
          onDone={() => { setUploading(false); versions.reload(); }} />
      )}
    </section>
  );
}

function DeployDialog({ version, services, onClose }: { version: ModelVersion; services: InferenceService[];
  onClose: () => void }) {
  const project = useProject();
  const [targetId, setTargetId] = useState(services[0]?.id);
  const existing = services.find((s) => s.id === targetId);
  const [mode, setMode] = useState<"new" | "canary">(existing ? "canary" : "new");
  const [name, setName] = useState(serviceName(version.name));
  const [weight, setWeight] = useState(10);
  // Where a new service runs: a resource group's cluster (its serving engine), or the platform's default.
  const [groupId, setGroupId] = useState("");
  const groups = useAsync(() => listAll<ResourceGroup>("resource_group").catch(() => [] as ResourceGroup[]), []);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async () => {
    setBusy(true);
    setError(null);
    try {
      if (mode === "new" || !existing) {
        const made = await api<InferenceService>("/api/v1/inference_service/", { method: "POST",
          body: { project_id: project.id, name, model_version_id: version.id,
            ...(groupId ? { resource_group_id: Number(groupId) } : {}) } });
        navigate(`/services?service=${made.id}`);
      } else {
        await api(`/api/v1/inference_service/${existing.id}/canary`, { method: "POST",
          body: { version_id: version.id, weight } });
        navigate(`/services?service=${existing.id}`);
      }
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  return (
    <Dialog title={`Deploy ${version.name} v${version.version}`} onClose={onClose}>
      <form className="deploy-form" onSubmit={(e) => { e.preventDefault(); void submit(); }}>
        {existing && (
          <fieldset>
            <legend>How</legend>
            <label><input type="radio" name="mode" checked={mode === "canary"} onChange={() => setMode("canary")} />
              Canary on {services.length > 1 ? "a service of this model" : existing.name}</label>
            <label><input type="radio" name="mode" checked={mode === "new"} onChange={() => setMode("new")} />
              New service</label>
          </fieldset>
        )}
        {mode === "canary" && services.length > 1 && (
          <label>Service
            <select aria-label="Service" value={targetId} onChange={(e) => setTargetId(Number(e.target.value))}>
              {services.map((s) => <option key={s.id} value={s.id}>{s.name}</option>)}
            </select>
          </label>
        )}
        {mode === "new" || !existing ? (
          <>
            <label>Service name
              <input value={name} onChange={(e) => setName(e.target.value)} required pattern="[a-z]([a-z0-9\-]*[a-z0-9])?" />
            </label>
            <label>Run on
              <select aria-label="Run on" value={groupId} onChange={(e) => setGroupId(e.target.value)}>
                <option value="">Default (this platform)</option>
                {(groups.data ?? []).map((g) => <option key={g.id} value={g.id}>{g.name}</option>)}
              </select>
            </label>
          </>
        ) : (
          <label>Canary weight: {weight} %
            <input type="range" min={0} max={100} value={weight} aria-label="Canary weight"
              onChange={(e) => setWeight(Number(e.target.value))} />
          </label>
        )}
        {error !== null && <p role="alert" className="error">{describeError(error)}</p>}
        <footer className="dialog-actions">
          <button type="button" onClick={onClose}>Cancel</button>
          <button type="submit" className="primary" disabled={busy}>Deploy</button>
        </footer>
      </form>
    </Dialog>
  );
}

function UploadDialog({ names, onClose, onDone }: { names: string[]; onClose: () => void; onDone: () => void }) {
  const project = useProject();
  const [name, setName] = useState(names[0] ?? "");
  const [framework, setFramework] = useState<string>("sklearn");
  const [shape, setShape] = useState("");
  const [dtype, setDtype] = useState<string>("float32");
  const [metrics, setMetrics] = useState("");
  const [description, setDescription] = useState("");
  const [file, setFile] = useState<File | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);

  const submit = async () => {
    if (!file) return;
    setBusy(true);
    setError(null);
    try {
      await api<ModelVersion>("/api/v1/model_version/upload", { method: "POST", body: uploadForm(
        { projectId: project.id, name, framework, shape, dtype, metrics, description }, file, file.name) });
      onDone();
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };
  return (
    <Dialog title="Upload a model version" onClose={onClose}>
      <form className="deploy-form" onSubmit={(e) => { e.preventDefault(); void submit(); }}>
        <label>Model name
          <input value={name} onChange={(e) => setName(e.target.value)} required list="model-names"
            pattern="[a-z]([a-z0-9\-]*[a-z0-9])?" />
          <datalist id="model-names">{names.map((n) => <option key={n} value={n} />)}</datalist>
        </label>
        <label>File
          <input type="file" required onChange={(e) => setFile(e.target.files?.[0] ?? null)} />
        </label>
        <label>Framework
          <select value={framework} onChange={(e) => setFramework(e.target.value)}>
            {FRAMEWORKS.map((f) => <option key={f} value={f}>{f}</option>)}
          </select>
        </label>
        <label>Input shape (n: any size)
          <input value={shape} onChange={(e) => setShape(e.target.value)} placeholder="n, 64" />
        </label>
        <label>Input type
          <select value={dtype} onChange={(e) => setDtype(e.target.value)}>
            {DTYPES.map((d) => <option key={d} value={d}>{d}</option>)}
          </select>
        </label>
        <label>Metrics (JSON)
          <input value={metrics} onChange={(e) => setMetrics(e.target.value)} placeholder='{"accuracy": 0.97}' />
        </label>
        <label>Description
          <input value={description} onChange={(e) => setDescription(e.target.value)} />
        </label>
        {error !== null && <p role="alert" className="error">{describeError(error)}</p>}
        <footer className="dialog-actions">
          <button type="button" onClick={onClose}>Cancel</button>
          <button type="submit" className="primary" disabled={busy || !file}>Upload</button>
        </footer>
      </form>
    </Dialog>
  );
}
