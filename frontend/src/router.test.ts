import { describe, expect, it } from "vitest";
import { matchRoute, nextPath } from "./router";

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

describe("nextPath", () => {
  const next = (value: string | null) => nextPath(new URLSearchParams(value === null ? "" : { next: value }));
  it("goes to the page asked for, with its query", () => {
    expect(next("/runs/7")).toBe("/runs/7");
    expect(next("/admin/usage?x=1")).toBe("/admin/usage?x=1");
  });
  it("goes to the pipelines from the root, the sign-in page or without next", () => {
    expect(next("/")).toBe("/pipelines");
    expect(next("/login")).toBe("/pipelines");
    expect(next("/login?next=%2Fruns")).toBe("/pipelines");
    expect(next(null)).toBe("/pipelines");
  });
  it("never leaves the site", () => {
    for (const away of ["//evil.example/x", "/\\evil.example", "https://evil.example/", "javascript:alert(1)",
      "runs/1", "/\u0000x", "/a\\b"]) {
      expect(next(away)).toBe("/pipelines");
    }
  });
});
