import { describe, expect, it } from "vitest";
import type { Notebook, NotebookImageChoice } from "../../types";
import { nextReadIn } from "../../hooks/polling";
import {
  actions, createBody, EMPTY_FORM, firstChoice, formProblems, idleTime, imageChoices, LIST_POLL, openUrl, shortDuration,
  stateClass, stateLabel,
} from "./logic";

const notebook = (extra: Partial<Notebook> = {}): Notebook => ({
  id: 1, project_id: 7, name: "scratch", image: "jupyter/base:1", resources: { cpu: "1", memory: "2Gi", gpu: 0 },
  resource_group_id: null, volume: null, state: "running", reason: null, desired: "running", url: null,
  started_at: "2026-01-01T10:00:00Z", last_activity_at: "2026-01-01T11:00:00Z", created_by_id: 3,
  created_at: "2026-01-01T09:59:00Z", updated_at: "2026-01-01T11:00:00Z", ...extra,
});

describe("states", () => {
  it("polls fast only while a notebook is on its way somewhere", () => {
    const every = (rows: Notebook[]) => nextReadIn(rows, LIST_POLL);
    expect(every([notebook(), notebook({ state: "stopped" })])).toBe(10000);
    for (const state of ["pending", "pulling", "waiting", "stopping"] as const) {
      expect(every([notebook(), notebook({ state })])).toBe(2000);
    }
    expect(every([])).toBe(10000);
  });
  it("says what pulling and waiting mean", () => {
    expect(stateLabel("pulling")).toBe("preparing image");
    expect(stateLabel("waiting")).toBe("waiting for resources");
    expect(stateLabel("failed")).toBe("failed");
    expect(stateClass("idle")).toBe("cancelled");
    expect(stateClass("running")).toBe("running");
    expect(stateClass("stopping")).toBe("pending");
  });
});

describe("idleTime", () => {
  const now = new Date("2026-01-01T11:12:30Z").getTime();
  it("counts from the last kernel or terminal activity of a serving notebook", () => {
    expect(idleTime(notebook(), now)).toBe("12m");
    expect(idleTime(notebook({ state: "idle", last_activity_at: "2026-01-01T08:00:00Z" }), now)).toBe("3h 12m");
    expect(idleTime(notebook({ last_activity_at: null }), now)).toBe("1h 12m"); // since it started
  });
  it("is empty for a notebook that does not serve", () => {
    for (const state of ["pending", "stopped", "failed", "stopping"] as const) {
      expect(idleTime(notebook({ state }), now)).toBeNull();
    }
  });
  it("formats durations shortly", () => {
    expect(shortDuration(-5)).toBe("0s");
    expect(shortDuration(59_000)).toBe("59s");
    expect(shortDuration(26 * 3600_000 + 60_000)).toBe("1d 2h");
  });
});

describe("openUrl", () => {
  it("is the server's link on the notebook's own origin, only while it serves", () => {
    const url = "http://scratch.vision.localhost:8081/notebook/vision/scratch/lab";
    expect(openUrl(notebook({ url }))).toBe(url);
    expect(openUrl(notebook({ state: "idle", url }))).toBe(url);
    expect(openUrl(notebook())).toBeNull(); // never a path on the platform's own origin
    expect(openUrl(notebook({ state: "pending", url: "x" }))).toBeNull();
  });
});

describe("actions", () => {
  it("follows the state for developers and owners", () => {
    expect(actions(notebook(), "developer")).toEqual({ toggle: "stop", start: false, stop: true, remove: true, locked: null });
    expect(actions(notebook({ state: "stopped" }), "owner"))
      .toEqual({ toggle: "start", start: true, stop: false, remove: true, locked: null });
    expect(actions(notebook({ state: "failed" }), "owner").start).toBe(true);
    expect(actions(notebook({ state: "stopping" }), "owner")).toMatchObject({ toggle: "stop", start: false, stop: false });
    expect(actions(notebook({ state: "waiting" }), "owner").stop).toBe(true);
  });
  it("allows nothing on a notebook being deleted", () => {
    expect(actions(notebook({ state: "stopping", desired: "deleted" }), "owner"))
      .toEqual({ toggle: "stop", start: false, stop: false, remove: false, locked: null });
  });
  it("locks every write for a viewer and says why", () => {
    expect(actions(notebook(), "viewer")).toMatchObject({ toggle: "stop", stop: false });
    const found = actions(notebook({ state: "stopped" }), "viewer");
    expect(found).toMatchObject({ toggle: "start", start: false, stop: false, remove: false });
    expect(found.locked).toMatch(/viewer cannot/);
  });
});

describe("the create form", () => {
  it("checks what the server checks, by the server's field names", () => {
    expect(formProblems(EMPTY_FORM)).toEqual({ name: "is required", image: "choose an image or environment" });
    const form = { ...EMPTY_FORM, image: "jupyter/base:1" };
    for (const bad of ["1abc", "Abc", "a_b", "a-", "a".repeat(41)]) {
      expect(formProblems({ ...form, name: bad }).name).toMatch(/DNS label of at most 40/);
    }
    expect(formProblems({ ...form, name: "a".repeat(40) })).toEqual({});
    expect(formProblems({ ...form, name: "nb", cpu: "lots", memory: "2 GB", gpu: "0.5", volume: "Data!" })).toEqual({
      "resources.cpu": expect.any(String), "resources.memory": expect.any(String),
      "resources.gpu": expect.any(String), volume: expect.any(String),
    });
    expect(formProblems({ ...form, name: "nb", cpu: "500m", memory: "512Mi", gpu: "1" })).toEqual({});
  });
  it("builds the request body, leaving out what was not chosen", () => {
    expect(createBody({ ...EMPTY_FORM, name: " nb1 ", image: "jupyter/base:1" }, 7)).toEqual({
      project_id: 7, name: "nb1", image: "jupyter/base:1", resources: { cpu: "1", memory: "2Gi", gpu: 0 },
    });
    expect(createBody({ ...EMPTY_FORM, name: "nb1", image: "x:1", gpu: "2", resourceGroupId: "4", volume: "data" }, 7))
      .toMatchObject({ resource_group_id: 4, volume: "data", resources: { gpu: 2 } });
  });
});

describe("imageChoices", () => {
  const choice = (image: string, group: NotebookImageChoice["group"], environment = false): NotebookImageChoice => ({
    image, group, environment, description: "",
  });
  it("keeps the server's order, says which are built environments, and starts with the first default", () => {
    const choices = imageChoices([
      choice("myapp/python-ml:3.11", "default", true), choice("ghcr.io/myapp-platform/notebook:1.0.0", "default"),
      choice("myapp/env/vision:abc123", "project", true), choice("jupyter/base:1", "catalog"),
    ]);
    expect(choices).toEqual([
      { value: "myapp/python-ml:3.11", label: "myapp/python-ml:3.11", group: "default" },
      { value: "ghcr.io/myapp-platform/notebook:1.0.0", label: "ghcr.io/myapp-platform/notebook:1.0.0", group: "default" },
      { value: "myapp/env/vision:abc123", label: "myapp/env/vision:abc123 (environment)", group: "project" },
      { value: "jupyter/base:1", label: "jupyter/base:1", group: "catalog" },
    ]);
    expect(firstChoice(choices)).toBe("myapp/python-ml:3.11");
    expect(firstChoice(imageChoices([choice("jupyter/base:1", "catalog")]))).toBe("");
  });
});
