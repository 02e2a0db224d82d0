import { describe, expect, it } from "vitest";
import { formatKeyValues, parseKeyValues } from "./keyValues";

describe("parseKeyValues", () => {
  it("reads key=value lines, skipping blanks and trimming", () => {
    expect(parseKeyValues("gpu = a100\n\n node.kubernetes.io/pool=train \n")).toEqual({
      map: { gpu: "a100", "node.kubernetes.io/pool": "train" },
    });
    expect(parseKeyValues("")).toEqual({ map: {} });
    expect(parseKeyValues("tier=")).toEqual({ map: { tier: "" } });
    expect(parseKeyValues("a=b=c")).toEqual({ map: { a: "b=c" } });
  });
  it("names the bad line", () => {
    expect(parseKeyValues("a=1\njust-a-key")).toEqual({ problem: "line 2: write key=value" });
    expect(parseKeyValues("=x")).toEqual({ problem: "line 1: write key=value" });
    expect(parseKeyValues("a=1\na=2")).toEqual({ problem: "line 2: a is given twice" });
  });
  it("round-trips with formatKeyValues", () => {
    const map = { zone: "eu-1", gpu: "h100" };
    expect(parseKeyValues(formatKeyValues(map))).toEqual({ map });
  });
});
