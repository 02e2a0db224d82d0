import { describe, expect, it } from "vitest";
import { addReplicas, mergeLines, replicaColor } from "./logBuffer";
import type { LogLine } from "../../types";

const line = (replica: string, seq: number, text = `${replica}#${seq}`): LogLine =>
  ({ replica, seq, line: text, timestamp: 1_700_000_000 + seq });

describe("mergeLines", () => {
  it("appends new lines in arrival order", () => {
    const merged = mergeLines([line("a", 1)], [line("b", 1), line("a", 2)]);
    expect(merged.map((l) => l.line)).toEqual(["a#1", "b#1", "a#2"]);
  });
  it("drops lines already held (replica + seq), also duplicates inside one batch", () => {
    const buffer = [line("a", 1), line("b", 1)];
    const merged = mergeLines(buffer, [line("a", 1), line("b", 2), line("b", 2), line("a", 2)]);
    expect(merged.map((l) => l.line)).toEqual(["a#1", "b#1", "b#2", "a#2"]);
  });
  it("tells the same seq of different replicas apart", () => {
    expect(mergeLines([line("a", 1)], [line("b", 1)])).toHaveLength(2);
  });
  it("keeps only the newest `cap` lines", () => {
    const buffer = [1, 2, 3].map((s) => line("a", s));
    const merged = mergeLines(buffer, [4, 5].map((s) => line("a", s)), 4);
    expect(merged.map((l) => l.seq)).toEqual([2, 3, 4, 5]);
  });
  it("caps a single batch larger than cap to its tail", () => {
    const merged = mergeLines([], Array.from({ length: 10 }, (_, i) => line("a", i)), 3);
    expect(merged.map((l) => l.seq)).toEqual([7, 8, 9]);
  });
  it("returns the same array when nothing is new (no re-render)", () => {
    const buffer = [line("a", 1)];
    expect(mergeLines(buffer, [line("a", 1)])).toBe(buffer);
  });
  it("does not mutate its inputs", () => {
    const buffer = [line("a", 1)];
    mergeLines(buffer, [line("a", 2)]);
    expect(buffer).toHaveLength(1);
  });
});

describe("addReplicas", () => {
  it("appends replicas not known yet, once each", () => {
    expect(addReplicas(["master-0"], [line("worker-0", 1), line("master-0", 2), line("worker-0", 3)]))
      .toEqual(["master-0", "worker-0"]);
  });
  it("returns the same list when nothing is new", () => {
    const known = ["a"];
    expect(addReplicas(known, [line("a", 1)])).toBe(known);
  });
});

describe("replicaColor", () => {
  it("gives a replica the same colour every time and tells neighbours apart", () => {
    expect(replicaColor("worker-1")).toBe(replicaColor("worker-1"));
    expect(replicaColor("master-0")).not.toBe(replicaColor("worker-0"));
    expect(replicaColor("worker-0")).not.toBe(replicaColor("worker-1"));
    expect(replicaColor("worker-1")).toMatch(/^#[0-9a-f]{6}$/);
  });
});
