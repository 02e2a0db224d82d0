// The simulator page's arithmetic: an answer of POST /api/v1/scheduler/simulate as chart series and a
// side-by-side table of figures (each policy against the first).
import type { SimulationResult } from "../../types";
import type { LineSeries } from "../../components/charts/options";
import { formatMs } from "../run/time";

export const DAY = 86_400;
const COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea"];

/** A policy's line colour: by its place in the answer, so the two compared always differ. */
export function policyColor(policies: string[], policy: string): string {
  return COLORS[Math.max(0, policies.indexOf(policy)) % COLORS.length];
}

export type SeriesKey = "utilization" | "waiting" | "avg_jct_s";

/** One line per policy, in its colour; x in days since the first submission, utilization in percent, JCT in
 * hours; bins without a value (no job submitted in them) are left out. */
export function seriesOf(results: SimulationResult[], key: SeriesKey): LineSeries[] {
  const policies = results.map((r) => r.policy);
  return results.map((result) => {
    const source = key === "avg_jct_s" ? result.series.jct_by_submission : result.series.over_time;
    const values: (number | null)[] = key === "avg_jct_s" ? result.series.jct_by_submission.avg_jct_s
      : result.series.over_time[key];
    const scale = key === "avg_jct_s" ? 1 / 3600 : key === "utilization" ? 100 : 1;
    const points = source.t.flatMap((t, i) => {
      const v = values[i];
      return v === null || v === undefined || !Number.isFinite(v) ? [] : [{ t: t / DAY, v: v * scale }];
    });
    return { name: result.policy, points, color: policyColor(policies, result.policy) };
  });
}

interface Figure {
  key: keyof SimulationResult;
  label: string;
  format: (value: number) => string;
  /** Lower is better: the ratio against the first policy reads as a win below 1. */
  lowerIsBetter: boolean;
}

const seconds = (s: number) => formatMs(s * 1000);
const share = (v: number) => v.toFixed(3);
const plain = (v: number) => (Number.isInteger(v) ? String(v) : v.toFixed(3));

export const FIGURES: Figure[] = [
  { key: "avg_jct_s", label: "Average JCT", format: seconds, lowerIsBetter: true },
  { key: "p50_jct_s", label: "Median JCT", format: seconds, lowerIsBetter: true },
  { key: "p95_jct_s", label: "p95 JCT", format: seconds, lowerIsBetter: true },
  { key: "p99_jct_s", label: "p99 JCT", format: seconds, lowerIsBetter: true },
  { key: "makespan_s", label: "Makespan", format: seconds, lowerIsBetter: true },
  { key: "utilization", label: "Utilization", format: share, lowerIsBetter: false },
  { key: "offered_load", label: "Offered load", format: share, lowerIsBetter: false },
  { key: "partial_gang_seconds", label: "Partial-gang GPU-seconds", format: plain, lowerIsBetter: true },
  { key: "preemptions_per_job", label: "Preemptions per job", format: share, lowerIsBetter: true },
  { key: "lost_gpu_seconds", label: "GPU-seconds lost to restarts", format: plain, lowerIsBetter: true },
  { key: "sim_seconds", label: "Simulated in (CPU s)", format: (v) => v.toFixed(2), lowerIsBetter: true },
];

export interface Row {
  label: string;
  values: string[];
  /** "0.83×" of each later policy against the first; null when it cannot be said (0 / 0). */
  ratios: (string | null)[];
}

/** Rows of figures, one column per policy, with each later policy's ratio to the first. */
export function compareRows(results: SimulationResult[]): Row[] {
  return FIGURES.map((figure) => {
    const values = results.map((r) => Number(r[figure.key]));
    const base = values[0];
    return {
      label: figure.label,
      values: values.map(figure.format),
      ratios: values.slice(1).map((v) => (base ? `${(v / base).toFixed(2)}×` : v === 0 ? null : "—")),
    };
  });
}
