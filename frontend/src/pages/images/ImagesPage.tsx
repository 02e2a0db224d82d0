// The selected project's image builds (/ui/images): ask for a build, follow its live log, see the history
// and which notebooks, templates and tasks use an image. A worker builds (Kaniko on Kubernetes, a Python
// environment locally); the page records intent and polls the history while something is building.
import { useEffect, useState } from "react";
import { list } from "../../api";
import { ErrorBanner, formatTime, Loading, PageHeader } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import { useProject } from "../../session";
import type { ImageBuild } from "../../types";
import { BuildDetail } from "./BuildDetail";
import { BuildForm } from "./BuildForm";
import { RegistryCredentialsForm } from "./RegistryCredentialsForm";
import { pollInterval, reference, sourceLabel } from "./logic";
import "./images.css";

export default function ImagesPage() {
  const project = useProject();
  const { data, error, loading, reload } = useAsync(
    () => list<ImageBuild>("image_build", { project_id: project.id, order: "-id", page_size: 50 }), [project.id]);
  const [selected, setSelected] = useState<number | null>(null);
  const builds = data?.items ?? [];
  const interval = pollInterval(builds);
  useEffect(() => {
    const timer = window.setInterval(reload, interval);
    return () => window.clearInterval(timer);
  }, [interval, reload]);
  const writer = project.role === "developer" || project.role === "owner";
  const current = builds.find((b) => b.id === selected) ?? null;

  return (
    <section className="images-page" aria-labelledby="images-title">
      <PageHeader title={<span id="images-title">Images</span>} />
      {writer ? (
        <BuildForm projectId={project.id} onCreated={(build) => { setSelected(build.id); reload(); }} />
      ) : (
        <p className="muted">Developers and owners build images.</p>
      )}
      <RegistryCredentialsForm projectId={project.id} owner={project.role === "owner"} />
      <ErrorBanner error={error} />
      <h2>History</h2>
      {!data ? (loading && <Loading what="Loading builds" />) : builds.length === 0 ? (
        <div className="panel muted">No builds in {project.name} yet.</div>
      ) : (
        <table className="data build-table">
          <thead>
            <tr>
              <th scope="col">Image</th>
              <th scope="col">From</th>
              <th scope="col">State</th>
              <th scope="col">Asked</th>
              <th scope="col"><span className="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {builds.map((b) => (
              <tr key={b.id} data-build={b.id} data-state={b.state} aria-selected={b.id === selected}>
                <td><code>{reference(b)}</code></td>
                <td className="muted">{sourceLabel(b)}</td>
                <td className="state-cell">
                  <span className={`state state-${b.state}`}>{b.state}</span>
                  {b.reason && <span className="reason">{b.reason.split("\n")[0]}</span>}
                </td>
                <td className="muted">{formatTime(b.created_at)}</td>
                <td className="row-actions">
                  <button type="button" aria-label={`Show build ${b.id}`} onClick={() => setSelected(b.id)}>Log</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {current && <BuildDetail key={current.id} build={current} />}
    </section>
  );
}
