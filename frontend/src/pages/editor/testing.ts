// Shared fixtures for the editor's unit tests.
import type { JobTemplate } from "../../types";

/** A timestamp as the server writes them (ISO 8601 with the offset). */
export const STAMP = "2026-01-02T03:04:05+00:00";

export function template(id: number, name: string, extra: Partial<JobTemplate> = {}): JobTemplate {
  return {
    id, name, version: "1.0.0", description: "", category: "training", kind: "job", image: "img", command: [],
    args_schema: {}, default_resources: { cpu: "1", memory: "2Gi", gpu: 0 }, max_resources: { cpu: "8", memory: "32Gi", gpu: 2 },
    env: {}, builtin: true, checkpoints: false, pipeline_step: true, created_at: STAMP, updated_at: STAMP, ...extra,
  };
}
