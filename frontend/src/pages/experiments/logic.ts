// Pure helpers of the Experiments pages: the create dialog's search-space rows made from a pipeline's
// parameters and the request body made from the form (its checks mirror the server's, with the same field
// names, so either's reason shows at the same input), and what the pages show of trials: progress, the
// best trial, durations, "pruned at step N".
import type { PollPolicy } from "../../hooks/polling";
import type { EarlyStopping, Experiment, ExperimentBody, SearchParameter, Trial } from "../../types";

/** A row's kind as the dialog offers it: a log-scale float is its own choice. */
export type RowKind = "float" | "logfloat" | "int" | "categorical";
export const ROW_KINDS: { value: RowKind; label: string }[] = [
  { value: "float", label: "float" }, { value: "logfloat", label: "log float" },
  { value: "int", label: "int" }, { value: "categorical", label: "categorical" },
];
export const ALGORITHMS: ExperimentBody["algorithm"][] = ["tpe", "random", "cmaes", "qmc", "grid", "nsga2"];
export type PrunerKind = "" | EarlyStopping["kind"];

/** One parameter of the pipeline as a row of the search space; every value is the input's text. */
export interface SpaceRow {
  name: string;
  /** Searched, or left at the pipeline's value. */
  include: boolean;
  kind: RowKind;
  low: string;
  high: string;
  step: string;
  /** Comma-separated. */
  choices: string;
}

export interface ExperimentForm {
  name: string;
  pipelineId: number | null;
  rows: SpaceRow[];
  metric: string;
  direction: "minimize" | "maximize";
  algorithm: NonNullable<ExperimentBody["algorithm"]>;
  seed: string;
  maxTrials: string;
  parallelTrials: string;
  maxFailedTrials: string;
  timeLimitSeconds: string;
  pruner: PrunerKind;
  startupTrials: string;
  warmupSteps: string;
  minResource: string;
  reductionFactor: string;
}

export function emptyForm(): ExperimentForm {
  return {
    name: "", pipelineId: null, rows: [], metric: "", direction: "maximize", algorithm: "tpe", seed: "",
    maxTrials: "10", parallelTrials: "2", maxFailedTrials: "3", timeLimitSeconds: "", pruner: "",
    startupTrials: "3", warmupSteps: "0", minResource: "1", reductionFactor: "3",
  };
}

const num = (value: number) => String(Number(value.toPrecision(6)));

/** The rows for a pipeline's parameters (name -> default): a number's range around its default (a float
 * on a log scale a decade either side, an integer half to twice), anything else a choice of its value. */
export function rowsFromParameters(parameters: Record<string, unknown>): SpaceRow[] {
  return Object.entries(parameters).map(([name, value]) => {
    const row: SpaceRow = { name, include: true, kind: "categorical", low: "", high: "", step: "", choices: "" };
    if (typeof value === "number" && Number.isFinite(value)) {
      if (Number.isInteger(value)) {
        const low = Math.max(1, Math.floor(value / 2));
        return { ...row, kind: "int", low: String(low), high: String(Math.max(low + 1, value * 2)) };
      }
      if (value > 0) return { ...row, kind: "logfloat", low: num(value / 10), high: num(value * 10) };
      return { ...row, kind: "float", low: num(value - 1), high: num(value + 1) };
    }
    return { ...row, choices: value === null || value === undefined ? "" : String(value) };
  });
}

/** A choice as typed: a number, true/false, else the text. */
export function parseChoice(text: string): string | number | boolean {
  const trimmed = text.trim();
  if (trimmed === "true" || trimmed === "false") return trimmed === "true";
  if (trimmed !== "" && Number.isFinite(Number(trimmed))) return Number(trimmed);
  return trimmed;
}

/** The rows searched, in order: what `search_space[i]` of the body and of the server's errors counts. */
export function searched(rows: readonly SpaceRow[]): SpaceRow[] {
  return rows.filter((r) => r.include);
}

