// Limits admins set: platform-wide (backfill length, minimum schedule interval; empty = the config's
// default) and each project's limit of runs running at once (empty = none; runs beyond it wait queued).
import { useState, type FormEvent } from "react";
import { api } from "../../api/client";
import { ErrorBanner, Loading } from "../../components/ui";
import { Field, UnplacedError, useSubmit } from "../../components/Field";
import { useAsync } from "../../lib/useAsync";
import type { Limits, PlatformLimit, ProjectLimit } from "../../types";
import { atLimit, describeSeconds, parseLimit, projectLoad } from "./limits";

type PlatformName = keyof Limits["platform"];
const PLATFORM: { name: PlatformName; label: string; unit: (n: number) => string }[] = [
  { name: "max_backfill_days", label: "Longest backfill (days)", unit: (n) => `${n} days` },
  { name: "min_schedule_interval", label: "Minimum schedule interval (seconds)", unit: describeSeconds },
];

export function LimitsTab() {
  const limits = useAsync(() => api<Limits>("/api/v1/limits/"), []);
  return (
    <div className="limits-tab">
      <ErrorBanner error={limits.error} />
      {!limits.data ? (limits.loading && <Loading what="Loading limits" />) : (
        <>
          <PlatformLimits platform={limits.data.platform} onSaved={limits.reload} />
          <ProjectLimits projects={limits.data.projects} onSaved={limits.reload} />
        </>
      )}
    </div>
  );
}

function PlatformLimits({ platform, onSaved }: { platform: Limits["platform"]; onSaved: () => void }) {
  const initial = (limit: PlatformLimit) => (limit.set ? String(limit.value) : "");
  const [texts, setTexts] = useState<Record<PlatformName, string>>({
    max_backfill_days: initial(platform.max_backfill_days),
    min_schedule_interval: initial(platform.min_schedule_interval),
  });
  const { busy, error, run, reasonFor } = useSubmit();
  const parsed = (name: PlatformName) => parseLimit(texts[name], platform[name].minimum, platform[name].maximum);
  const problems = PLATFORM.some(({ name }) => parsed(name).problem);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (problems) return;
    const body = Object.fromEntries(PLATFORM.map(({ name }) => [name, parsed(name).value]));
    void run(async () => {
      await api("/api/v1/limits/", { method: "PUT", body });
      onSaved();
    });
  };

  return (
    <section className="panel" aria-labelledby="platform-limits">
      <h2 id="platform-limits">Platform limits</h2>
      <form onSubmit={submit} noValidate className="limits-form">
        {PLATFORM.map(({ name, label, unit }) => {
          const limit = platform[name];
          return (
            <Field key={name} label={label} error={parsed(name).problem ?? reasonFor(name)}
              hint={`${sentence(limit.help)}. Now ${unit(limit.value)}${limit.set ? "" : " (the default)"}; empty: the default, ${unit(limit.default)}.`}>
              {(w) => <input {...w} name={name} inputMode="numeric" placeholder={String(limit.default)}
                value={texts[name]} onChange={(e) => setTexts({ ...texts, [name]: e.target.value })} />}
            </Field>
          );
        })}
        <UnplacedError error={error} fields={PLATFORM.map((p) => p.name)} />
        <div className="tab-actions">
          <button type="submit" className="primary" disabled={busy || problems}>Save platform limits</button>
        </div>
      </form>
    </section>
  );
}

function ProjectLimits({ projects, onSaved }: { projects: ProjectLimit[]; onSaved: () => void }) {
  return (
    <section className="panel" aria-labelledby="project-limits">
      <h2 id="project-limits">Runs running at once, per project</h2>
      <p className="hint">Runs beyond a project&apos;s limit wait queued and say why. Empty: no limit.</p>
      {projects.length === 0 ? <p className="muted">No projects yet.</p> : (
        <table className="data compact">
          <thead>
            <tr><th scope="col">Project</th><th scope="col">Runs now</th><th scope="col">Limit</th></tr>
          </thead>
          <tbody>
            {projects.map((p) => <ProjectRow key={p.id} project={p} onSaved={onSaved} />)}
          </tbody>
        </table>
      )}
    </section>
  );
}

const MAX_RUNNING = 10_000;

function ProjectRow({ project, onSaved }: { project: ProjectLimit; onSaved: () => void }) {
  const [text, setText] = useState(project.max_running_runs === null ? "" : String(project.max_running_runs));
  const { busy, error, run, reasonFor } = useSubmit();
  const parsed = parseLimit(text, 1, MAX_RUNNING);
  const saved = project.max_running_runs === parsed.value;
  const problem = parsed.problem ?? reasonFor("max_running_runs");

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (parsed.problem) return;
    void run(async () => {
      await api(`/api/v1/limits/project/${project.id}`, { method: "PUT", body: { max_running_runs: parsed.value } });
      onSaved();
    });
  };

  return (
    <tr data-project={project.name}>
      <th scope="row">{project.name}</th>
      <td className={atLimit(project) ? "warning" : undefined}>{projectLoad(project)}</td>
      <td>
        <form onSubmit={submit} noValidate className="inline-form">
          <input name="max_running_runs" inputMode="numeric" placeholder="no limit" value={text}
            aria-label={`Limit of runs running at once for ${project.name}`} aria-invalid={Boolean(problem)}
            onChange={(e) => setText(e.target.value)} />
          <button type="submit" disabled={busy || saved || Boolean(parsed.problem)}>Save</button>
          {problem && <span className="field-error">{problem}</span>}
          {!problem && error !== null && <ErrorBanner error={error} />}
        </form>
      </td>
    </tr>
  );
}

function sentence(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

