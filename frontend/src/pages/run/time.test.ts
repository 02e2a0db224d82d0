import { describe, expect, it } from "vitest";
import { duration, formatMs, parseTime } from "./time";

describe("parseTime", () => {
  it("reads a time without offset as UTC", () => {
    expect(parseTime("2026-01-02T03:04:05.5")).toBe(Date.UTC(2026, 0, 2, 3, 4, 5, 500));
  });
  it("keeps an explicit offset", () => {
    expect(parseTime("2026-01-02T03:04:05+02:00")).toBe(Date.UTC(2026, 0, 2, 1, 4, 5));
    expect(parseTime("2026-01-02T03:04:05Z")).toBe(Date.UTC(2026, 0, 2, 3, 4, 5));
  });
});

describe("formatMs", () => {
  it("formats each magnitude", () => {
    expect(formatMs(0)).toBe("0ms");
    expect(formatMs(999)).toBe("999ms");
    expect(formatMs(1000)).toBe("1s");
    expect(formatMs(59_999)).toBe("59s");
    expect(formatMs(60_000)).toBe("1m 00s");
    expect(formatMs(245_000)).toBe("4m 05s");
    expect(formatMs(3_600_000)).toBe("1h 00m");
    expect(formatMs(7_380_000)).toBe("2h 03m");
    expect(formatMs(86_400_000 * 3 + 3_600_000 * 4)).toBe("3d 4h");
  });
  it("counts negative spans (clock skew) as zero and rejects NaN", () => {
    expect(formatMs(-5000)).toBe("0ms");
    expect(formatMs(Number.NaN)).toBe("—");
  });
});

describe("duration", () => {
  const start = "2026-01-01T00:00:00";
  it("is a dash before the start", () => {
    expect(duration(null, null, 0)).toBe("—");
  });
  it("runs to now while unfinished", () => {
    expect(duration(start, null, Date.UTC(2026, 0, 1, 0, 1, 30))).toBe("1m 30s");
  });
  it("uses the end when finished, ignoring now", () => {
    expect(duration(start, "2026-01-01T00:00:12+00:00", Date.UTC(2030, 0, 1))).toBe("12s");
  });
});