export function toParameter(row: SpaceRow): SearchParameter {
  if (row.kind === "categorical") {
    return { name: row.name, type: "categorical", choices: row.choices.split(",").filter((c) => c.trim()).map(parseChoice) };
  }
  const out: SearchParameter = { name: row.name, type: row.kind === "int" ? "int" : "float",
    low: Number(row.low), high: Number(row.high) };
  if (row.kind === "logfloat") out.log = true;
  else if (row.step.trim()) out.step = Number(row.step);
  return out;
}

type Errors = Record<string, string>;

function whole(errors: Errors, field: string, text: string, min: number, optional = false): number | null {
  if (optional && !text.trim()) return null;
  const value = Number(text);
  if (!text.trim() || !Number.isInteger(value)) errors[field] = "must be a whole number";
  else if (value < min) errors[field] = `must be at least ${min}`;
  return value;
}

/** The form's mistakes by the field the server would name ("search_space[1].high", "max_trials"), or {}. */
export function check(form: ExperimentForm): Errors {
  const errors: Errors = {};
  if (!/^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/.test(form.name)) {
    errors.name = "lowercase letters, digits and '-', starting with a letter (at most 63)";
  }
  if (form.pipelineId === null) errors.pipeline_id = "pick a pipeline";
  const rows = searched(form.rows);
  if (form.pipelineId !== null && rows.length === 0) errors.search_space = "search at least one parameter";
  rows.forEach((row, i) => {
    const at = `search_space[${i}]`;
    if (row.kind === "categorical") {
      if (!row.choices.split(",").some((c) => c.trim())) errors[`${at}.choices`] = "give choices, separated by commas";
      return;
    }
    const low = Number(row.low);
    const high = Number(row.high);
    if (!row.low.trim() || !Number.isFinite(low)) errors[`${at}.low`] = "must be a number";
    else if (row.kind === "int" && !Number.isInteger(low)) errors[`${at}.low`] = "must be a whole number";
    else if (row.kind === "logfloat" && low <= 0) errors[`${at}.low`] = "must be above 0 on a log scale";
    if (!row.high.trim() || !Number.isFinite(high)) errors[`${at}.high`] = "must be a number";
    else if (row.kind === "int" && !Number.isInteger(high)) errors[`${at}.high`] = "must be a whole number";
    else if (Number.isFinite(low) && !(high > low)) errors[`${at}.high`] = `must be greater than low (${row.low})`;
    if (row.step.trim() && row.kind !== "logfloat" && !(Number(row.step) > 0)) errors[`${at}.step`] = "must be above 0";
  });
  if (!form.metric.trim()) errors["objectives[0].metric"] = "the metric a task reports (metrics.jsonl)";
  whole(errors, "max_trials", form.maxTrials, 1);
  whole(errors, "parallel_trials", form.parallelTrials, 1);
  whole(errors, "max_failed_trials", form.maxFailedTrials, 0);
  whole(errors, "time_limit_seconds", form.timeLimitSeconds, 1, true);
  whole(errors, "seed", form.seed, 0, true);
  if (form.pruner === "median") {
    whole(errors, "early_stopping.startup_trials", form.startupTrials, 0);
    whole(errors, "early_stopping.warmup_steps", form.warmupSteps, 0);
  } else if (form.pruner) {
    whole(errors, "early_stopping.min_resource", form.minResource, 1);
    whole(errors, "early_stopping.reduction_factor", form.reductionFactor, 2);
  }
  return errors;
}

/** POST /api/v1/experiment/'s body (started at once). */
export function toBody(form: ExperimentForm): ExperimentBody {
  const optional = (text: string) => (text.trim() ? Number(text) : null);
  let early: EarlyStopping | null = null;
  if (form.pruner === "median") {
    early = { kind: "median", startup_trials: Number(form.startupTrials), warmup_steps: Number(form.warmupSteps) };
  } else if (form.pruner) {
    early = { kind: form.pruner, min_resource: Number(form.minResource), reduction_factor: Number(form.reductionFactor) };
  }
  return {
    name: form.name, pipeline_id: form.pipelineId ?? 0,
    search_space: searched(form.rows).map(toParameter),
    objectives: [{ metric: form.metric.trim(), direction: form.direction }],
    algorithm: form.algorithm, seed: optional(form.seed),
    max_trials: Number(form.maxTrials), parallel_trials: Number(form.parallelTrials),
    max_failed_trials: Number(form.maxFailedTrials), time_limit_seconds: optional(form.timeLimitSeconds),
    early_stopping: early,
  };
}

