import { describe, expect, it } from "vitest";
import type { NotebookImageChoice } from "../../types";
import { imageChoices } from "../notebooks/logic";
import { canChooseImage, imageGroups } from "./imageChoice";
import { addTask, EMPTY_DRAFT, updateTask } from "./model";
import { buildGraphPayload } from "./payload";
import { template } from "./testing";

describe("which templates choose an image", () => {
  it("lets templates running the user's code choose, never the platform's own steps", () => {
    expect(canChooseImage(template(1, "python"))).toBe(true);
    expect(canChooseImage(template(2, "pytorch-ddp", { kind: "pytorchjob" }))).toBe(true);
    expect(canChooseImage(template(3, "horovod-mpi", { kind: "mpijob" }))).toBe(true);
    expect(canChooseImage(template(4, "model-register"))).toBe(false); // kind job, but the platform's step
    expect(canChooseImage(template(5, "notebook", { kind: "notebook" }))).toBe(false);
    expect(canChooseImage(template(6, "my-server", { kind: "service" }))).toBe(false);
    expect(canChooseImage(undefined)).toBe(false);
  });
});

describe("the image select", () => {
  const choice = (image: string, group: NotebookImageChoice["group"], environment = false): NotebookImageChoice =>
    ({ image, group, environment, description: "" });
  // As the server orders them (GET /api/v1/notebook/project/{id}/images).
  const choices = imageChoices([
    choice("myapp/python-ml:3.11", "default", true),
    choice("registry.local/p7/six-env:v2", "project", true),
    choice("registry.local/p7/app:v1", "project"),
    choice("ghcr.io/acme/torch:2.4", "catalog"),
  ]);

  it("offers the platform's defaults, the project's environments and images, then the catalog's", () => {
    expect(imageGroups(choices, null)).toEqual([
      { label: "Platform defaults", options: [{ value: "myapp/python-ml:3.11", label: "myapp/python-ml:3.11" }] },
      { label: "This project", options: [
        { value: "registry.local/p7/six-env:v2", label: "registry.local/p7/six-env:v2 (environment)" },
        { value: "registry.local/p7/app:v1", label: "registry.local/p7/app:v1" },
      ] },
      { label: "Catalog", options: [{ value: "ghcr.io/acme/torch:2.4", label: "ghcr.io/acme/torch:2.4" }] },
    ]);
  });

  it("keeps showing a stored image that is no longer offered", () => {
    const groups = imageGroups(choices, "registry.local/p7/gone:v0");
    expect(groups.at(-1)).toEqual({ label: "No longer available",
      options: [{ value: "registry.local/p7/gone:v0", label: "registry.local/p7/gone:v0 (removed)" }] });
    expect(imageGroups(choices, "registry.local/p7/app:v1")).toHaveLength(3); // offered: not repeated
    expect(imageGroups([], null)).toEqual([]);
  });

  it("saves the chosen image with the task, and null for the template's", () => {
    const python = template(1, "python");
    const { draft, key } = addTask(EMPTY_DRAFT, python, { x: 0, y: 0 });
    const templates = new Map([[1, python]]);
    expect(buildGraphPayload(draft, templates).tasks[0].image).toBeNull();
    const chosen = updateTask(draft, key, (t) => ({ ...t, image: "registry.local/p7/six-env:v2" }));
    expect(buildGraphPayload(chosen, templates).tasks[0].image).toBe("registry.local/p7/six-env:v2");
  });
});
