// ECharts options built by pure functions (tested in options.test.ts): a line chart over steps or any
// numeric x, a line chart over time in the user's zone, and parallel coordinates. Each has a legend,
// an axis tooltip and axes whose labels carry the values' units. Only types come from ECharts here:
// the library itself is loaded by EChart.tsx.
import type { EChartsOption, LineSeriesOption } from "echarts";
import { formatClock, formatValue, userZone, type Unit } from "./format";

/** Everything a chart draws, as ECharts takes it (the type alone: erased from the build). */
export type ChartOption = EChartsOption;

export interface Point {
  t: number;
  v: number;
}

/** One line: its legend name, its points (x = t), and a colour of its own (else the palette's). */
export interface LineSeries {
  name: string;
  points: Point[];
  color?: string;
}

export interface Axis {
  /** What the axis measures, e.g. "Memory", "step", "accuracy"; the ticks carry the unit. */
  name: string;
  unit?: Unit;
  /** Start at 0 (counts, usage) rather than near the data (accuracy 0.94–0.97). */
  fromZero?: boolean;
  /** Ticks at whole numbers only (steps, epochs). */
  integer?: boolean;
  min?: number;
  max?: number;
}

/** The class of a chart's tooltip (a div inside the chart's box): what the browser tests find. */
export const TOOLTIP_CLASS = "chart-tooltip";

/** Beyond this many points a line shows no markers (a single point always shows one). */
export const MARKED_POINTS = 40;

function lineSeries(s: LineSeries, x: (t: number) => number): LineSeriesOption {
  return {
    type: "line",
    name: s.name,
    data: s.points.map((p) => [x(p.t), p.v]),
    showSymbol: s.points.length <= MARKED_POINTS,
    symbolSize: 6,
    ...(s.color ? { color: s.color } : {}),
  };
}

/** A tick step of about a quarter of `max` bytes that is round in binary units: 100 MiB, 2 GiB, 512 KiB. */
export function byteStep(max: number, ticks = 4): number | undefined {
  const raw = max / ticks;
  if (!(raw > 0) || !Number.isFinite(raw)) return undefined;
  const unit = 1024 ** Math.max(0, Math.floor(Math.log(raw) / Math.log(1024)));
  const scaled = raw / unit;
  const magnitude = 10 ** Math.floor(Math.log10(scaled));
  const nice = ([1, 2, 2.5, 5, 10].find((n) => n * magnitude >= scaled) ?? 10) * magnitude;
  return nice >= 1000 ? 1024 * unit : nice * unit;  // 1000 MiB reads better as 1 GiB
}

function yAxis(axis: Axis, series: LineSeries[]): ChartOption["yAxis"] {
  const unit = axis.unit ?? "";
  const top = Math.max(0, ...series.flatMap((s) => s.points.map((p) => p.v)));
  // ECharts' own steps are decimal (95.4 MiB); bytes from zero get binary ones.
  const interval = unit === "bytes" && axis.fromZero && axis.max === undefined ? byteStep(top) : undefined;
  return {
    type: "value",
    interval,
    name: axis.name,
    nameTextStyle: { align: "left" },
    scale: !axis.fromZero,
    min: axis.min,
    max: axis.max,
    minInterval: axis.integer ? 1 : undefined,
    axisLabel: { formatter: (value: number) => formatValue(value, unit), hideOverlap: true },
  };
}

function common(series: LineSeries[], y: Axis): ChartOption {
  const unit = y.unit ?? "";
  return {
    animation: false,
    useUTC: false,
    grid: { left: 16, right: 32, top: 56, bottom: 8 },
    legend: { type: "scroll", top: 0, data: series.map((s) => s.name) },
    tooltip: { trigger: "axis", className: TOOLTIP_CLASS, valueFormatter: (value) => formatValue(Number(value), unit) },
    yAxis: yAxis(y, series),
  };
}

/** Lines over a numeric x (steps, days): e.g. a metric per step, one line per version or run. */
export function lineOption({ series, x, y }: { series: LineSeries[]; x: Axis; y: Axis }): ChartOption {
  const xUnit = x.unit ?? "";
  return {
    ...common(series, y),
    xAxis: {
      type: "value",
      name: x.name,
      nameLocation: "middle",
      nameGap: 28,
      scale: !x.fromZero,
      min: x.min,
      max: x.max,
      minInterval: x.integer ? 1 : undefined,
      axisLabel: { formatter: (value: number) => formatValue(value, xUnit), hideOverlap: true },
      axisPointer: { label: { formatter: ({ value }) => `${x.name} ${formatValue(Number(value), xUnit)}` } },
    },
    series: series.map((s) => lineSeries(s, (t) => t)),
  };
}

/** Lines over time (t in Unix seconds), read in `zone` (the user's); `window` pins the x range. */
export function timeOption({ series, y, window, zone = userZone() }: {
  series: LineSeries[]; y: Axis; window?: [number, number]; zone?: string;
}): ChartOption {
  const pinned = window && window[1] > window[0] ? window : undefined;  // one sample: let ECharts pad it
  return {
    ...common(series, y),
    xAxis: {
      type: "time",
      name: `time (${zone})`,
      nameLocation: "middle",
      nameGap: 28,
      min: pinned ? pinned[0] * 1000 : undefined,
      max: pinned ? pinned[1] * 1000 : undefined,
      axisLabel: { formatter: (ms: number) => formatClock(ms, zone), hideOverlap: true },
      axisPointer: { label: { formatter: ({ value }) => formatClock(Number(value), zone) } },
    },
    series: series.map((s) => lineSeries(s, (t) => t * 1000)),
  };
}

/** One axis of a parallel-coordinates chart: numbers (with a unit), or the given categories in order. */
export interface ParallelAxis {
  name: string;
  unit?: Unit;
  categories?: string[];
}

/** One polyline across the axes (a trial, a run): a value per axis, in the axes' order. */
export interface ParallelLine {
  name: string;
  values: (number | string | null)[];
  color?: string;
}

/** Parallel coordinates: one vertical axis per parameter or metric, one line per trial; the legend
 * names the lines, the tooltip a line's values. */
export function parallelOption({ axes, lines }: { axes: ParallelAxis[]; lines: ParallelLine[] }): ChartOption {
  return {
    animation: false,
    legend: { type: "scroll", top: 0, data: lines.map((l) => l.name) },
    tooltip: {
      trigger: "item",
      className: TOOLTIP_CLASS,
      formatter: (params) => {
        const item = Array.isArray(params) ? params[0] : params;
        const values = (item.value ?? []) as (number | string | null)[];
        const rows = axes.map((axis, i) => {
          const value = values[i];
          const text = value === null || value === undefined ? "—"
            : typeof value === "number" ? formatValue(value, axis.unit ?? "") : value;
          return `${axis.name}: ${text}`;
        });
        return [item.seriesName ?? "", ...rows].join("<br/>");
      },
    },
    parallel: { left: 48, right: 64, top: 56, bottom: 24 },
    parallelAxis: axes.map((axis, dim) => axis.categories
      ? { dim, name: axis.name, type: "category", data: axis.categories }
      : { dim, name: axis.name, type: "value", scale: true,
        axisLabel: { formatter: (value: number) => formatValue(value, axis.unit ?? "") } }),
    series: lines.map((line) => ({
      type: "parallel",
      name: line.name,
      data: [line.values],
      lineStyle: { width: 2, opacity: 0.8, ...(line.color ? { color: line.color } : {}) },
      emphasis: { lineStyle: { width: 4, opacity: 1 } },
    })),
  };
}
