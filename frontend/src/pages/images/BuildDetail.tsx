// One build: its state and reason, its log (live over server-sent events while it runs, kept after) and
// who uses the image (notebooks, job templates, pipeline tasks).
import { useLayoutEffect, useRef, useState } from "react";
import { api } from "../../api/client";
import { ErrorBanner, formatTime } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import type { BuildLog, BuildLogLine, ImageBuild, ImageUsage } from "../../types";
import { useEventStream } from "../run/hooks";
import { mergeLines, reference } from "./logic";

/** Keyed by the build's id by its parent: another build starts with an empty log. */
export function BuildDetail({ build }: { build: ImageBuild }) {
  const [lines, setLines] = useState<BuildLogLine[]>([]);
  const status = useEventStream(`/api/v1/image_build/${build.id}/log_stream`, {
    lines: (data) => setLines((have) => mergeLines(have, (data as BuildLog).items)),
  });
  const usage = useAsync(() => api<ImageUsage>(`/api/v1/image_build/${build.id}/usage`), [build.id, build.state]);
  const box = useRef<HTMLPreElement>(null);
  useLayoutEffect(() => {
    if (box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines]);

  const users = usage.data;
  return (
    <section className="panel build-detail" aria-label={`Build ${build.id}`} data-build={build.id} data-state={build.state}>
      <h2>
        <code>{reference(build)}</code>{" "}
        <span className={`state state-${build.state}`} data-state={build.state}>{build.state}</span>
      </h2>
      {build.reason && <p className="reason build-reason" data-testid="build-reason">{build.reason}</p>}
      <p className="muted">
        Asked {formatTime(build.created_at)}
        {build.finished_at && <> · finished {formatTime(build.finished_at)}</>}
        {build.environment && <> · environment <code>{build.environment}</code>{build.cached && " (from the cache)"}</>}
      </p>
      <h3>Log <span className="muted stream-status">({status})</span></h3>
      <pre ref={box} className="build-log" role="log" aria-label="Build log" tabIndex={0}>
        {lines.length === 0 ? "No log lines yet." : lines.map((l) => l.line).join("\n")}
      </pre>
      <h3>Used by</h3>
      <ErrorBanner error={usage.error} />
      {users && (users.notebooks.length + users.templates.length + users.tasks.length === 0 ? (
        <p className="muted">Nothing uses {users.image} yet.</p>
      ) : (
        <ul className="usage">
          {users.notebooks.map((n) => <li key={`n${n.id}`}>notebook <strong>{n.name}</strong></li>)}
          {users.templates.map((t) => <li key={`t${t.id}`}>job template <strong>{t.name}</strong> {t.version}</li>)}
          {users.tasks.map((t) => <li key={`k${t.id}`}>task <strong>{t.name}</strong> of pipeline {t.pipeline_id}</li>)}
        </ul>
      ))}
    </section>
  );
}
