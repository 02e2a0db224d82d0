import { describe, expect, it } from "vitest";
import { commit, createHistory, HISTORY_LIMIT, redo, seal, undo } from "./history";

describe("history", () => {
  it("undoes and redoes commits in order", () => {
    let h = createHistory("a");
    h = commit(h, "b");
    h = commit(h, "c");
    h = undo(h);
    expect(h.present).toBe("b");
    h = undo(h);
    expect(h.present).toBe("a");
    expect(undo(h)).toBe(h);
    h = redo(h);
    h = redo(h);
    expect(h.present).toBe("c");
    expect(redo(h)).toBe(h);
  });

  it("drops the redo branch on a new commit", () => {
    let h = commit(commit(createHistory(1), 2), 3);
    h = commit(undo(h), 4);
    expect(h.future).toEqual([]);
    expect(h.past).toEqual([1, 2]);
  });

  it("coalesces commits with the same key into one step until sealed", () => {
    let h = createHistory("");
    h = commit(h, "1", "args.epochs");
    h = commit(h, "12", "args.epochs");
    h = commit(h, "128", "args.epochs");
    expect(h.past).toEqual([""]);
    h = commit(h, "128!", "name");
    expect(h.past).toEqual(["", "128"]);
    h = seal(h);
    h = commit(h, "128!!", "name");
    expect(h.past).toEqual(["", "128", "128!"]);
    expect(undo(h).present).toBe("128!");
  });

  it("after an undo the same field starts a new step", () => {
    let h = commit(commit(createHistory("a"), "ab", "f"), "abc", "f");
    h = undo(h);
    h = commit(h, "ax", "f");
    expect(h.past).toEqual(["a"]);
    expect(h.future).toEqual([]);
  });

  it("ignores a commit that changes nothing", () => {
    const h = createHistory({ v: 1 });
    expect(commit(h, h.present)).toBe(h);
  });

  it("keeps at most HISTORY_LIMIT past snapshots", () => {
    let h = createHistory(0);
    for (let i = 1; i <= HISTORY_LIMIT + 10; i++) h = commit(h, i);
    expect(h.past.length).toBe(HISTORY_LIMIT);
    expect(h.past[0]).toBe(10);
  });
});
