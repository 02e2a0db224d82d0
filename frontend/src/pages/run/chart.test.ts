import { describe, expect, it } from "vitest";
import { seriesPerReplica } from "./chart";
import { replicaColor } from "./logBuffer";
import type { MetricSample } from "../../types";

const sample = (replica: string, timestamp: number, cpu: number | null, mem: number | null = null): MetricSample =>
  ({ replica, timestamp, cpu_cores: cpu, memory_bytes: mem, gpu_utilization: null, gpu_memory_bytes: null });

describe("seriesPerReplica", () => {
  it("splits samples into one time-ordered series per replica, sorted by name, in the replica's colour", () => {
    const series = seriesPerReplica([sample("worker-0", 3, 0.5), sample("master-0", 1, 1), sample("worker-0", 1, 0.2),
      sample("master-0", 2, 1.5)], "cpu_cores");
    expect(series.map((s) => s.name)).toEqual(["master-0", "worker-0"]);
    expect(series[1].points).toEqual([{ t: 1, v: 0.2 }, { t: 3, v: 0.5 }]);
    expect(series[1].color).toBe(replicaColor("worker-0"));
  });
  it("skips samples without the metric and drops replicas with none", () => {
    const series = seriesPerReplica([sample("a", 1, null, 10), sample("a", 2, 0.1), sample("b", 1, null, 5)],
      "cpu_cores");
    expect(series).toEqual([{ name: "a", points: [{ t: 2, v: 0.1 }], color: replicaColor("a") }]);
    expect(seriesPerReplica([sample("a", 1, 1)], "gpu_utilization")).toEqual([]);
  });
});
