// "Import YAML": the server parses and validates; every reason it gives is listed with its field path.
import { useState, type ChangeEvent, type FormEvent } from "react";
import { api, ApiError } from "../../api/client";
import { navigate } from "../../router";
import type { Pipeline, PipelineYamlBody } from "../../types";
import { Dialog, SubmitActions } from "../../components/Dialog";
import { Field, useSubmit } from "../../components/Field";

const EXAMPLE = `name: my-pipeline
project: demo
tasks:
- name: train
  template: pytorch-ddp
  args: {epochs: 5}`;

export function ImportDialog({ onClose }: { onClose: () => void }) {
  const [yaml, setYaml] = useState("");
  const { busy, error, run } = useSubmit();

  const loadFile = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    if (file) setYaml(await file.text());
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void run(async () => {
      const pipeline = await api<Pipeline>("/api/v1/pipeline/import", { method: "POST", body: { yaml } satisfies PipelineYamlBody });
      navigate(`/pipelines/${pipeline.id}`);
    });
  };

  const reasons = error instanceof ApiError ? error.errors : [];
  return (
    <Dialog title="Import pipeline from YAML" onClose={onClose} wide>
      <form onSubmit={submit}>
        <p className="hint">
          Creates the pipeline, or updates the one with the same name in the named project.
        </p>
        <Field label="YAML" required>
          {(wiring) => (
            <textarea {...wiring} aria-invalid={Boolean(error)} name="yaml" rows={16} spellCheck={false}
              className="code-input" placeholder={EXAMPLE} value={yaml} onChange={(e) => setYaml(e.target.value)} />
          )}
        </Field>
        <Field label="Or load a file">
          {(wiring) => <input {...wiring} type="file" accept=".yaml,.yml,text/yaml" onChange={(e) => void loadFile(e)} />}
        </Field>
        {error != null && (
          <div className="error-banner" role="alert">
            {reasons.length === 0 ? (error instanceof Error ? error.message : String(error)) : (
              <>
                <strong>The pipeline was not imported:</strong>
                <ul className="error-list">
                  {reasons.map((r) => (
                    <li key={r.field + r.reason}><code>{r.field}</code>: <span className="pre">{r.reason}</span></li>
                  ))}
                </ul>
              </>
            )}
          </div>
        )}
        <SubmitActions onCancel={onClose} busy={busy} disabled={!yaml.trim()} label="Import" busyLabel="Importing…" />
      </form>
    </Dialog>
  );
}
