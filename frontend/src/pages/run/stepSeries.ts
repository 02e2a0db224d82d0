// Reported metrics (metrics.jsonl: step, name, value) as chart series: one per name, or per run for a comparison.
import type { ReportedMetric } from "../../types";
import type { LineSeries, Point } from "../../components/charts/options";

/** A line of a chart over steps (t is the step). */
export type NamedSeries = LineSeries;

/** The metric names in first-seen order. */
export function metricNames(metrics: ReportedMetric[]): string[] {
  return [...new Set(metrics.map((m) => m.name))];
}

/** The points of one metric, by step (t is the step); the last value reported for a step wins. */
export function stepPoints(metrics: ReportedMetric[], name: string): Point[] {
  const byStep = new Map<number, number>();
  for (const m of metrics) {
    if (m.name === name && Number.isFinite(m.value)) byStep.set(m.step, m.value);
  }
  return [...byStep.entries()].sort(([a], [b]) => a - b).map(([t, v]) => ({ t, v }));
}

/** The last value of each metric: what a comparison table shows. */
export function lastValues(metrics: ReportedMetric[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of metricNames(metrics)) {
    const points = stepPoints(metrics, name);
    if (points.length) out[name] = points[points.length - 1].v;
  }
  return out;
}
