import { describe, expect, it } from "vitest";
import { formatBytes, formatNumber, linearScale, linePath, seriesPerReplica, timeTicks, valueAxis } from "./chart";
import type { MetricSample } from "../../types";

const sample = (replica: string, timestamp: number, cpu: number | null, mem: number | null = null): MetricSample =>
  ({ replica, timestamp, cpu_cores: cpu, memory_bytes: mem, gpu_utilization: null, gpu_memory_bytes: null });

describe("seriesPerReplica", () => {
  it("splits samples into one time-ordered series per replica, sorted by name", () => {
    const series = seriesPerReplica([sample("worker-0", 3, 0.5), sample("master-0", 1, 1), sample("worker-0", 1, 0.2),
      sample("master-0", 2, 1.5)], "cpu_cores");
    expect(series.map((s) => s.replica)).toEqual(["master-0", "worker-0"]);
    expect(series[1].points).toEqual([{ t: 1, v: 0.2 }, { t: 3, v: 0.5 }]);
  });
  it("skips samples without the metric and drops replicas with none", () => {
    const series = seriesPerReplica([sample("a", 1, null, 10), sample("a", 2, 0.1), sample("b", 1, null, 5)],
      "cpu_cores");
    expect(series).toEqual([{ replica: "a", points: [{ t: 2, v: 0.1 }] }]);
    expect(seriesPerReplica([sample("a", 1, 1)], "gpu_utilization")).toEqual([]);
  });
});

describe("linearScale", () => {
  it("maps the domain onto the range, inverted ranges included", () => {
    const y = linearScale(0, 10, 100, 0);
    expect(y(0)).toBe(100);
    expect(y(10)).toBe(0);
    expect(y(2.5)).toBe(75);
  });
  it("puts everything in the middle for a single-point domain", () => {
    expect(linearScale(5, 5, 0, 200)(5)).toBe(100);
  });
});

describe("valueAxis", () => {
  it("rounds the maximum up to a nice step", () => {
    expect(valueAxis(3.7)).toEqual({ max: 4, ticks: [0, 1, 2, 3, 4] });
    expect(valueAxis(87, 4)).toEqual({ max: 100, ticks: [0, 25, 50, 75, 100] });
    expect(valueAxis(0.33, 4, false, 0.1)).toEqual({ max: 0.4, ticks: [0, 0.1, 0.2, 0.3, 0.4] });
  });
  it("keeps a max that is already nice", () => {
    expect(valueAxis(2, 4).max).toBe(2);
  });
  it("gives an all-zero series an axis up to the floor", () => {
    expect(valueAxis(0, 4)).toEqual({ max: 1, ticks: [0, 0.25, 0.5, 0.75, 1] });
  });
  it("steps bytes in binary units", () => {
    const mib = 1024 * 1024;
    const axis = valueAxis(300 * mib, 4, true);
    expect(axis.ticks.every((t) => t % mib === 0)).toBe(true);
    expect(axis.max).toBeGreaterThanOrEqual(300 * mib);
    expect(axis.ticks.length).toBeLessThanOrEqual(6);
  });
});

describe("timeTicks", () => {
  it("puts ticks on whole multiples of a nice step", () => {
    expect(timeTicks(1003, 1062)).toEqual([1005, 1020, 1035, 1050]);
    expect(timeTicks(0, 3600)).toEqual([0, 900, 1800, 2700, 3600]);
  });
  it("handles an empty span", () => {
    expect(timeTicks(7, 7)).toEqual([7]);
  });
});

describe("formatBytes", () => {
  it("uses binary units with at most three significant digits", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(1024)).toBe("1 KiB");
    expect(formatBytes(1536)).toBe("1.5 KiB");
    expect(formatBytes(8151040)).toBe("7.77 MiB");
    expect(formatBytes(123.4 * 1024 ** 2)).toBe("123 MiB");
    expect(formatBytes(2 * 1024 ** 3)).toBe("2 GiB");
    expect(formatBytes(1024 ** 6)).toBe("1024 PiB");
  });
});

describe("formatNumber", () => {
  it("keeps labels short", () => {
    expect(formatNumber(0)).toBe("0");
    expect(formatNumber(0.25)).toBe("0.25");
    expect(formatNumber(1 / 3)).toBe("0.333");
    expect(formatNumber(12_500)).toBe("12.5k");
  });
});

describe("linePath", () => {
  it("moves to the first point and draws lines to the rest", () => {
    expect(linePath([{ t: 0, v: 0 }, { t: 1, v: 2 }], (t) => t * 10, (v) => 100 - v)).toBe("M0.0 100.0 L10.0 98.0");
    expect(linePath([], (t) => t, (v) => v)).toBe("");
  });
});
