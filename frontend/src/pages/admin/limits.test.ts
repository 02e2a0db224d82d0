import { describe, expect, it } from "vitest";
import { atLimit, describeSeconds, parseLimit, projectLoad } from "./limits";

describe("parseLimit", () => {
  it("reads a whole number in range", () => {
    expect(parseLimit(" 30 ", 1, 100)).toEqual({ value: 30, problem: null });
    expect(parseLimit("1", 1, 100)).toEqual({ value: 1, problem: null });
  });
  it("reads an empty field as no value", () => {
    expect(parseLimit("  ", 1, 100)).toEqual({ value: null, problem: null });
  });
  it("refuses what the server would refuse, saying why", () => {
    expect(parseLimit("0", 1, 100).problem).toBe("between 1 and 100");
    expect(parseLimit("101", 1, 100).problem).toBe("between 1 and 100");
    expect(parseLimit("2.5", 1, 100).problem).toBe("a whole number");
    expect(parseLimit("-3", 1, 100).problem).toBe("a whole number");
    expect(parseLimit("1e3", 1, 10_000).problem).toBe("a whole number");
  });
});

describe("describeSeconds", () => {
  it("uses the largest exact units", () => {
    expect(describeSeconds(60)).toBe("1 min");
    expect(describeSeconds(90)).toBe("1 min 30 s");
    expect(describeSeconds(7200)).toBe("2 h");
    expect(describeSeconds(86_400 + 61)).toBe("1 d 1 min 1 s");
    expect(describeSeconds(1)).toBe("1 s");
    expect(describeSeconds(0)).toBe("0 s");
  });
});

describe("projectLoad", () => {
  it("says the running runs against the limit, and the queued ones", () => {
    expect(projectLoad({ max_running_runs: 3, running: 2, queued: 0 })).toBe("2 of 3 running");
    expect(projectLoad({ max_running_runs: 1, running: 1, queued: 4 })).toBe("1 of 1 running · 4 queued");
    expect(projectLoad({ max_running_runs: null, running: 5, queued: 1 })).toBe("5 running · 1 queued");
  });
  it("flags a project at its limit only when it has one", () => {
    expect(atLimit({ max_running_runs: 2, running: 2 })).toBe(true);
    expect(atLimit({ max_running_runs: 2, running: 1 })).toBe(false);
    expect(atLimit({ max_running_runs: null, running: 50 })).toBe(false);
  });
});
