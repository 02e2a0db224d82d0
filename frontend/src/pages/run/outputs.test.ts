import { describe, expect, it } from "vitest";
import { fileUrl, parseCsv, retryDelay } from "./OutputsTab";
import { changedParams } from "./RunDialog";
import { lastValues, metricNames, stepPoints } from "./stepSeries";

describe("outputs", () => {
  it("parses CSV previews, quotes included", () => {
    expect(parseCsv('a,b\n1,"x, ""y"""\n\n2,3\n')).toEqual([["a", "b"], ["1", 'x, "y"'], ["2", "3"]]);
    expect(parseCsv("a\tb\n1\t2", "\t")).toEqual([["a", "b"], ["1", "2"]]);
  });

  it("addresses a file by its path in the query", () => {
    expect(fileUrl(5, "dir/a b.csv", true)).toBe("/api/v1/task_run/5/output?path=dir%2Fa+b.csv&preview=1");
    expect(fileUrl(5, "m.pt")).toBe("/api/v1/task_run/5/output?path=m.pt");
  });

  it("waits as long as a fetch from the cluster asks, within bounds", () => {
    expect(retryDelay("5")).toBe(5);
    expect(retryDelay(null)).toBe(5);
    expect(retryDelay("junk")).toBe(5);
    expect(retryDelay("0")).toBe(5);
    expect(retryDelay("3600")).toBe(60);
  });

  it("turns reported metrics into series by step", () => {
    const metrics = [
      { step: 2, name: "loss", value: 0.5 }, { step: 1, name: "loss", value: 0.9 },
      { step: 2, name: "loss", value: 0.4 }, { step: 3, name: "acc", value: 0.8 },
    ];
    expect(metricNames(metrics)).toEqual(["loss", "acc"]);
    expect(stepPoints(metrics, "loss")).toEqual([{ t: 1, v: 0.9 }, { t: 2, v: 0.4 }]);
    expect(lastValues(metrics)).toEqual({ loss: 0.4, acc: 0.8 });
  });

  it("sends only the parameters the user changed", () => {
    expect(changedParams({ lr: 0.05, epochs: 3 }, { lr: "0.01", epochs: "3" })).toEqual({ lr: "0.01" });
  });
});
