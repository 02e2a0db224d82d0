import { describe, expect, it } from "vitest";
import type { SimulationResult } from "../../types";
import { compareRows, DAY, policyColor, seriesOf } from "./simulator";

function result(policy: string, avg: number, utilization: number[], jct: (number | null)[]): SimulationResult {
  const t = utilization.map((_, i) => i * DAY);
  return {
    policy, gpus: 64, jobs: 10, max_preemptions_of_a_job: 0,
    avg_jct_s: avg, p50_jct_s: 3600, p95_jct_s: 7200, p99_jct_s: 9000, makespan_s: 3 * DAY,
    utilization: 0.9, offered_load: 1.1, partial_gang_seconds: 0, preemptions_per_job: 0, lost_gpu_seconds: 0,
    sim_seconds: 0.25,
    series: {
      over_time: { t, utilization, waiting: utilization.map((u) => u * 10) },
      jct_by_submission: { t, avg_jct_s: jct, jobs: jct.map((v) => (v === null ? 0 : 1)) },
    },
  };
}

const FIFO = result("gang-fifo", 10_000, [1, 0.5, 0.25], [7200, null, 3600]);
const SIEVE = result("sieve", 8_300, [1, 1, 0], [3600, 1800, null]);

describe("simulator series", () => {
  it("gives one line per policy in days, in its colour, JCT in hours, leaving out empty bins", () => {
    const [fifo, sieve] = seriesOf([FIFO, SIEVE], "avg_jct_s");
    expect(fifo).toEqual({ name: "gang-fifo", color: policyColor(["gang-fifo", "sieve"], "gang-fifo"),
      points: [{ t: 0, v: 2 }, { t: 2, v: 1 }] });
    expect(sieve.points).toEqual([{ t: 0, v: 1 }, { t: 1, v: 0.5 }]);
    expect(seriesOf([FIFO], "waiting")[0].points.map((p) => p.v)).toEqual([10, 5, 2.5]);
  });

  it("gives utilization in percent", () => {
    expect(seriesOf([FIFO], "utilization")[0].points.map((p) => p.v)).toEqual([100, 50, 25]);
  });

  it("colours the compared policies differently", () => {
    const names = ["gang-fifo", "sieve"];
    expect(policyColor(names, "gang-fifo")).not.toBe(policyColor(names, "sieve"));
  });
});

describe("side-by-side figures", () => {
  it("formats each figure and the ratio of the second policy to the first", () => {
    const rows = compareRows([FIFO, SIEVE]);
    const avg = rows.find((r) => r.label === "Average JCT")!;
    expect(avg.values).toEqual(["2h 46m", "2h 18m"]);
    expect(avg.ratios).toEqual(["0.83×"]);
    const partial = rows.find((r) => r.label === "Partial-gang GPU-seconds")!;
    expect(partial.values).toEqual(["0", "0"]);
    expect(partial.ratios).toEqual([null]);  // 0 against 0: no ratio to speak of
  });

  it("has no ratio column with one policy", () => {
    expect(compareRows([FIFO]).every((r) => r.ratios.length === 0)).toBe(true);
  });
});
