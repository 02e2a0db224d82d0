import { describe, expect, it } from "vitest";
import type { PipelineRun, Task, TaskRun } from "../../types";
import { replicaColor } from "../run/logBuffer";
import { differs, metricKeys, parameterNames, parameterValue, parseRunIds, runMetrics, seriesPerRun } from "./compare";

const run = (id: number, params: Record<string, unknown>) => ({ id, parameters: params } as unknown as PipelineRun);

describe("comparison", () => {
  it("marks a row whose values differ, a missing one included", () => {
    expect([differs(["0.05", "0.01"]), differs(["12", "12"]), differs(["0.2", "—"])]).toEqual([true, false, true]);
  });

  it("reads run ids from the query", () => {
    expect(parseRunIds("3,5,x,5,-1,0")).toEqual([3, 5]);
    expect(parseRunIds(null)).toEqual([]);
  });

  it("lists parameters with the pipeline's defaults", () => {
    const runs = [run(1, { lr: 0.1 }), run(2, { lr: 0.01, epochs: 3 })];
    expect(parameterNames(runs, { batch: 32 })).toEqual(["batch", "epochs", "lr"]);
    expect(parameterValue(runs[0], "batch", { batch: 32 })).toBe("32");
    expect(parameterValue(runs[0], "epochs", {})).toBe("—");
  });

  it("takes each task's latest attempt and draws one series per run", () => {
    const tasks = [{ id: 7, name: "train" }] as Task[];
    const first = [
      { task_id: 7, attempt: 1, reported_metrics: [{ step: 0, name: "loss", value: 9 }] },
      { task_id: 7, attempt: 2, reported_metrics: [{ step: 0, name: "loss", value: 1 }, { step: 1, name: "loss", value: 0.5 }] },
    ] as TaskRun[];
    const second = [{ task_id: 7, attempt: 1, reported_metrics: null }] as TaskRun[];
    const perRun = [runMetrics(first, tasks), runMetrics(second, tasks)];
    expect(metricKeys(perRun)).toEqual(["train/loss"]);
    const series = seriesPerRun([run(1, {}), run(2, {})], perRun, "train/loss");
    expect(series).toEqual([{ name: "run 1", points: [{ t: 0, v: 1 }, { t: 1, v: 0.5 }], color: replicaColor("run 1") }]);
  });
});
