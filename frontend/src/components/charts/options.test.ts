import { describe, expect, it } from "vitest";
import { formatBytes, formatClock, formatNumber, formatValue } from "./format";
import { byteStep, lineOption, MARKED_POINTS, parallelOption, timeOption, type ChartOption } from "./options";

type Fn = (...args: unknown[]) => string;
const one = <T,>(value: T | T[] | undefined): T => (Array.isArray(value) ? value[0] : value) as T;
const axisLabel = (option: ChartOption, axis: "xAxis" | "yAxis") =>
  (one(option[axis]) as { axisLabel: { formatter: Fn } }).axisLabel.formatter;

describe("units", () => {
  it("keeps the fraction of a 0–1 axis (never `1 1 1 0 0`)", () => {
    expect([0, 0.25, 0.5, 0.75, 1].map((v) => formatValue(v, "req/s")))
      .toEqual(["0 req/s", "0.25 req/s", "0.5 req/s", "0.75 req/s", "1 req/s"]);
    expect(formatValue(12.5, "ms")).toBe("12.5 ms");
    expect(formatValue(42, "%")).toBe("42%");
    expect(formatValue(0.9444, "")).toBe("0.944");
  });

  it("writes bytes in binary units and large numbers short", () => {
    expect(formatBytes(1536)).toBe("1.5 KiB");
    expect(formatValue(3 * 1024 ** 3, "bytes")).toBe("3 GiB");
    expect(formatNumber(12_345)).toBe("12.3k");
    expect(formatNumber(Number.NaN)).toBe("—");
  });

  it("reads a time in the zone asked for", () => {
    const noonUtc = Date.UTC(2026, 0, 15, 12, 0, 5);
    expect(formatClock(noonUtc, "UTC")).toBe("12:00:05");
    expect(formatClock(noonUtc, "Asia/Tokyo")).toBe("21:00:05");
  });
});

describe("line over steps", () => {
  const option = lineOption({
    series: [{ name: "v1", points: [{ t: 1, v: 0.9 }, { t: 2, v: 0.94 }] }, { name: "v2", points: [{ t: 1, v: 0.92 }] }],
    x: { name: "step", integer: true }, y: { name: "accuracy" },
  });

  it("has a legend entry and a line per series, points as [x, y]", () => {
    expect(option.legend).toMatchObject({ data: ["v1", "v2"] });
    const series = option.series as { type: string; name: string; data: number[][]; showSymbol: boolean }[];
    expect(series.map((s) => [s.type, s.name])).toEqual([["line", "v1"], ["line", "v2"]]);
    expect(series[0].data).toEqual([[1, 0.9], [2, 0.94]]);
    expect(series[1].showSymbol).toBe(true);  // one point is a marker, not nothing
  });

  it("ticks steps at whole numbers, names the axes, and fits the y axis to the data", () => {
    const x = one(option.xAxis) as { name: string; minInterval: number };
    const y = one(option.yAxis) as { name: string; scale: boolean };
    expect([x.name, x.minInterval, y.name, y.scale]).toEqual(["step", 1, "accuracy", true]);
    expect(option.tooltip).toMatchObject({ trigger: "axis" });
  });

  it("drops markers on long lines", () => {
    const points = Array.from({ length: MARKED_POINTS + 1 }, (_, t) => ({ t, v: t }));
    const long = lineOption({ series: [{ name: "loss", points }], x: { name: "step" }, y: { name: "loss" } });
    expect((long.series as { showSymbol: boolean }[])[0].showSymbol).toBe(false);
  });
});

describe("line over time", () => {
  const option = timeOption({
    series: [{ name: "v1", points: [{ t: 1_700_000_000, v: 0.5 }], color: "#123456" }],
    y: { name: "Requests per second", unit: "req/s", fromZero: true },
    window: [1_699_999_880, 1_700_000_000], zone: "UTC",
  });

  it("takes Unix seconds as milliseconds on a time axis pinned to the window, named with its zone", () => {
    const x = one(option.xAxis) as { type: string; name: string; min: number; max: number };
    expect([x.type, x.name, x.min, x.max]).toEqual(["time", "time (UTC)", 1_699_999_880_000, 1_700_000_000_000]);
    expect((option.series as { data: number[][]; color: string }[])[0]).toMatchObject(
      { data: [[1_700_000_000_000, 0.5]], color: "#123456" });
    expect(option.useUTC).toBe(false);
  });

  it("labels both axes with units and clock times, and the tooltip with the unit", () => {
    expect(axisLabel(option, "yAxis")(0.25)).toBe("0.25 req/s");
    expect(axisLabel(option, "xAxis")(Date.UTC(2026, 0, 1, 8, 30, 0))).toBe("08:30:00");
    const tooltip = option.tooltip as { valueFormatter: Fn };
    expect(tooltip.valueFormatter(3)).toBe("3 req/s");
    expect((one(option.yAxis) as { scale: boolean }).scale).toBe(false);  // from zero
  });
});

describe("parallel coordinates", () => {
  const option = parallelOption({
    axes: [{ name: "lr" }, { name: "optimizer", categories: ["sgd", "adam"] }, { name: "accuracy" }],
    lines: [{ name: "trial 1", values: [0.05, "sgd", 0.944] }, { name: "trial 2", values: [0.01, "adam", null] }],
  });

  it("has an axis per dimension and a line per trial", () => {
    expect((option.parallelAxis as { dim: number; name: string; type: string }[]).map((a) => [a.dim, a.name, a.type]))
      .toEqual([[0, "lr", "value"], [1, "optimizer", "category"], [2, "accuracy", "value"]]);
    expect((option.series as { type: string; data: unknown[] }[]).map((s) => [s.type, s.data]))
      .toEqual([["parallel", [[0.05, "sgd", 0.944]]], ["parallel", [[0.01, "adam", null]]]]);
    expect(option.legend).toMatchObject({ data: ["trial 1", "trial 2"] });
  });

  it("tells a line's values in its tooltip", () => {
    const tooltip = option.tooltip as { formatter: Fn };
    expect(tooltip.formatter({ seriesName: "trial 2", value: [0.01, "adam", null] }))
      .toBe("trial 2<br/>lr: 0.01<br/>optimizer: adam<br/>accuracy: —");
  });
});

describe("byte axes", () => {
  it("steps in round binary units", () => {
    expect(byteStep(420 * 1024 ** 2)).toBe(200 * 1024 ** 2);
    expect(byteStep(3 * 1024 ** 3)).toBe(1024 ** 3);
    expect(byteStep(1500)).toBe(500);
    expect(byteStep(0)).toBeUndefined();
  });

  it("gives a memory chart from zero those steps", () => {
    const option = timeOption({ series: [{ name: "a", points: [{ t: 1, v: 420 * 1024 ** 2 }] }],
      y: { name: "Memory", unit: "bytes", fromZero: true } });
    expect((one(option.yAxis) as { interval: number }).interval).toBe(200 * 1024 ** 2);
    expect(axisLabel(option, "yAxis")(200 * 1024 ** 2)).toBe("200 MiB");
  });
});
