import { describe, expect, it } from "vitest";
import type { JobTemplate } from "../../types";
import { argRows, formatValue, groupByCategory, matchesSearch } from "./logic";

const template = (name: string, category: string, description = "", version = "1.0.0") =>
  ({ name, category, description, version }) as JobTemplate;

const catalog = [
  template("xgboost", "training", "Distributed XGBoost"),
  template("pytorch-ddp", "training", "PyTorch DistributedDataParallel"),
  template("volcano-job", "batch", "Parallel hyper-parameter sweep"),
  template("pytorch-ddp", "training", "newer", "2.0.0"),
];

describe("matchesSearch", () => {
  it("looks in name and description, every word, any case", () => {
    expect(matchesSearch(catalog[0], "XGB")).toBe(true);
    expect(matchesSearch(catalog[2], "parallel sweep")).toBe(true);
    expect(matchesSearch(catalog[2], "parallel pytorch")).toBe(false);
    expect(matchesSearch(catalog[0], "  ")).toBe(true);
  });
});

describe("groupByCategory", () => {
  it("groups and sorts categories, names and versions", () => {
    const groups = groupByCategory(catalog, "");
    expect(groups.map((g) => g.category)).toEqual(["batch", "training"]);
    expect(groups[1].templates.map((t) => `${t.name}@${t.version}`))
      .toEqual(["pytorch-ddp@1.0.0", "pytorch-ddp@2.0.0", "xgboost@1.0.0"]);
  });
  it("drops categories with no match", () => {
    expect(groupByCategory(catalog, "sweep").map((g) => g.category)).toEqual(["batch"]);
    expect(groupByCategory(catalog, "nothing-like-this")).toEqual([]);
  });
});

describe("argRows", () => {
  it("describes types, defaults and constraints, required first", () => {
    const rows = argRows({
      required: ["model_path"],
      properties: {
        epochs: { type: "integer", default: 10, minimum: 1, maximum: 1000, "x-flag": "--epochs" },
        model_path: { type: "string", pattern: "/.+", description: "Where to write" },
        optimizer: { type: "string", enum: ["adam", "sgd"], default: "adam" },
        layers: { type: "array", items: { type: "integer", minimum: 1 }, maxItems: 8, default: [64, 32] },
        lr: { type: "number", minimum: 0 },
      },
    });
    expect(rows.map((r) => r.name)).toEqual(["model_path", "epochs", "layers", "lr", "optimizer"]);
    expect(rows[0]).toMatchObject({ required: true, default: "—", constraints: ["pattern /.+"], description: "Where to write" });
    expect(rows[1]).toMatchObject({ type: "integer", default: "10", constraints: ["1 – 1000"], flag: "--epochs" });
    expect(rows[2]).toMatchObject({ type: "array of integer", default: "[64,32]", constraints: ["items ≤ 8", "each ≥ 1"] });
    expect(rows[3].constraints).toEqual(["≥ 0"]);
    expect(rows[4].constraints).toEqual(['one of adam, sgd']);
  });
  it("copes with a template without arguments", () => {
    expect(argRows(undefined)).toEqual([]);
    expect(argRows({})).toEqual([]);
  });
});

describe("formatValue", () => {
  it("keeps strings, JSON-encodes the rest", () => {
    expect(formatValue("adam")).toBe("adam");
    expect(formatValue(false)).toBe("false");
    expect(formatValue(0)).toBe("0");
    expect(formatValue(undefined)).toBe("—");
  });
});
