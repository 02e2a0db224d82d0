// What an attempt wrote to MYAPP_OUTPUT_DIR: the files (download, preview of text, CSV, images) and the
// metrics it reported in metrics.jsonl, charted over steps.
import { useEffect, useState } from "react";
import { api, qs } from "../../api";
import { ErrorBanner, Loading } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import type { AttemptSummary, OutputFile, TaskOutputs } from "../../types";
import { isActive } from "./attempts";
import { formatBytes } from "./chart";
import { useInterval } from "./hooks";
import { replicaColor } from "./logBuffer";
import { StepChart } from "./StepChart";
import { metricNames, stepPoints } from "./stepSeries";

export function fileUrl(attemptId: number, path: string, preview = false): string {
  return `/api/v1/task_run/${attemptId}/output${qs({ path, preview: preview ? "1" : undefined })}`;
}

/** CSV text → rows of cells (quotes honoured; enough for a preview, not a full parser). */
export function parseCsv(text: string, separator = ","): string[][] {
  const rows: string[][] = [];
  for (const line of text.split(/\r?\n/)) {
    if (!line) continue;
    const cells: string[] = [];
    let cell = "";
    let quoted = false;
    for (let i = 0; i < line.length; i++) {
      const ch = line[i];
      if (quoted) {
        if (ch === '"' && line[i + 1] === '"') { cell += '"'; i++; }
        else if (ch === '"') quoted = false;
        else cell += ch;
      } else if (ch === '"') quoted = true;
      else if (ch === separator) { cells.push(cell); cell = ""; }
      else cell += ch;
    }
    cells.push(cell);
    rows.push(cells);
  }
  return rows;
}

function Preview({ attemptId, file }: { attemptId: number; file: OutputFile }) {
  const [text, setText] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    if (file.preview === "image" || file.preview === "none") return;
    let current = true;
    fetch(fileUrl(attemptId, file.path, true), { credentials: "same-origin" })
      .then(async (r) => {
        if (!r.ok) throw new Error(`${r.status} ${r.statusText}`);
        return r.text();
      })
      .then((t) => current && setText(t), (e: unknown) => current && setError(e));
    return () => { current = false; };
  }, [attemptId, file]);

  if (file.preview === "image") {
    return <img className="output-image" src={fileUrl(attemptId, file.path)} alt={`Preview of ${file.path}`} />;
  }
  if (file.preview === "none") return <p className="muted">No preview for this kind of file: download it.</p>;
  if (error) return <ErrorBanner error={error} />;
  if (text === null) return <Loading what="Loading preview" />;
  if (file.preview === "csv") {
    const rows = parseCsv(text, file.path.endsWith(".tsv") ? "\t" : ",").slice(0, 51);
    const [head, ...body] = rows;
    return (
      <div className="output-table-wrap">
        <table className="output-table" aria-label={`Preview of ${file.path}`}>
          {head && <thead><tr>{head.map((c, i) => <th key={i}>{c}</th>)}</tr></thead>}
          <tbody>{body.map((row, r) => <tr key={r}>{row.map((c, i) => <td key={i}>{c}</td>)}</tr>)}</tbody>
        </table>
      </div>
    );
  }
  return <pre className="output-text" aria-label={`Preview of ${file.path}`}>{text}</pre>;
}

export function OutputsTab({ attempt }: { attempt: AttemptSummary }) {
  const active = isActive(attempt.state);
  const outputs = useAsync(() => api<TaskOutputs>(`/api/v1/task_run/${attempt.id}/outputs`), [attempt.id]);
  useInterval(outputs.reload, 3000, active);
  const { reload } = outputs;
  useEffect(() => {
    if (!active) reload();
  }, [active, reload]);
  const [open, setOpen] = useState<string | null>(null);

  if (!outputs.data) return outputs.error ? <ErrorBanner error={outputs.error} /> : <Loading what="Loading outputs" />;
  const { files, metrics, output_dir } = outputs.data;
  const names = metricNames(metrics);
  const shown = files.find((f) => f.path === open) ?? null;
  return (
    <div className="outputs-tab">
      <ErrorBanner error={outputs.error} />
      {output_dir && (
        <p className="muted">
          Written to <code>/myapp/outputs/{output_dir}</code> (MYAPP_OUTPUT_DIR).
          {files.length > 0 && <> <a href={`/api/v1/task_run/${attempt.id}/output`}>Download all (zip)</a></>}
        </p>
      )}
      {names.length > 0 && (
        <div className="charts" aria-label="Reported metrics">
          {names.map((name) => (
            <figure key={name} className="chart">
              <figcaption>{name}</figcaption>
              <StepChart series={[{ name, points: stepPoints(metrics, name) }]} label={`${name} over steps`}
                colorOf={replicaColor} />
            </figure>
          ))}
        </div>
      )}
      {files.length === 0
        ? <p className="muted">
          No output files{active ? " yet" : ""}.
          {attempt.backend === "kubernetes" && output_dir && <> On Kubernetes the files are listed once the attempt
            has uploaded them to the outputs store; without one they stay on the project&apos;s outputs claim, which
            the platform does not read (downstream tasks do).</>}
        </p>
        : (
          <table className="outputs-list" aria-label="Output files">
            <thead><tr><th>File</th><th>Size</th><th /></tr></thead>
            <tbody>
              {files.map((f) => (
                <tr key={f.path} aria-selected={f.path === open}>
                  <td>
                    <button type="button" className="link" onClick={() => setOpen(f.path === open ? null : f.path)}>
                      {f.path}
                    </button>
                  </td>
                  <td>{formatBytes(f.size)}</td>
                  <td><a href={fileUrl(attempt.id, f.path)} download={f.path.split("/").pop()}>Download</a></td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      {shown && (
        <section className="output-preview" aria-label={`File ${shown.path}`}>
          <h3>{shown.path}</h3>
          <Preview attemptId={attempt.id} file={shown} />
        </section>
      )}
    </div>
  );
}
