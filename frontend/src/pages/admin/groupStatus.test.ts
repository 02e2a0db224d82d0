import { describe, expect, it } from "vitest";
import { borrowedText, discoveryText, isBorrowing, placement, requestText, since } from "./groupStatus";
import { STATUS } from "./groupStatus.fixture";

describe("the resource group view's text", () => {
  it("lists a gang's nodes in natural order", () => {
    expect(placement({ "node-10": 8, "node-2": 8, "node-1": 1 })).toBe("node-1: 1 GPU, node-2: 8 GPUs, node-10: 8 GPUs");
    expect(placement({ local: 0 })).toBe("local");  // a job without GPUs: where it runs, no count
    expect(placement({})).toBe("—");
  });

  it("says what a project borrows beyond its quota", () => {
    const [demo, vision] = STATUS.projects;
    expect(borrowedText(demo.borrowed)).toBe("2 GPUs");
    expect(isBorrowing(demo)).toBe(true);
    expect(borrowedText(vision.borrowed)).toBe("none");
    expect(isBorrowing(vision)).toBe(false);
    expect(borrowedText({ gpus: 1, cpu_millicores: 1500, memory_bytes: 2 ** 31 })).toBe("1 GPU, 1.5 cores, 2 GiB");
  });

  it("describes an attempt's request and how long it has waited", () => {
    expect(requestText(STATUS.queue[0])).toBe("2 GPUs · 2 cores · 4 GiB");
    expect(requestText({ gpus: 0, cpu_millicores: 500, memory_bytes: 2 ** 29 })).toBe("0.5 cores · 0.5 GiB");
    expect(since("2026-11-24T07:01:00Z", Date.parse("2026-11-24T07:05:05Z"))).toBe("4m 05s");
  });

  it("sums up the nodes discovered on the cluster and why some take no pods", () => {
    const node = { gpus: 8, cpu_millicores: 8000, memory_bytes: 2 ** 36 };
    const at = "2026-11-24T07:00:00Z";
    expect(discoveryText(STATUS.discovery)).toBe("not discovered yet: capacity from the definition");
    expect(discoveryText({ enabled: true, at, error: null, nodes: [{ name: "a", ...node, schedulable: true, why: null }] }))
      .toBe("1 node, all schedulable");
    expect(discoveryText({
      enabled: true, at, error: null, nodes: [
        { name: "a", ...node, schedulable: true, why: null },
        { name: "b", ...node, schedulable: false, why: "cordoned" },
        { name: "c", ...node, schedulable: false, why: "not ready" }],
    })).toBe("3 nodes, 1 schedulable (b: cordoned, c: not ready)");
  });
});
