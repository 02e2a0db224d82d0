import { describe, expect, it } from "vitest";
import { historyOption, historySeries, importancesOption, intermediateOption, intermediateSeries,
  parallelCoordinatesOption, parallelData } from "./charts";
import { experiment, trial } from "./fixture";

type Fn = (...args: unknown[]) => string;

describe("optimisation history", () => {
  const trials = [trial(2, { values: [0.8] }), trial(0, { values: [0.7] }), trial(1, { values: [0.95] }),
    trial(3, { state: "pruned", values: [0.2] }), trial(4, { state: "running", values: null })];

  it("plots each complete trial's objective and the best so far, by trial number", () => {
    const [objective, best] = historySeries(experiment(), trials);
    expect(objective.points).toEqual([{ t: 0, v: 0.7 }, { t: 1, v: 0.95 }, { t: 2, v: 0.8 }]);
    expect(best.points).toEqual([{ t: 0, v: 0.7 }, { t: 1, v: 0.95 }, { t: 2, v: 0.95 }]);
  });

  it("keeps the lowest when minimising", () => {
    const minimize = experiment({ objectives: [{ metric: "loss", direction: "minimize" }] });
    expect(historySeries(minimize, trials)[1].points.map((p) => p.v)).toEqual([0.7, 0.7, 0.7]);
  });

  it("draws the objective as dots and the best as a step line, named by the metric", () => {
    const option = historyOption(experiment(), trials);
    const [dots, best] = option.series as { name: string; step?: string; lineStyle?: { opacity: number }; data: number[][] }[];
    expect([dots.name, dots.lineStyle?.opacity, best.name, best.step]).toEqual(["objective", 0, "best so far", "end"]);
    expect(best.data).toEqual([[0, 0.7], [1, 0.95], [2, 0.95]]);
    expect((option.yAxis as { name: string }).name).toBe("accuracy");
    expect((option.legend as { data: string[] }).data).toEqual(["objective", "best so far"]);
  });
});

describe("intermediate values", () => {
  it("draws a curve per trial that reported any, a pruned one named so", () => {
    const trials = [trial(1, { state: "pruned", intermediate: [[1, 0.1], [2, 0.2]], pruned_step: 2 }),
      trial(0), trial(2, { state: "running", intermediate: [] })];
    expect(intermediateSeries(trials).map((s) => s.name)).toEqual(["trial 0", "trial 1 (pruned)"]);
    const option = intermediateOption(experiment(), trials);
    expect((option.series as { data: number[][] }[])[1].data).toEqual([[1, 0.1], [2, 0.2]]);
    expect((option.xAxis as { name: string; minInterval: number })).toMatchObject({ name: "step", minInterval: 1 });
  });
});

describe("parameter importances", () => {
  const answer = { complete: 5, reason: null,
    importances: [{ name: "lr", importance: 0.75 }, { name: "hidden", importance: 0.25 }] };

  it("puts the most important parameter on top with its share in %", () => {
    const option = importancesOption(answer);
    expect((option.yAxis as { data: string[] }).data).toEqual(["hidden", "lr"]);  // bottom to top
    const [series] = option.series as { type: string; data: number[]; label: { formatter: Fn } }[];
    expect(series.type).toBe("bar");
    expect(series.data).toEqual([0.25, 0.75]);
    expect(series.label.formatter({ value: 0.75 })).toBe("75.0 %");
    expect((option.xAxis as { max: number }).max).toBe(1);
  });
});

describe("parallel coordinates", () => {
  it("has an axis per searched parameter and the objective, a line per trial with a value", () => {
    const trials = [trial(0, { parameters: { lr: 0.0123456, opt: "adam" }, values: [0.9] }),
      trial(1, { state: "pruned", values: [0.3] }), trial(2, { state: "failed", values: null })];
    const { axes, lines } = parallelData(experiment(), trials);
    expect(axes).toEqual([{ name: "lr" }, { name: "opt", categories: ["sgd", "adam"] }, { name: "accuracy" }]);
    expect(lines.map((l) => [l.name, l.values])).toEqual([
      ["trial 0", [0.0123456, "adam", 0.9]], ["trial 1", [0.01, "sgd", 0.3]]]);
    expect(lines[1].color).toBeDefined();  // a pruned trial greyed
    const option = parallelCoordinatesOption(experiment(), trials);
    expect((option.parallelAxis as { type: string }[]).map((a) => a.type)).toEqual(["log", "category", "value"]);
  });
});
