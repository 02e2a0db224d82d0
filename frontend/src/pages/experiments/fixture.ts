// Experiments and trials as the API answers them, for the tests of this folder.
import type { Experiment, Trial } from "../../types";

export function experiment(changes: Partial<Experiment> = {}): Experiment {
  return {
    id: 1, project_id: 1, pipeline_id: 2, name: "digits-search", description: "", algorithm: "tpe", seed: 1,
    search_space: [{ name: "lr", type: "float", low: 0.001, high: 0.5, log: true },
      { name: "opt", type: "categorical", choices: ["sgd", "adam"] }],
    objectives: [{ metric: "accuracy", direction: "maximize" }], early_stopping: { kind: "median" },
    max_trials: 6, parallel_trials: 2, max_failed_trials: 2, time_limit_seconds: null, state: "running",
    reason: null, created_by_id: 1, created_at: "2026-11-28T10:00:00Z", started_at: "2026-11-28T10:00:00Z",
    finished_at: null, ...changes,
  };
}

export function trial(number: number, changes: Partial<Trial> = {}): Trial {
  return {
    id: 100 + number, project_id: 1, experiment_id: 1, number, parameters: { lr: 0.01, opt: "sgd" },
    state: "complete", reason: null, values: [0.9], intermediate: [[1, 0.5], [2, 0.9]], pruned_step: null,
    pipeline_run_id: 50 + number, created_at: "2026-11-28T10:00:00Z", finished_at: "2026-11-28T10:00:42Z",
    ...changes,
  };
}
