import { describe, expect, it } from "vitest";
import { nextReadIn, pageCount, type PollPolicy } from "./polling";

const policy: PollPolicy<{ moving: boolean }> = { busy: (r) => r.moving, busyMs: 2000 };

describe("nextReadIn", () => {
  it("reads again soon while a row is transitional", () => {
    expect(nextReadIn([{ moving: false }, { moving: true }], policy)).toBe(2000);
  });
  it("stops when nothing is transitional and there is no idle pace", () => {
    expect(nextReadIn([{ moving: false }], policy)).toBeNull();
    expect(nextReadIn([], policy)).toBeNull();
    expect(nextReadIn(undefined, policy)).toBeNull();
  });
  it("keeps the idle pace when there is one, and never polls without a policy", () => {
    expect(nextReadIn([{ moving: false }], { ...policy, idleMs: 10_000 })).toBe(10_000);
    expect(nextReadIn(undefined, { ...policy, idleMs: 10_000 })).toBe(10_000);
    expect(nextReadIn([{ moving: true }], undefined)).toBeNull();
  });
});

describe("pageCount", () => {
  it("counts whole pages, at least one", () => {
    expect([0, 1, 25, 26, 50, 51].map((n) => pageCount(n, 25))).toEqual([1, 1, 1, 2, 2, 3]);
  });
});
