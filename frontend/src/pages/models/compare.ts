// The arithmetic of comparing model versions side by side (MLflow's compare view): every metric and
// parameter of any of them in one table, rows whose values differ marked, and each metric's curve per version.
import type { LineSeries } from "../../components/charts/options";
import type { MetricHistory, ModelVersion } from "../../types";
import { differs } from "../compare/compare";
import { formatMetric, formatSignature } from "./logic";

export interface CompareRow {
  group: "metric" | "parameter" | "model";
  name: string;
  /** One cell per version, in the versions' order ("—" where it has none). */
  cells: string[];
  /** Not every version has the same value (a missing one counts as a value). */
  differs: boolean;
}

const PALETTE = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2"];

/** A version's colour in the comparison: by its place, so the compared ones always differ. */
export function versionColor(index: number): string {
  return PALETTE[index % PALETTE.length];
}

/** "v3", or "digits v3" when the compared versions belong to different models. */
export function versionLabel(version: ModelVersion, versions: ModelVersion[]): string {
  const oneModel = versions.every((v) => v.name === version.name);
  return oneModel ? `v${version.version}` : `${version.name} v${version.version}`;
}

function row(group: CompareRow["group"], name: string, cells: string[]): CompareRow {
  return { group, name, cells, differs: differs(cells) };
}

function plain(value: unknown): string {
  return value === undefined || value === null ? "—" : String(value);
}

/** The table: each metric (sorted), each parameter (sorted), then framework and signature. */
export function compareRows(versions: ModelVersion[]): CompareRow[] {
  const names = (pick: (v: ModelVersion) => Record<string, unknown>) =>
    [...new Set(versions.flatMap((v) => Object.keys(pick(v) ?? {})))].sort();
  return [
    ...names((v) => v.metrics).map((name) =>
      row("metric", name, versions.map((v) => formatMetric(v.metrics[name] ?? null)))),
    ...names((v) => v.params).map((name) => row("parameter", name, versions.map((v) => plain(v.params?.[name])))),
    row("model", "framework", versions.map((v) => v.framework)),
    row("model", "signature", versions.map(formatSignature)),
  ];
}

/** The metrics that have a curve on any of the versions, sorted. */
export function curveNames(histories: MetricHistory[]): string[] {
  return [...new Set(histories.flatMap((h) => Object.keys(h)))].sort();
}

/** One line per version that has a curve of `name`: its values over steps. */
export function curveSeries(versions: ModelVersion[], histories: MetricHistory[], name: string): LineSeries[] {
  return versions.flatMap((version, i) => {
    const points = histories[i]?.[name];
    if (!points?.length) return [];
    return [{ name: versionLabel(version, versions), color: versionColor(i),
      points: points.map((p) => ({ t: p.step, v: p.value })) }];
  });
}
