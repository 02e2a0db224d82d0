import { describe, expect, it } from "vitest";
import type { Image } from "../../types";
import { canChooseImage, imageGroups } from "./imageChoice";
import { addTask, EMPTY_DRAFT, updateTask } from "./model";
import { buildGraphPayload } from "./payload";
import { STAMP, template } from "./testing";

function image(id: number, repository: string, tag: string, projectId: number | null, environment: string | null = null): Image {
  return { id, repository, tag, project_id: projectId, environment, pull_secret: null, description: "",
    created_at: STAMP, updated_at: STAMP };
}

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
  const images = [
    image(1, "ghcr.io/acme/torch", "2.4", null),
    image(2, "registry.local/p7/six-env", "v2", 7, "ab12"),
    image(3, "registry.local/p7/app", "v1", 7),
    image(4, "registry.local/p9/secret-env", "v1", 9, "cd34"),
    image(5, "docker.io/library/python", "3.12", null),
  ];

  it("lists the project's environments and images, then the catalog's; never another project's", () => {
    expect(imageGroups(images, 7, null)).toEqual([
      { label: "This project's environments and images", options: [
        { value: "registry.local/p7/app:v1", label: "registry.local/p7/app:v1" },
        { value: "registry.local/p7/six-env:v2", label: "registry.local/p7/six-env:v2 (environment)" },
      ] },
      { label: "Catalog images", options: [
        { value: "docker.io/library/python:3.12", label: "docker.io/library/python:3.12" },
        { value: "ghcr.io/acme/torch:2.4", label: "ghcr.io/acme/torch:2.4" },
      ] },
    ]);
  });

  it("keeps showing a stored image that is no longer offered", () => {
    const groups = imageGroups(images, 7, "registry.local/p7/gone:v0");
    expect(groups.at(-1)).toEqual({ label: "No longer available",
      options: [{ value: "registry.local/p7/gone:v0", label: "registry.local/p7/gone:v0 (removed)" }] });
    expect(imageGroups([], 7, null)).toEqual([]);
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
