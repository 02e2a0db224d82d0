import { describe, expect, it } from "vitest";
import { experiment, trial } from "./fixture";
import { bestTrial, check, emptyForm, formatParameters, parseChoice, progress, rowError, rowsFromParameters,
  toBody, trialStateLabel, type ExperimentForm } from "./logic";

function form(changes: Partial<ExperimentForm> = {}): ExperimentForm {
  return { ...emptyForm(), name: "search", pipelineId: 3, metric: "accuracy",
    rows: rowsFromParameters({ lr: 0.05, hidden: 128, optimizer: "sgd" }), ...changes };
}

describe("the search space from the pipeline's parameters", () => {
  it("makes a row per parameter around its default", () => {
    expect(rowsFromParameters({ lr: 0.05, hidden: 128, optimizer: "sgd", shift: -0.5 })).toEqual([
      { name: "lr", include: true, kind: "logfloat", low: "0.005", high: "0.5", step: "", choices: "" },
      { name: "hidden", include: true, kind: "int", low: "64", high: "256", step: "", choices: "" },
      { name: "optimizer", include: true, kind: "categorical", low: "", high: "", step: "", choices: "sgd" },
      { name: "shift", include: true, kind: "float", low: "-1.5", high: "0.5", step: "", choices: "" },
    ]);
  });

  it("reads choices as numbers, booleans or text", () => {
    expect(["1", " 0.5", "true", "adam", ""].map(parseChoice)).toEqual([1, 0.5, true, "adam", ""]);
  });
});

describe("the request body", () => {
  it("holds the searched rows, the objective, the budget and the pruner", () => {
    const rows = rowsFromParameters({ lr: 0.05, hidden: 128, optimizer: "sgd" });
    rows[1] = { ...rows[1], include: false };
    rows[2] = { ...rows[2], choices: "sgd, adam, 1" };
    const body = toBody(form({ rows, seed: "7", maxTrials: "4", parallelTrials: "2", pruner: "median",
      startupTrials: "1", warmupSteps: "0", timeLimitSeconds: "" }));
    expect(body).toEqual({
      name: "search", pipeline_id: 3, algorithm: "tpe", seed: 7,
      search_space: [{ name: "lr", type: "float", low: 0.005, high: 0.5, log: true },
        { name: "optimizer", type: "categorical", choices: ["sgd", "adam", 1] }],
      objectives: [{ metric: "accuracy", direction: "maximize" }],
      max_trials: 4, parallel_trials: 2, max_failed_trials: 3, time_limit_seconds: null,
      early_stopping: { kind: "median", startup_trials: 1, warmup_steps: 0 },
    });
    expect(toBody(form({ pruner: "hyperband" })).early_stopping).toEqual(
      { kind: "hyperband", min_resource: 1, reduction_factor: 3 });
  });

  it("names the field as the server does, counting searched rows only", () => {
    const rows = rowsFromParameters({ lr: 0.05, hidden: 128, optimizer: "sgd" });
    rows[0] = { ...rows[0], include: false };
    rows[1] = { ...rows[1], low: "300" };  // above high: search_space[0], the first searched row
    rows[2] = { ...rows[2], choices: " , " };
    expect(check(form({ rows, name: "Bad", maxTrials: "0", metric: "" }))).toEqual({
      name: "lowercase letters, digits and '-', starting with a letter (at most 63)",
      "search_space[0].high": "must be greater than low (300)",
      "search_space[1].choices": "give choices, separated by commas",
      "objectives[0].metric": "the metric a task reports (metrics.jsonl)",
      max_trials: "must be at least 1",
    });
    const log = rowsFromParameters({ lr: 0.05 });
    expect(check(form({ rows: [{ ...log[0], low: "0" }] }))).toEqual({ "search_space[0].low": "must be above 0 on a log scale" });
    expect(check(form({ rows: log.map((r) => ({ ...r, include: false })) }))).toEqual({ search_space: "search at least one parameter" });
    expect(check(form())).toEqual({});
    const reasons: Record<string, string> = { "search_space[1].high": "wrong way round" };
    expect(rowError((f) => reasons[f], 1)).toBe("high: wrong way round");
  });
});

describe("what the pages show", () => {
  it("counts ended trials against the budget and finds the best complete one", () => {
    const trials = [trial(0, { values: [0.9] }), trial(1, { values: [0.97] }), trial(2, { state: "pruned", values: [0.99] }),
      trial(3, { state: "running", values: null })];
    expect(progress(experiment(), trials)).toEqual({ done: 3, total: 6 });
    expect(bestTrial(experiment(), trials)?.number).toBe(1);
    expect(bestTrial(experiment({ objectives: [{ metric: "loss", direction: "minimize" }] }), trials)?.number).toBe(0);
    expect(bestTrial(experiment(), [trial(0, { state: "running", values: null })])).toBeNull();
  });

  it("says where a trial was pruned and its parameters briefly", () => {
    expect(trialStateLabel(trial(0, { state: "pruned", pruned_step: 4 }))).toBe("pruned at step 4");
    expect(trialStateLabel(trial(0))).toBe("complete");
    expect(formatParameters({ lr: 0.0123456, hidden: 64, opt: "adam" })).toBe("lr 0.01235, hidden 64, opt adam");
  });
});
