import { describe, expect, it } from "vitest";
import { describeReading, describeRunning, fill, readings } from "./usage";

describe("fill", () => {
  it("is the share of the limit", () => {
    expect(fill(2000, 8000)).toEqual({ percent: 25, over: false });
    expect(fill(1, 3)).toEqual({ percent: 33.3, over: false });
    expect(fill(8000, 8000)).toEqual({ percent: 100, over: false });
  });
  it("caps the bar and flags use above the limit", () => {
    expect(fill(9000, 8000)).toEqual({ percent: 100, over: true });
  });
  it("treats a zero limit as full once anything is used", () => {
    expect(fill(0, 0)).toEqual({ percent: 0, over: false });
    expect(fill(1, 0)).toEqual({ percent: 100, over: true });
  });
});

const GiB = 2 ** 30;

describe("readings", () => {
  it("pairs use with the limit per resource", () => {
    const [cpu, memory, gpus] = readings(
      { cpu_millicores: 3500, memory_bytes: 6 * GiB, gpus: 1 },
      { cpu_millicores: 8000, memory_bytes: 16 * GiB, gpus: 2 },
    );
    expect(describeReading(cpu)).toBe("3.5 of 8 cores");
    expect(describeReading(memory)).toBe("6 of 16 GiB");
    expect(describeReading(gpus)).toBe("1 of 2 GPUs");
    expect(fill(gpus.used, gpus.limit!)).toEqual({ percent: 50, over: false });
  });
  it("has no limit without a quota or capacity", () => {
    const [cpu] = readings({ cpu_millicores: 500, memory_bytes: 0, gpus: 0 }, null);
    expect(cpu.limit).toBeNull();
    expect(describeReading(cpu)).toBe("0.5 cores used");
  });
});

describe("describeRunning", () => {
  it("names what runs by kind, or nothing", () => {
    expect(describeRunning({ tasks: 0, notebooks: 0, services: 0 })).toBe("nothing");
    expect(describeRunning({ tasks: 2, notebooks: 0, services: 1 })).toBe("2 jobs · 1 model server");
    expect(describeRunning({ tasks: 1, notebooks: 3, services: 0 })).toBe("1 job · 3 notebooks");
  });
});
