// What an attempt wrote to MYAPP_OUTPUT_DIR: the files (download, preview of text, CSV, images) and the
// metrics it reported in metrics.jsonl, charted over steps.
import { useEffect, useState } from "react";
import { api, qs } from "../../api/client";
import { ErrorBanner, Loading } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import type { AttemptSummary, OutputFile, TaskOutputs } from "../../types";
import { isActive } from "./attempts";
import { Chart } from "../../components/charts/Chart";
import { formatBytes } from "../../components/charts/format";
import { lineOption } from "../../components/charts/options";
import { useInterval } from "./hooks";
import { replicaColor } from "./logBuffer";
import { metricNames, stepPoints } from "./stepSeries";

export function fileUrl(attemptId: number, path: string, preview = false): string {
  return `/api/v1/task_run/${attemptId}/output${qs({ path, preview: preview ? "1" : undefined })}`;
}

/** Seconds to wait before asking again for a file being fetched from the cluster (its Retry-After, 1 to 60). */
export function retryDelay(retryAfter: string | null): number {
  const seconds = Number(retryAfter);
  return Number.isFinite(seconds) && seconds > 0 ? Math.min(60, Math.max(1, Math.round(seconds))) : 5;
}

/** How the run view asks the network and waits (a test gives its own). */
export interface FetchIo {
  fetch: (url: string, init: RequestInit) => Promise<Response>;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) { reject(signal.reason); return; }
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => { clearTimeout(timer); reject(signal.reason); }, { once: true });
  });
}

const browserIo: FetchIo = { fetch: (url, init) => fetch(url, init), sleep };

/** Ask for a file that may first have to be fetched from a Kubernetes outputs claim (the API answers 202
 * meanwhile, for a download or a preview alike): say so (onFetching) and ask again after its Retry-After,
 * until another answer comes, which it resolves with. Rejects once signal aborts (the view moved on). */
export async function untilFetched(url: string, method: "GET" | "HEAD", signal: AbortSignal,
  onFetching: () => void, io: FetchIo = browserIo): Promise<Response> {
  for (;;) {
    const answer = await io.fetch(url, { method, credentials: "same-origin", signal });
    if (answer.status !== 202) return answer;
    onFetching();
    await io.sleep(retryDelay(answer.headers.get("Retry-After")) * 1000, signal);
  }
}

/** Why a file could not be had: the API's message. A HEAD answer has no body: GET says why (the API keeps a
 * failed fetch from the cluster for that GET, and starts again after). */
export async function failure(answer: Response, url: string, method: "GET" | "HEAD", signal: AbortSignal,
  io: FetchIo = browserIo): Promise<string> {
  const told = method === "HEAD" ? await io.fetch(url, { credentials: "same-origin", signal }) : answer;
  const body = (await told.json().catch(() => ({}))) as { message?: string };
  return body.message ?? `${answer.status} ${answer.statusText}`;
}

function FetchingNote() {
  return <span className="muted" role="status"> fetching from the cluster…</span>;
}

/** A download that may first have to be fetched from a Kubernetes outputs claim: asked with HEAD until it is
 * here, then downloaded. */
function ClaimDownload({ url, name }: { url: string; name: string }) {
  const [state, setState] = useState<"idle" | "fetching" | string>("idle");
  const [asked, setAsked] = useState(0);
  useEffect(() => {
    if (asked === 0) return;
    const control = new AbortController();
    const { signal } = control;
    untilFetched(url, "HEAD", signal, () => setState("fetching"))
      .then(async (answer) => {
        const reason = answer.ok ? null : await failure(answer, url, "HEAD", signal);
        if (signal.aborted) return;
        setState(reason ?? "idle");
        if (reason !== null) return;
        const link = document.createElement("a");
        link.href = url;
        link.download = name;
        link.click();
      })
      .catch((e: unknown) => { if (!signal.aborted) setState(String(e)); });
    return () => control.abort();
  }, [asked, url, name]);
  return (
    <>
      <a href={url} download={name} onClick={(e) => { e.preventDefault(); setAsked((n) => n + 1); }}>Download</a>
      {state === "fetching" && <FetchingNote />}
      {state !== "idle" && state !== "fetching" && <span className="error" role="alert"> {state}</span>}
    </>
  );
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

/** A file's preview: text, CSV and metrics by their first 64 KiB, images as they are. A file left on a
 * Kubernetes outputs claim is fetched first (its start, or a whole image), "fetching from the cluster…" meanwhile. */
function Preview({ attemptId, file }: { attemptId: number; file: OutputFile }) {
  const [text, setText] = useState<string | null>(null);
  const [imageHere, setImageHere] = useState(false);
  const [fetching, setFetching] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const image = file.preview === "image";
  useEffect(() => {
    if (file.preview === "none" || (image && !file.on_claim)) return;  // a copied image: the <img> asks for it
    const control = new AbortController();
    const { signal } = control;
    const method = image ? "HEAD" : "GET";
    const url = fileUrl(attemptId, file.path, !image);
    untilFetched(url, method, signal, () => setFetching(true))
      .then(async (answer) => {
        if (!answer.ok) throw new Error(await failure(answer, url, method, signal));
        const body = image ? null : await answer.text();
        if (signal.aborted) return;
        setFetching(false);
        if (body === null) setImageHere(true);
        else setText(body);
      })
      .catch((e: unknown) => { if (!signal.aborted) setError(e); });
    return () => control.abort();
  }, [attemptId, file, image]);

  if (file.preview === "none") return <p className="muted">No preview for this kind of file: download it.</p>;
  if (error) return <ErrorBanner error={error} />;
  if (image && (imageHere || !file.on_claim)) {
    return <img className="output-image" src={fileUrl(attemptId, file.path)} alt={`Preview of ${file.path}`} />;
  }
  if (fetching) return <p className="muted"><FetchingNote /></p>;
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
              <Chart label={`${name} over steps`} option={lineOption({
                series: [{ name, points: stepPoints(metrics, name), color: replicaColor(name) }],
                x: { name: "step", integer: true }, y: { name } })} />
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
                  <td>
                    {f.on_claim || (attempt.backend === "kubernetes" && f.preview === "none")  // rows kept before on_claim
                      ? <ClaimDownload url={fileUrl(attempt.id, f.path)} name={f.path.split("/").pop() ?? f.path} />
                      : <a href={fileUrl(attempt.id, f.path)} download={f.path.split("/").pop()}>Download</a>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      {shown && (
        <section className="output-preview" aria-label={`File ${shown.path}`}>
          <h3>{shown.path}</h3>
          <Preview key={shown.path} attemptId={attempt.id} file={shown} />
        </section>
      )}
    </div>
  );
}
