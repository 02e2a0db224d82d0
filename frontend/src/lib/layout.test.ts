import { describe, expect, it } from "vitest";
import { layout, NODE_WIDTH } from "./layout";

describe("layout", () => {
  it("puts upstream tasks left of downstream ones (LR)", () => {
    const pos = layout([{ id: "a" }, { id: "b" }, { id: "c" }], [
      { source: "a", target: "b" },
      { source: "b", target: "c" },
    ]);
    expect(pos.get("a")!.x + NODE_WIDTH).toBeLessThanOrEqual(pos.get("b")!.x);
    expect(pos.get("b")!.x + NODE_WIDTH).toBeLessThanOrEqual(pos.get("c")!.x);
  });

  it("stacks siblings without overlap (TB)", () => {
    const pos = layout([{ id: "r" }, { id: "x" }, { id: "y" }], [
      { source: "r", target: "x" },
      { source: "r", target: "y" },
    ], "TB");
    expect(pos.get("x")!.y).toBe(pos.get("y")!.y);
    expect(Math.abs(pos.get("x")!.x - pos.get("y")!.x)).toBeGreaterThanOrEqual(NODE_WIDTH);
  });

  it("ignores edges to unknown nodes", () => {
    expect(layout([{ id: "a" }], [{ source: "a", target: "gone" }]).size).toBe(1);
  });
});
