// The arithmetic of the comparison page: which runs, their parameters and metrics side by side.
import type { PipelineRun, ReportedMetric, Task, TaskRun } from "../../types";
import { replicaColor } from "../run/logBuffer";
import type { NamedSeries } from "../run/stepSeries";
import { lastValues, metricNames, stepPoints } from "../run/stepSeries";

/** Do the cells of a row (one per run or version, "—" for none) say different things? Such a row is marked. */
export function differs(cells: string[]): boolean {
  return new Set(cells).size > 1;
}

/** "?runs=3,5,x,5" → [3, 5]: positive ids, each once, in the order given. */
export function parseRunIds(value: string | null): number[] {
  const ids: number[] = [];
  for (const part of (value ?? "").split(",")) {
    const id = Number(part.trim());
    if (Number.isInteger(id) && id > 0 && !ids.includes(id)) ids.push(id);
  }
  return ids;
}

/** The parameter names used by any run (with the pipeline's defaults), sorted. */
export function parameterNames(runs: PipelineRun[], defaults: Record<string, unknown>): string[] {
  return [...new Set([...Object.keys(defaults), ...runs.flatMap((r) => Object.keys(r.parameters ?? {}))])].sort();
}

export function parameterValue(run: PipelineRun, name: string, defaults: Record<string, unknown>): string {
  const value = name in (run.parameters ?? {}) ? run.parameters[name] : defaults[name];
  return value === undefined ? "—" : String(value);
}

/** "task/metric" → the metrics a run's tasks reported (the latest attempt of each task). */
export function runMetrics(taskRuns: TaskRun[], tasks: Task[]): Map<string, ReportedMetric[]> {
  const names = new Map(tasks.map((t) => [t.id, t.name]));
  const latest = new Map<number, TaskRun>();
  for (const tr of taskRuns) {
    const seen = latest.get(tr.task_id);
    if (!seen || tr.attempt > seen.attempt) latest.set(tr.task_id, tr);
  }
  const out = new Map<string, ReportedMetric[]>();
  for (const tr of latest.values()) {
    const metrics = tr.reported_metrics ?? [];
    for (const name of metricNames(metrics)) {
      out.set(`${names.get(tr.task_id) ?? tr.task_id}/${name}`, metrics.filter((m) => m.name === name));
    }
  }
  return out;
}

/** Every "task/metric" key over the runs, sorted. */
export function metricKeys(perRun: Map<string, ReportedMetric[]>[]): string[] {
  return [...new Set(perRun.flatMap((m) => [...m.keys()]))].sort();
}

export function lastValue(metrics: ReportedMetric[] | undefined): number | undefined {
  if (!metrics?.length) return undefined;
  return Object.values(lastValues(metrics))[0];
}

/** One series per run for a metric: what the comparison charts draw. */
export function seriesPerRun(runs: PipelineRun[], perRun: Map<string, ReportedMetric[]>[], key: string): NamedSeries[] {
  return runs.flatMap((run, i) => {
    const metrics = perRun[i].get(key);
    if (!metrics?.length) return [];
    const name = key.slice(key.lastIndexOf("/") + 1);
    return [{ name: `run ${run.id}`, points: stepPoints(metrics, name), color: replicaColor(`run ${run.id}`) }];
  });
}
