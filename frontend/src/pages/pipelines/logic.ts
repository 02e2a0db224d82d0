// Pure helpers of the pipeline list: name checks, newest run per pipeline, search, paging.
import type { Pipeline, PipelineRun } from "../../types";

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Why a name is not a DNS-1123 label (the server's rule for pipeline names), or null if it is one. */
export function dnsLabelProblem(name: string): string | null {
  if (name === "") return "is required";
  if (name.length > 63) return `must be at most 63 characters (got ${name.length})`;
  if (/[A-Z]/.test(name)) return "must be lowercase";
  if (/[^a-z0-9-]/.test(name)) return "may only contain lowercase letters, digits and '-'";
  if (!DNS_LABEL.test(name)) return "must start and end with a letter or digit";
  return null;
}

/** The newest run (highest id) of each pipeline. */
export function newestRunByPipeline(runs: PipelineRun[]): Map<number, PipelineRun> {
  const newest = new Map<number, PipelineRun>();
  for (const run of runs) {
    const seen = newest.get(run.pipeline_id);
    if (!seen || run.id > seen.id) newest.set(run.pipeline_id, run);
  }
  return newest;
}

/** Pipelines whose name contains the query (case-insensitive), in name order. */
export function filterPipelines(pipelines: Pipeline[], query: string): Pipeline[] {
  const needle = query.trim().toLowerCase();
  return pipelines
    .filter((p) => p.name.toLowerCase().includes(needle))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** A free "<name>-copy[-N]" name for a clone, kept within 63 characters. */
export function cloneName(name: string, taken: Set<string>): string {
  for (let n = 1; ; n++) {
    const suffix = n === 1 ? "-copy" : `-copy-${n}`;
    const candidate = name.slice(0, 63 - suffix.length).replace(/-+$/, "") + suffix;
    if (!taken.has(candidate)) return candidate;
  }
}

export const PAGE_SIZE = 100;

/** Rows of one page and the number of pages (at least 1). */
export function pageOf<T>(rows: T[], page: number, size = PAGE_SIZE): { rows: T[]; pages: number; page: number } {
  const pages = Math.max(1, Math.ceil(rows.length / size));
  const current = Math.min(Math.max(0, page), pages - 1);
  return { rows: rows.slice(current * size, (current + 1) * size), pages, page: current };
}
