import { describe, expect, it } from "vitest";
import type { Member } from "../../types";
import { runParameters, showsLogicalDate, startedBy } from "./facts";

describe("runParameters", () => {
  it("lists every parameter, also those left at their default, and marks those that differ", () => {
    expect(runParameters({ lr: 0.05, epochs: 12 }, {})).toEqual([
      { name: "epochs", value: "12", differs: false },
      { name: "lr", value: "0.05", differs: false },
    ]);
    expect(runParameters({ lr: 0.05, epochs: 12, opt: "sgd" }, { lr: 0.01, epochs: 12 })).toEqual([
      { name: "epochs", value: "12", differs: false },
      { name: "lr", value: "0.01", differs: true },
      { name: "opt", value: "sgd", differs: false },
    ]);
  });
  it("marks a value the pipeline has no default for", () => {
    expect(runParameters(null, { extra: [1, 2] })).toEqual([{ name: "extra", value: "[1,2]", differs: true }]);
  });
});

describe("how a run came to be", () => {
  it("shows a logical date for scheduled runs only", () => {
    expect(showsLogicalDate({ trigger: "schedule" })).toBe(true);
    expect(showsLogicalDate({ trigger: "backfill" })).toBe(true);
    expect(showsLogicalDate({ trigger: "manual" })).toBe(false);
    expect(showsLogicalDate({ trigger: "debug" })).toBe(false);
  });
  it("names who started it", () => {
    const members: Member[] = [{ id: 1, user_id: 7, username: "ann", role: "owner" }];
    expect(startedBy(7, members, 3)).toBe("ann");
    expect(startedBy(3, members, 3)).toBe("you");
    expect(startedBy(9, members, 3)).toBe("user #9");
    expect(startedBy(null, members, 3)).toBe("—");
  });
});
