// An attempt's CPU, memory and GPU samples as chart lines: one time-ordered series per replica.
import type { LineSeries, Point } from "../../components/charts/options";
import type { MetricSample } from "../../types";
import { replicaColor } from "./logBuffer";

export type MetricKey = "cpu_cores" | "memory_bytes" | "gpu_utilization" | "gpu_memory_bytes";

/** One time-ordered series per replica (sorted by name, in the replica's colour), samples without this
 * metric skipped. */
export function seriesPerReplica(samples: MetricSample[], metric: MetricKey): LineSeries[] {
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
    .map(([name, points]) => ({ name, points: points.sort((p, q) => p.t - q.t), color: replicaColor(name) }));
}
