import { describe, expect, it } from "vitest";
import { canManageProject, namespaceOf, runningGroups } from "./logic";

describe("projects", () => {
  it("lets owners and admins manage a project", () => {
    expect(canManageProject("owner", false)).toBe(true);
    expect(canManageProject("developer", false)).toBe(false);
    expect(canManageProject("viewer", true)).toBe(true);
    expect(canManageProject(undefined, false)).toBe(false);
  });
  it("shows the namespace a new project gets", () => {
    expect(namespaceOf("vision", "")).toBe("vision");
    expect(namespaceOf("vision", " team-a ")).toBe("team-a");
  });
  it("lists what runs by kind and nothing when nothing runs", () => {
    const none = { runs: [], notebooks: [], services: [], builds: [] };
    expect(runningGroups(none)).toEqual([]);
    expect(runningGroups({
      ...none,
      runs: [{ id: 3, name: "digits run #3", state: "running" }, { id: 4, name: "digits run #4", state: "queued" }],
      services: [{ id: 1, name: "digits", state: "running" }],
    })).toEqual([
      { kind: "2 runs", items: ["digits run #3 (running)", "digits run #4 (queued)"] },
      { kind: "1 model server", items: ["digits (running)"] },
    ]);
  });
});
