// How full a bar is: use against a limit (a group's capacity or a project's quota).
import type { Amount, RunningCounts } from "../../types";
import { formatCores, formatGiB, formatGpus } from "./quantity";

export interface Fill {
  /** Bar width, 0–100. */
  percent: number;
  /** Use above the limit (any use counts when the limit is 0). */
  over: boolean;
}

export function fill(used: number, limit: number): Fill {
  if (limit <= 0) return { percent: used > 0 ? 100 : 0, over: used > 0 };
  return { percent: Math.min(100, Math.round((used / limit) * 1000) / 10), over: used > limit };
}

export interface Reading {
  key: keyof Amount;
  label: string;
  used: number;
  limit: number | null;
  format: (value: number) => string;
}

/** One reading per resource, in the order the bars show them. */
export function readings(used: Amount, limit: Amount | null): Reading[] {
  return [
    { key: "cpu_millicores", label: "CPU", used: used.cpu_millicores, limit: limit?.cpu_millicores ?? null, format: formatCores },
    { key: "memory_bytes", label: "Memory", used: used.memory_bytes, limit: limit?.memory_bytes ?? null, format: formatGiB },
    { key: "gpus", label: "GPUs", used: used.gpus, limit: limit?.gpus ?? null, format: formatGpus },
  ];
}

/** "3.5 of 8 cores": the limit's unit serves both numbers. */
export function describeReading(reading: Reading): string {
  const used = reading.format(reading.used);
  if (reading.limit === null) return `${used} used`;
  const [usedNumber] = used.split(" ");
  return `${usedNumber} of ${reading.format(reading.limit)}`;
}

/** What a project runs in a group, in words: "2 jobs · 1 notebook · 1 model server", or "nothing". */
export function describeRunning(running: RunningCounts): string {
  const parts: [number, string, string][] = [
    [running.tasks, "job", "jobs"], [running.notebooks, "notebook", "notebooks"],
    [running.services, "model server", "model servers"],
  ];
  const said = parts.filter(([n]) => n > 0).map(([n, one, many]) => `${n} ${n === 1 ? one : many}`);
  return said.length ? said.join(" · ") : "nothing";
}
