// Pure helpers of the Models page: versions grouped by model, formats, the upload's form (compare.ts: versions
// side by side).
import type { ModelStage, ModelVersion } from "../../types";

export const STAGES: ModelStage[] = ["none", "staging", "production", "archived"];

/** Versions by model name (names sorted), newest version first within each. */
export function byModel(versions: ModelVersion[]): [string, ModelVersion[]][] {
  const groups = new Map<string, ModelVersion[]>();
  for (const v of versions) groups.set(v.name, [...(groups.get(v.name) ?? []), v]);
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, list]) => [name, [...list].sort((x, y) => y.version - x.version)]);
}

export function formatMetric(value: number | null): string {
  if (value === null) return "—";
  return Math.abs(value) >= 100 ? value.toFixed(0) : value.toPrecision(4).replace(/\.?0+$/, "");
}

export function formatSignature(v: ModelVersion): string {
  const shape = v.signature.shape;
  if (!shape) return "—";
  return `[${shape.map((d) => (d === null ? "n" : String(d))).join(", ")}] ${v.signature.dtype ?? ""}`.trim();
}

/** A service name suggested for a model (DNS label, at most 63 characters). */
export function serviceName(model: string): string {
  return model.toLowerCase().replace(/[^a-z0-9-]/g, "-").slice(0, 63).replace(/-+$/, "") || "model";
}

export const FRAMEWORKS = ["sklearn", "pytorch", "torchscript", "onnx", "tensorflow", "xgboost", "custom"] as const;
export const DTYPES = ["float32", "float64", "int32", "int64", "string"] as const;

export interface UploadFields {
  projectId: number;
  name: string;
  framework: string;
  /** The input's shape as typed: "n, 64" (n: any size); empty for no signature. */
  shape: string;
  dtype: string;
  /** A JSON object of metrics, or empty. */
  metrics: string;
  description: string;
}

/** "n, 64" -> [null, 64]; the text itself when a dimension is neither n nor a whole number (the server
 * names the field), so nothing typed is silently dropped. */
export function parseShape(text: string): (number | null)[] | string {
  const parts = text.split(",").map((p) => p.trim()).filter((p) => p !== "");
  const dims = parts.map((p) => (/^(n|null|\?)$/i.test(p) ? null : /^\d+$/.test(p) ? Number(p) : NaN));
  return dims.some((d) => Number.isNaN(d)) ? text : dims;
}

/** The multipart form POST /api/v1/model_version/upload takes: the file, and the fields as text. */
export function uploadForm(fields: UploadFields, file: Blob, fileName: string): FormData {
  const form = new FormData();
  form.set("project_id", String(fields.projectId));
  form.set("name", fields.name.trim());
  form.set("framework", fields.framework);
  if (fields.shape.trim()) {
    const shape = parseShape(fields.shape);
    // A shape the page cannot read goes as typed: the answer then names signature.shape.
    form.set("signature", JSON.stringify({ shape, dtype: fields.dtype }));
  }
  if (fields.metrics.trim()) form.set("metrics", fields.metrics.trim());
  if (fields.description.trim()) form.set("description", fields.description.trim());
  form.set("file", file, fileName);
  return form;
}
