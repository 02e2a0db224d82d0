import { describe, expect, it } from "vitest";
import type { InferenceService, ModelVersion, ServiceMetrics } from "../../types";
import { replicaColor } from "../run/logBuffer";
import { canaryOf, curlCommand, figureSeries, formatLatency, observedShares, sampleRequest, versionRows } from "./logic";

const service = {
  id: 4, name: "digits", model_version_id: 1, traffic: { "1": 70, "2": 30 }, shadow_version_id: 3,
  versions_status: { "1": { state: "running", reason: "", label: "v1" }, "2": { state: "pending", reason: "starting" } },
  endpoint: "/serving/demo/digits/",
} as unknown as InferenceService;

describe("services logic", () => {
  it("lists the stable version first, then canaries and the shadow", () => {
    const rows = versionRows(service, new Map([[2, { version: 2 } as ModelVersion]]));
    expect(rows.map((r) => [r.label, r.weight, r.stable, r.shadow, r.state])).toEqual([
      ["v1", 70, true, false, "running"], ["v2", 30, false, false, "pending"], ["#3", 0, false, true, "pending"]]);
    expect(canaryOf(service)).toBe(2);
  });

  it("builds a request from the signature and the same call as curl", () => {
    const body = sampleRequest({ signature: { shape: [null, 3], dtype: "float32" } } as ModelVersion);
    expect(body).toBe('{"instances":[[0,0,0]]}');
    expect(curlCommand("http://h:8080", service.endpoint, "predict", "{'x'}")).toContain(
      "curl -sS -X POST 'http://h:8080/serving/demo/digits/predict'");
    expect(curlCommand("http://h", "/s/", "p", "{'x'}")).toContain(`-d '{'\\''x'\\''}'`);
  });

  it("turns the router's figures into series and shares", () => {
    const metrics = {
      window: 60,
      versions: { v1: { requests: 70, errors: 0, rps: 1, p50: 1, p95: 2, p99: 3 },
        v2: { requests: 30, errors: 1, rps: 0.5, p50: 1, p95: 2, p99: 3 },
        "v3 (shadow)": { requests: 100, errors: 0, rps: 1, p50: 1, p95: 2, p99: 3 } },
      series: { v1: [{ t: 2, n: 5, errors: 0, p50: 1, p95: 2, p99: 3 }, { t: 1, n: 3, errors: 0, p50: 1, p95: null, p99: 3 }] },
    } as ServiceMetrics;
    expect(observedShares(metrics)).toEqual({ v1: 70, v2: 30 });
    expect(figureSeries(metrics, "rps")).toEqual(
      [{ name: "v1", color: replicaColor("v1"), points: [{ t: 1, v: 3 }, { t: 2, v: 5 }] }]);
    expect(figureSeries(metrics, "p95")[0].points).toEqual([{ t: 2, v: 2 }]);
  });

  it("says a request's latency in ms or seconds", () => {
    expect([formatLatency(8.44), formatLatency(120.4), formatLatency(1250), formatLatency(Number.NaN)])
      .toEqual(["8.4 ms", "120 ms", "1.25 s", "—"]);
  });
});
