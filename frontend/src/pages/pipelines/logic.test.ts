import { describe, expect, it } from "vitest";
import type { Pipeline, PipelineRun } from "../../types";
import { cloneName, dnsLabelProblem, filterPipelines, newestRunByPipeline, pageOf } from "./logic";

describe("dnsLabelProblem", () => {
  it("accepts DNS-1123 labels", () => {
    for (const ok of ["a", "digits", "train-2", "0abc", "a".repeat(63)]) expect(dnsLabelProblem(ok)).toBeNull();
  });
  it("names what is wrong", () => {
    expect(dnsLabelProblem("")).toBe("is required");
    expect(dnsLabelProblem("Train")).toBe("must be lowercase");
    expect(dnsLabelProblem("my_pipe")).toMatch(/only contain/);
    expect(dnsLabelProblem("a.b")).toMatch(/only contain/);
    expect(dnsLabelProblem("-a")).toMatch(/start and end/);
    expect(dnsLabelProblem("a-")).toMatch(/start and end/);
    expect(dnsLabelProblem("a".repeat(64))).toMatch(/at most 63/);
  });
});

const run = (id: number, pipeline_id: number, state: PipelineRun["state"] = "succeeded") =>
  ({ id, pipeline_id, state }) as PipelineRun;

describe("newestRunByPipeline", () => {
  it("keeps the highest id of each pipeline whatever the order", () => {
    const newest = newestRunByPipeline([run(3, 1), run(9, 2, "failed"), run(7, 1, "running"), run(2, 2)]);
    expect(newest.get(1)?.id).toBe(7);
    expect(newest.get(1)?.state).toBe("running");
    expect(newest.get(2)?.id).toBe(9);
    expect(newest.has(3)).toBe(false);
  });
});

const pipe = (name: string) => ({ name }) as Pipeline;

describe("filterPipelines", () => {
  it("matches a substring case-insensitively and sorts by name", () => {
    const all = [pipe("train-b"), pipe("etl"), pipe("train-a")];
    expect(filterPipelines(all, " TRAIN ").map((p) => p.name)).toEqual(["train-a", "train-b"]);
    expect(filterPipelines(all, "").map((p) => p.name)).toEqual(["etl", "train-a", "train-b"]);
    expect(filterPipelines(all, "zzz")).toEqual([]);
  });
});

describe("cloneName", () => {
  it("adds -copy, then a counter when taken", () => {
    expect(cloneName("digits", new Set())).toBe("digits-copy");
    expect(cloneName("digits", new Set(["digits-copy", "digits-copy-2"]))).toBe("digits-copy-3");
  });
  it("stays a valid label for long names", () => {
    const name = cloneName(`${"a".repeat(57)}-b-c`, new Set());
    expect(name.length).toBeLessThanOrEqual(63);
    expect(dnsLabelProblem(name)).toBeNull();
  });
});

describe("pageOf", () => {
  it("slices pages and clamps the page number", () => {
    const rows = Array.from({ length: 250 }, (_, i) => i);
    expect(pageOf(rows, 0).pages).toBe(3);
    expect(pageOf(rows, 2).rows).toEqual(rows.slice(200));
    expect(pageOf(rows, 9).page).toBe(2);
    expect(pageOf([], 0)).toEqual({ rows: [], pages: 1, page: 0 });
  });
});
