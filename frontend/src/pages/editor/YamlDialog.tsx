// The pipeline as YAML (GET …/export), with copy, and an edit mode that imports the text
// (POST /api/v1/pipeline/import: creates or updates the pipeline the YAML names).
import { useEffect, useRef, useState } from "react";
import { api, ApiError } from "../../api/client";
import { ErrorBanner, Loading } from "../../components/ui";
import type { Pipeline, PipelineExport, PipelineYamlBody } from "../../types";
import { Dialog } from "../../components/Dialog";

interface YamlDialogProps {
  pipelineId: number;
  pipelineName: string;
  readOnly: boolean;
  /** Unsaved graph changes would be lost by an import: ask first. */
  dirty: boolean;
  onImported: (pipeline: Pipeline) => void;
  onClose: () => void;
}

export function YamlDialog({ pipelineId, pipelineName, readOnly, dirty, onImported, onClose }: YamlDialogProps) {
  const [exported, setExported] = useState<string | null>(null);
  const [text, setText] = useState("");
  const [editing, setEditing] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [copied, setCopied] = useState(false);
  const area = useRef<HTMLTextAreaElement>(null);

  useEffect(() => {
    let live = true;
    api<PipelineExport>(`/api/v1/pipeline/${pipelineId}/export`).then(
      (r) => { if (live) { setExported(r.yaml); setText(r.yaml); } },
      (err: unknown) => { if (live) setError(err); },
    );
    return () => { live = false; };
  }, [pipelineId]);

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      // No clipboard permission (plain http): select the text so Ctrl+C copies it.
      area.current?.select();
      document.execCommand("copy");
    }
    setCopied(true);
    window.setTimeout(() => setCopied(false), 2000);
  };

  const importYaml = async () => {
    if (dirty && !window.confirm("Importing replaces the graph with the YAML; your unsaved changes will be lost. Import?")) {
      return;
    }
    setBusy(true);
    setError(null);
    try {
      onImported(await api<Pipeline>("/api/v1/pipeline/import", { method: "POST", body: { yaml: text } satisfies PipelineYamlBody }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  const fieldErrors = error instanceof ApiError ? error.errors : [];
  return (
    <Dialog title={`YAML of ${pipelineName}`} onClose={onClose} className="yaml-dialog" wide>
      {exported === null && !error && <Loading what="Exporting" />}
      {exported !== null && (
        <>
          <p className="hint">
            {editing
              ? "Edit and import: the pipeline named in the YAML is created or updated (tasks, dependencies, schedule)."
              : "The same file works with `myapp pipeline apply`."}
          </p>
          <textarea ref={area} className="yaml-text" aria-label="Pipeline YAML" value={text} readOnly={!editing}
            spellCheck={false} rows={22} aria-invalid={fieldErrors.length > 0}
            onChange={(e) => setText(e.target.value)} />
        </>
      )}
      <ErrorBanner error={error} />
      {fieldErrors.length > 1 && (
        <ul className="field-error yaml-errors">
          {fieldErrors.map((e) => <li key={`${e.field}:${e.reason}`}><code>{e.field}</code>: {e.reason}</li>)}
        </ul>
      )}
      <div className="dialog-actions">
        <span className="muted" role="status">{copied ? "Copied" : ""}</span>
        <button type="button" onClick={() => void copy()} disabled={exported === null}>Copy</button>
        {!readOnly && !editing && (
          <button type="button" onClick={() => setEditing(true)} disabled={exported === null}>Edit</button>
        )}
        {editing && (
          <>
            <button type="button" onClick={() => { setEditing(false); setText(exported ?? ""); setError(null); }}>
              Discard edits
            </button>
            <button type="button" className="primary" onClick={() => void importYaml()} disabled={busy || !text.trim()}>
              {busy ? "Importing…" : "Import"}
            </button>
          </>
        )}
        <button type="button" onClick={onClose}>Close</button>
      </div>
    </Dialog>
  );
}
