// Arithmetic of the hand-rolled SVG metric charts: series per replica, scales, ticks, units.
import type { MetricSample } from "../../types";

export type MetricKey = "cpu_cores" | "memory_bytes" | "gpu_utilization" | "gpu_memory_bytes";

export interface Point {
  t: number;
  v: number;
}

export interface Series {
  replica: string;
  points: Point[];
}

/** One time-ordered series per replica (sorted by name), samples without this metric skipped. */
export function seriesPerReplica(samples: MetricSample[], metric: MetricKey): Series[] {
  const byReplica = new Map<string, Point[]>();
  for (const sample of samples) {
    const value = sample[metric];
    if (value === null || value === undefined || !Number.isFinite(value)) continue;
    const points = byReplica.get(sample.replica) ?? [];
    points.push({ t: sample.timestamp, v: value });
    byReplica.set(sample.replica, points);
  }
  return [...byReplica.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([replica, points]) => ({ replica, points: points.sort((p, q) => p.t - q.t) }));
}

/** Maps [d0, d1] onto [r0, r1]; a zero-width domain maps to the middle of the range. */
export function linearScale(d0: number, d1: number, r0: number, r1: number): (value: number) => number {
  if (d1 === d0) return () => (r0 + r1) / 2;
  return (value) => r0 + ((value - d0) / (d1 - d0)) * (r1 - r0);
}

/** A "nice" step (1, 2, 2.5 or 5 × 10^n; powers of 1024 for bytes) giving about `count` ticks over span. */
function niceStep(span: number, count: number, bytes: boolean): number {
  const raw = span / Math.max(1, count);
  if (bytes && raw >= 1024) {
    const unit = 1024 ** Math.floor(Math.log(raw) / Math.log(1024));
    return unit * niceStep(raw / unit, 1, false);
  }
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const fraction = raw / magnitude;
  const nice = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 2.5 ? 2.5 : fraction <= 5 ? 5 : 10;
  return nice * magnitude;
}

/** The value axis: from 0 up to a nice maximum ≥ max, with its ticks. An all-zero series still gets an axis. */
export function valueAxis(max: number, count = 4, bytes = false, floor = 1): { max: number; ticks: number[] } {
  const top = Math.max(max, floor);
  const step = niceStep(top, count, bytes);
  const niceMax = Math.ceil(top / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let i = 0; i * step <= niceMax + step * 1e-9; i++) ticks.push(round(i * step));
  return { max: round(niceMax), ticks };
}

/** Time-axis ticks (seconds): whole multiples of a nice step inside [t0, t1]. */
export function timeTicks(t0: number, t1: number, count = 4): number[] {
  if (t1 <= t0) return [t0];
  const steps = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400];
  const step = steps.find((s) => (t1 - t0) / s <= count) ?? steps[steps.length - 1];
  const ticks: number[] = [];
  for (let t = Math.ceil(t0 / step) * step; t <= t1; t += step) ticks.push(t);
  return ticks;
}

function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/** "512 B", "1.5 KiB", "118 MiB", "2 GiB": at most three significant digits. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return "—";
  let value = Math.abs(bytes);
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const digits = unit === 0 || value >= 100 ? 0 : value >= 10 ? 1 : 2;
  const text = Number(value.toFixed(digits)).toString();
  return `${bytes < 0 ? "-" : ""}${text} ${UNITS[unit]}`;
}

/** Short numbers for axis labels: "0", "0.25", "1.5", "12", "1.2k". */
export function formatNumber(value: number): string {
  if (Math.abs(value) >= 10_000) return `${Number((value / 1000).toFixed(1))}k`;
  return Number(value.toPrecision(3)).toString();
}

/** The SVG path of a series: "M x y L x y ...". */
export function linePath(points: Point[], x: (t: number) => number, y: (v: number) => number): string {
  return points.map((p, i) => `${i ? "L" : "M"}${x(p.t).toFixed(1)} ${y(p.v).toFixed(1)}`).join(" ");
}
