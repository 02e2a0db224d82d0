import { describe, expect, it } from "vitest";
import type { MetricHistory, ModelVersion } from "../../types";
import { compareRows, curveNames, curveSeries, versionColor, versionLabel } from "./compare";

function version(id: number, n: number, metrics: Record<string, number>, params: Record<string, unknown>,
  name = "digits"): ModelVersion {
  return {
    id, name, version: n, metrics, params, project_id: 1, uri: "/m", framework: "pytorch", stage: "none",
    signature: { shape: [null, 64], dtype: "float32" }, files: [], description: "", image: null,
    task_run_id: null, run_id: null, pipeline_id: null, created_at: "", updated_at: "",
  } as ModelVersion;
}

const V1 = version(1, 1, { accuracy: 0.944, loss: 0.2 }, { lr: 0.05, epochs: 12 });
const V2 = version(2, 2, { accuracy: 0.961 }, { lr: 0.01, epochs: 12 });

describe("versions side by side", () => {
  it("puts every metric and parameter of any version in a row, marking the rows that differ", () => {
    const rows = compareRows([V1, V2]);
    expect(rows.map((r) => [r.group, r.name, r.cells, r.differs])).toEqual([
      ["metric", "accuracy", ["0.944", "0.961"], true],
      ["metric", "loss", ["0.2", "—"], true],  // one has none: that differs too
      ["parameter", "epochs", ["12", "12"], false],
      ["parameter", "lr", ["0.05", "0.01"], true],
      ["model", "framework", ["pytorch", "pytorch"], false],
      ["model", "signature", ["[n, 64] float32", "[n, 64] float32"], false],
    ]);
  });

  it("names versions by number, with the model's name when they belong to different models", () => {
    expect(versionLabel(V2, [V1, V2])).toBe("v2");
    expect(versionLabel(V2, [V1, V2, version(3, 1, {}, {}, "other")])).toBe("digits v2");
  });

  it("draws a line per version that has the metric's curve, in the version's colour", () => {
    const histories: MetricHistory[] = [
      { accuracy: [{ step: 1, value: 0.9 }, { step: 2, value: 0.944 }], loss: [{ step: 1, value: 0.4 }] },
      { accuracy: [{ step: 1, value: 0.93 }, { step: 2, value: 0.961 }] },
    ];
    expect(curveNames(histories)).toEqual(["accuracy", "loss"]);
    expect(curveSeries([V1, V2], histories, "accuracy")).toEqual([
      { name: "v1", color: versionColor(0), points: [{ t: 1, v: 0.9 }, { t: 2, v: 0.944 }] },
      { name: "v2", color: versionColor(1), points: [{ t: 1, v: 0.93 }, { t: 2, v: 0.961 }] },
    ]);
    expect(curveSeries([V1, V2], histories, "loss").map((s) => s.name)).toEqual(["v1"]);
    expect(versionColor(0)).not.toBe(versionColor(1));
  });
});
