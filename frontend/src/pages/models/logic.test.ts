import { describe, expect, it } from "vitest";
import type { ModelVersion } from "../../types";
import { byModel, compareMetrics, formatMetric, formatSignature, serviceName } from "./logic";

function version(id: number, name: string, n: number, metrics: Record<string, number> = {}): ModelVersion {
  return {
    id, name, version: n, metrics, project_id: 1, uri: "/m", framework: "sklearn", stage: "none",
    signature: { shape: [null, 64], dtype: "float32" }, files: [], description: "", image: null,
    task_run_id: null, run_id: null, pipeline_id: null, created_at: "", updated_at: "",
  } as ModelVersion;
}

describe("models logic", () => {
  it("groups versions by model, newest first", () => {
    const groups = byModel([version(1, "b", 1), version(2, "a", 1), version(3, "b", 2)]);
    expect(groups.map(([name, list]) => [name, list.map((v) => v.version)])).toEqual([["a", [1]], ["b", [2, 1]]]);
  });

  it("compares the metrics of two versions", () => {
    const rows = compareMetrics(version(1, "m", 1, { accuracy: 0.9, loss: 0.3 }), version(2, "m", 2, { accuracy: 0.95 }));
    expect(rows).toEqual([
      { name: "accuracy", a: 0.9, b: 0.95, delta: expect.closeTo(0.05, 6) as unknown as number },
      { name: "loss", a: 0.3, b: null, delta: null },
    ]);
    expect(formatMetric(null)).toBe("—");
    expect(formatMetric(0.95)).toBe("0.95");
  });

  it("shows the signature and suggests a service name", () => {
    expect(formatSignature(version(1, "m", 1))).toBe("[n, 64] float32");
    expect(serviceName("Digits_Net")).toBe("digits-net");
  });
});