/** Every field the dialog shows an error at (the rest goes to the banner). */
export function placedFields(form: ExperimentForm): string[] {
  const rows = searched(form.rows).flatMap((_, i) =>
    ["name", "low", "high", "step", "choices", "log", "type"].map((k) => `search_space[${i}].${k}`));
  return ["name", "pipeline_id", "search_space", "objectives", "objectives[0].metric", "objectives[0].direction",
    "algorithm", "seed", "max_trials", "parallel_trials", "max_failed_trials", "time_limit_seconds",
    "early_stopping", "early_stopping.kind", "early_stopping.startup_trials", "early_stopping.warmup_steps",
    "early_stopping.min_resource", "early_stopping.reduction_factor", ...rows];
}

/** A row's error, whichever of its fields the server or the form named. */
export function rowError(reasonFor: (field: string) => string | undefined, index: number): string | undefined {
  for (const key of ["name", "type", "low", "high", "step", "log", "choices"]) {
    const reason = reasonFor(`search_space[${index}].${key}`);
    if (reason) return `${key}: ${reason}`;
  }
  return undefined;
}

// ---- what the pages show ------------------------------------------------------------------------------

export const FINISHED_TRIALS: readonly Trial["state"][] = ["complete", "pruned", "failed", "cancelled"];

/** Trials ended (any way) and the budget: "3 / 12". */
export function progress(experiment: Experiment, trials: readonly Trial[]): { done: number; total: number } {
  return { done: trials.filter((t) => FINISHED_TRIALS.includes(t.state)).length, total: experiment.max_trials };
}

export function direction(experiment: Experiment): "minimize" | "maximize" {
  return experiment.objectives[0]?.direction ?? "minimize";
}

/** The complete trial with the best first objective (the first of equals), or null. */
export function bestTrial(experiment: Experiment, trials: readonly Trial[]): Trial | null {
  const sign = direction(experiment) === "maximize" ? -1 : 1;
  let best: Trial | null = null;
  for (const trial of [...trials].sort((a, b) => a.number - b.number)) {
    const value = trial.values?.[0];
    if (trial.state !== "complete" || value === undefined || value === null) continue;
    if (best === null || sign * value < sign * (best.values as number[])[0]) best = trial;
  }
  return best;
}

export function formatObjective(value: number | null | undefined): string {
  if (value === null || value === undefined) return "—";
  return Math.abs(value) >= 1e5 || (value !== 0 && Math.abs(value) < 1e-3) ? value.toExponential(3) : String(Number(value.toFixed(4)));
}

export function formatParameter(value: unknown): string {
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : String(Number(value.toPrecision(4)));
  return String(value);
}

/** "lr 0.05, hidden 128". */
export function formatParameters(parameters: Record<string, unknown>): string {
  return Object.entries(parameters).map(([k, v]) => `${k} ${formatParameter(v)}`).join(", ");
}

/** A trial's state as the table says it: "pruned at step 4". */
export function trialStateLabel(trial: Trial): string {
  if (trial.state === "pruned" && trial.pruned_step !== null) return `pruned at step ${trial.pruned_step}`;
  return trial.state;
}

/** The experiments list is read again every 2 s while one runs, else every 15 s. */
export const EXPERIMENT_POLL: PollPolicy<Experiment> = {
  busy: (e) => e.state === "running", busyMs: 2000, idleMs: 15000,
};
/** An experiment's trials: every second while one runs (pruning and curves move that fast). */
export const TRIAL_POLL: PollPolicy<Trial> = { busy: (t) => t.state === "running", busyMs: 1000, idleMs: 5000 };
