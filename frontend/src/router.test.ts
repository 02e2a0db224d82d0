import { describe, expect, it } from "vitest";
import { matchRoute } from "./router";

describe("matchRoute", () => {
  it("extracts parameters", () => {
    expect(matchRoute("/pipelines/:id", "/pipelines/42")).toEqual({ id: "42" });
    expect(matchRoute("/runs/:id", "/runs/7/")).toEqual({ id: "7" });
  });
  it("refuses other paths", () => {
    expect(matchRoute("/pipelines/:id", "/pipelines")).toBeNull();
    expect(matchRoute("/pipelines/:id", "/runs/1")).toBeNull();
    expect(matchRoute("/", "/pipelines")).toBeNull();
  });
});
