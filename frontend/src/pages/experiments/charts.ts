// The charts of an experiment, as ECharts options (pure; drawn by components/charts/Chart.tsx): the
// optimisation history (each complete trial's objective and the best so far), the intermediate values per
// trial (the curves pruning compares), the parameter importances, and parallel coordinates over the
// searched parameters and the objective.
import { lineOption, parallelOption, TOOLTIP_CLASS, type ChartOption, type LineSeries, type ParallelAxis,
  type ParallelLine } from "../../components/charts/options";
import type { Experiment, ParamImportances, Trial } from "../../types";
import { direction, formatParameter } from "./logic";

type ParallelAxisOption = Extract<NonNullable<ChartOption["parallelAxis"]>, unknown[]>[number];

function byNumber(trials: readonly Trial[]): Trial[] {
  return [...trials].sort((a, b) => a.number - b.number);
}

function objectiveOf(trial: Trial): number | null {
  const value = trial.values?.[0];
  return trial.state === "complete" && typeof value === "number" ? value : null;
}

/** Each complete trial's objective (points only) and the best value so far (a step line), by trial number. */
export function historySeries(experiment: Experiment, trials: readonly Trial[]): LineSeries[] {
  const maximize = direction(experiment) === "maximize";
  const objective: LineSeries = { name: "objective", points: [] };
  const best: LineSeries = { name: "best so far", points: [] };
  let top: number | null = null;
  for (const trial of byNumber(trials)) {
    const value = objectiveOf(trial);
    if (value === null) continue;
    objective.points.push({ t: trial.number, v: value });
    if (top === null || (maximize ? value > top : value < top)) top = value;
    best.points.push({ t: trial.number, v: top });
  }
  return [objective, best];
}

export function historyOption(experiment: Experiment, trials: readonly Trial[]): ChartOption {
  const metric = experiment.objectives[0]?.metric ?? "objective";
  const option = lineOption({ series: historySeries(experiment, trials), x: { name: "trial", integer: true, fromZero: true },
    y: { name: metric } });
  const [objective, best] = option.series as object[];
  // The objective as dots (trials are not a sequence of one thing), the best so far as a step line.
  option.series = [
    { ...objective, showSymbol: true, symbolSize: 8, lineStyle: { opacity: 0 } },
    { ...best, step: "end", showSymbol: false },
  ];
  return option;
}

/** One line per trial that reported intermediate values; a pruned trial's name says so. */
export function intermediateSeries(trials: readonly Trial[]): LineSeries[] {
  return byNumber(trials).filter((t) => t.intermediate.length > 0).map((t) => ({
    name: `trial ${t.number}${t.state === "pruned" ? " (pruned)" : ""}`,
    points: t.intermediate.map(([step, value]) => ({ t: step, v: value })),
  }));
}

export function intermediateOption(experiment: Experiment, trials: readonly Trial[]): ChartOption {
  return lineOption({ series: intermediateSeries(trials), x: { name: "step", integer: true },
    y: { name: experiment.objectives[0]?.metric ?? "value" } });
}

/** Horizontal bars, the most important parameter on top, each labelled with its share in %. */
export function importancesOption(answer: ParamImportances): ChartOption {
  const rows = [...answer.importances].sort((a, b) => a.importance - b.importance);  // bottom to top
  const percent = (value: number) => `${(value * 100).toFixed(1)} %`;
  return {
    animation: false,
    grid: { left: 16, right: 64, top: 16, bottom: 8, containLabel: true },
    tooltip: { trigger: "axis", axisPointer: { type: "shadow" }, className: TOOLTIP_CLASS,
      valueFormatter: (value) => percent(Number(value)) },
    xAxis: { type: "value", min: 0, max: 1, axisLabel: { formatter: (value: number) => `${Math.round(value * 100)} %` } },
    yAxis: { type: "category", data: rows.map((r) => r.name) },
    series: [{ type: "bar", name: "importance", data: rows.map((r) => r.importance),
      label: { show: true, position: "right", formatter: ({ value }) => percent(Number(value)) } }],
  };
}

/** Parallel coordinates: an axis per searched parameter (categories for a categorical one) and one for
 * the objective; a line per trial that has a value (complete, or pruned with its last one). */
export function parallelData(experiment: Experiment, trials: readonly Trial[]): { axes: ParallelAxis[]; lines: ParallelLine[] } {
  const space = experiment.search_space;
  const axes: ParallelAxis[] = space.map((p) => p.type === "categorical"
    ? { name: p.name, categories: (p.choices ?? []).map(formatParameter) }
    : { name: p.name });
  axes.push({ name: experiment.objectives[0]?.metric ?? "objective" });
  const lines = byNumber(trials).filter((t) => (t.state === "complete" || t.state === "pruned") && t.values?.length)
    .map((t) => ({
      name: `trial ${t.number}`,
      values: [...space.map((p) => {
        const value = t.parameters[p.name];
        if (value === undefined || value === null) return null;
        return p.type === "categorical" ? formatParameter(value) : Number(value);
      }), (t.values as number[])[0]],
      ...(t.state === "pruned" ? { color: "#9aa0a6" } : {}),
    }));
  return { axes, lines };
}

/** ...drawn with a log axis for a parameter searched on a log scale. */
export function parallelCoordinatesOption(experiment: Experiment, trials: readonly Trial[]): ChartOption {
  const option = parallelOption(parallelData(experiment, trials));
  const axes = option.parallelAxis as ParallelAxisOption[];
  option.parallelAxis = axes.map((axis, i): ParallelAxisOption =>
    (experiment.search_space[i]?.log ? { ...axis, type: "log" } as ParallelAxisOption : axis));
  return option;
}
