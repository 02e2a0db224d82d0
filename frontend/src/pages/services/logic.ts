// Pure helpers of the Services page: the split, what each version's server is doing, a request
// built from the signature, the same request as curl, and chart series from the router's figures.
import type { InferenceService, ModelVersion, ServiceMetrics } from "../../types";
import type { LineSeries } from "../../components/charts/options";
import { replicaColor } from "../run/logBuffer";

export interface VersionRow {
  id: number;
  label: string;
  weight: number;
  stable: boolean;
  shadow: boolean;
  state: string;
  reason: string;
}

interface VersionStatus {
  state?: string;
  reason?: string;
  label?: string;
}

/** The versions a service runs: the split's (stable first) and the shadow, with their server's state. */
export function versionRows(service: InferenceService, versions: Map<number, ModelVersion>): VersionRow[] {
  const traffic = service.traffic as Record<string, number>;
  const status = service.versions_status as Record<string, VersionStatus>;
  const ids = Object.keys(traffic).map(Number);
  if (service.shadow_version_id !== null && !ids.includes(service.shadow_version_id)) ids.push(service.shadow_version_id);
  ids.sort((a, b) => Number(b === service.model_version_id) - Number(a === service.model_version_id) || a - b);
  return ids.map((id) => ({
    id,
    label: versions.get(id) ? `v${versions.get(id)?.version}` : status[String(id)]?.label ?? `#${id}`,
    weight: traffic[String(id)] ?? 0,
    stable: id === service.model_version_id,
    shadow: id === service.shadow_version_id,
    state: status[String(id)]?.state ?? "pending",
    reason: status[String(id)]?.reason ?? "",
  }));
}

/** The canary (a version of the split that is not the stable one), if there is one. */
export function canaryOf(service: InferenceService): number | null {
  const ids = Object.keys(service.traffic).map(Number).filter((id) => id !== service.model_version_id);
  return ids.length === 1 ? ids[0] : null;
}

/** A request body the version's signature accepts: one instance of zeros (or of the given values). */
export function sampleRequest(version: ModelVersion | undefined): string {
  const shape = version?.signature.shape ?? [null, 4];
  const build = (dims: (number | null)[]): unknown => {
    if (dims.length === 0) return 0;
    return Array.from({ length: dims[0] ?? 1 }, () => build(dims.slice(1)));
  };
  return JSON.stringify({ instances: [build(shape.slice(1))] });
}

/** The same call from a shell: the service's stable URL with an API token. */
export function curlCommand(origin: string, endpoint: string, path: string, body: string): string {
  const quoted = body.replace(/'/g, "'\\''");
  return [`curl -sS -X POST '${origin}${endpoint}${path.replace(/^\//, "")}'`,
    `  -H "Authorization: Bearer $MYAPP_TOKEN"`,
    `  -H 'Content-Type: application/json'`,
    `  -d '${quoted}'`].join(" \\\n");
}

export type Figure = "rps" | "p95" | "errors";

/** One series per version from the router's per-second points; rps is the count of each second. */
export function figureSeries(metrics: ServiceMetrics, figure: Figure): LineSeries[] {
  return Object.entries(metrics.series)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([version, points]) => ({
      name: version,
      color: replicaColor(version),
      points: points
        .map((p) => ({ t: p.t, v: figure === "rps" ? p.n : figure === "errors" ? p.errors : p.p95 ?? NaN }))
        .filter((p) => Number.isFinite(p.v))
        .sort((a, b) => a.t - b.t),
    }));
}

/** Each version's share of the requests in the window, in percent (what the split did). */
export function observedShares(metrics: ServiceMetrics): Record<string, number> {
  const primary = Object.entries(metrics.versions).filter(([v]) => !v.endsWith("(shadow)"));
  const total = primary.reduce((sum, [, f]) => sum + f.requests, 0);
  return Object.fromEntries(primary.map(([v, f]) => [v, total ? Math.round((f.requests / total) * 100) : 0]));
}

/** A request's latency for people: "8.4 ms", "120 ms", "1.25 s". */
export function formatLatency(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "—";
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  return ms < 10 ? `${ms.toFixed(1)} ms` : `${Math.round(ms)} ms`;
}

/** What the request logs hold: the router keeps a sample, not every request (docs/serving.md). */
export const SAMPLING_NOTE = "Sampled: every error, and one in ten of the other requests; newest first.";
