import { describe, expect, it } from "vitest";
import { nextReadIn } from "../../hooks/polling";
import { buildBody, EMPTY_FORM, HISTORY_POLL, mergeLines, sourceLabel, words } from "./logic";

describe("buildBody", () => {
  it("sends only the chosen source's fields", () => {
    const form = { ...EMPTY_FORM, repository: " registry.local/t/env ", tag: "v1", requirements: "six==1.17.0\n",
      aptPackages: "libgomp1, curl", dockerfile: "FROM x", notebookId: "3" };
    expect(buildBody(7, form)).toEqual({ project_id: 7, repository: "registry.local/t/env", tag: "v1",
      source: "packages", requirements: "six==1.17.0\n", apt_packages: ["libgomp1", "curl"] });
    expect(buildBody(7, { ...form, source: "dockerfile", resourceGroupId: "4" })).toEqual({ project_id: 7,
      repository: "registry.local/t/env", tag: "v1", source: "dockerfile", dockerfile: "FROM x", resource_group_id: 4 });
    expect(buildBody(7, { ...form, source: "notebook" })).toEqual({ project_id: 7, repository: "registry.local/t/env",
      tag: "v1", source: "notebook", notebook_id: 3 });
  });

  it("leaves empty optional fields out", () => {
    expect(buildBody(1, { ...EMPTY_FORM, repository: "r", tag: "t" })).toEqual(
      { project_id: 1, repository: "r", tag: "t", source: "packages" });
  });
});

describe("log lines", () => {
  it("append in order and never twice", () => {
    const a = [{ seq: 1, line: "a" }, { seq: 2, line: "b" }];
    expect(mergeLines(a, [{ seq: 2, line: "b" }, { seq: 3, line: "c" }]).map((l) => l.seq)).toEqual([1, 2, 3]);
    expect(mergeLines(a, [{ seq: 1, line: "a" }])).toBe(a);
  });
});

describe("helpers", () => {
  it("split words, poll fast while building, label sources", () => {
    expect(words(" a,b  c\n")).toEqual(["a", "b", "c"]);
    expect(nextReadIn([{ state: "succeeded" }, { state: "running" }], HISTORY_POLL)).toBe(2000);
    expect(nextReadIn([{ state: "failed" }], HISTORY_POLL)).toBe(15000);
    expect(sourceLabel({ source: "packages", packages: ["six"] })).toBe("1 package");
    expect(sourceLabel({ source: "dockerfile", packages: [] })).toBe("Dockerfile");
  });
});
