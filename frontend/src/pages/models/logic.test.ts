import { describe, expect, it } from "vitest";
import type { ModelVersion } from "../../types";
import { byModel, formatMetric, formatSignature, parseShape, serviceName, uploadForm } from "./logic";

function version(id: number, name: string, n: number, metrics: Record<string, number> = {}): ModelVersion {
  return {
    id, name, version: n, metrics, project_id: 1, uri: "/m", framework: "sklearn", stage: "none",
    signature: { shape: [null, 64], dtype: "float32" }, files: [], description: "", image: null,
    params: {}, task_run_id: null, run_id: null, pipeline_id: null, created_at: "", updated_at: "",
  } as ModelVersion;
}

describe("models logic", () => {
  it("groups versions by model, newest first", () => {
    const groups = byModel([version(1, "b", 1), version(2, "a", 1), version(3, "b", 2)]);
    expect(groups.map(([name, list]) => [name, list.map((v) => v.version)])).toEqual([["a", [1]], ["b", [2, 1]]]);
  });

  it("formats metrics", () => {
    expect(formatMetric(null)).toBe("—");
    expect(formatMetric(0.95)).toBe("0.95");
  });

  it("shows the signature and suggests a service name", () => {
    expect(formatSignature(version(1, "m", 1))).toBe("[n, 64] float32");
    expect(serviceName("Digits_Net")).toBe("digits-net");
  });
});

describe("upload form", () => {
  const fields = { projectId: 7, name: " iris ", framework: "sklearn", shape: "n, 4", dtype: "float32",
    metrics: '{"accuracy": 0.9}', description: "" };

  it("reads a shape, n for any size", () => {
    expect(parseShape("n, 64")).toEqual([null, 64]);
    expect(parseShape("?,3,3")).toEqual([null, 3, 3]);
    expect(parseShape("n, many")).toBe("n, many");
  });

  it("builds the multipart fields the API takes", async () => {
    const form = uploadForm(fields, new Blob(["model"]), "model.joblib");
    expect(form.get("project_id")).toBe("7");
    expect(form.get("name")).toBe("iris");
    expect(JSON.parse(form.get("signature") as string)).toEqual({ shape: [null, 4], dtype: "float32" });
    expect(form.get("metrics")).toBe('{"accuracy": 0.9}');
    expect(form.has("description")).toBe(false);
    const file = form.get("file") as File;
    expect(file.name).toBe("model.joblib");
    expect(await file.text()).toBe("model");
  });

  it("sends a shape it cannot read as typed, for the server to name", () => {
    const form = uploadForm({ ...fields, shape: "n, many" }, new Blob(["m"]), "m");
    expect(JSON.parse(form.get("signature") as string).shape).toBe("n, many");
    expect(uploadForm({ ...fields, shape: " " }, new Blob(["m"]), "m").has("signature")).toBe(false);
  });
});
