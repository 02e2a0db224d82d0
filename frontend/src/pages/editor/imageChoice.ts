// Which templates let a task choose its image, and the choices a project has. The rule is rendering's
// (myapp/rendering/image_choice.py); tests/pipelines/test_task_image.py keeps these two sets equal to it.
import type { Image, JobTemplate } from "../../types";

// The kinds whose containers run the user's code.
export const USER_CODE_KINDS = new Set(["job", "pytorchjob", "tfjob", "xgboostjob", "mpijob", "volcanojob"]);
// Templates of those kinds that are the platform's own steps: they keep their image.
export const PLATFORM_STEPS = new Set(["model-register", "deploy-service", "serve-model", "image-build", "notebook"]);

export function canChooseImage(template: Pick<JobTemplate, "name" | "kind"> | undefined): boolean {
  return template !== undefined && USER_CODE_KINDS.has(template.kind) && !PLATFORM_STEPS.has(template.name);
}

export interface ImageOption { value: string; label: string }
export interface ImageGroup { label: string; options: ImageOption[] }

export function imageReference(image: Pick<Image, "repository" | "tag">): string {
  return `${image.repository}:${image.tag}`;
}

/** The select's groups: the project's environments and images first (what it built for itself), then the
 * catalog's; other projects' images are left out (the API refuses them). A task's current image that is in
 * neither (removed since) stays listed, so the form shows what is stored. */
export function imageGroups(images: Image[], projectId: number, current: string | null): ImageGroup[] {
  const option = (image: Image): ImageOption => {
    const ref = imageReference(image);
    return { value: ref, label: image.environment ? `${ref} (environment)` : ref };
  };
  const byName = (a: ImageOption, b: ImageOption) => a.value.localeCompare(b.value);
  const own = images.filter((i) => i.project_id === projectId).map(option).sort(byName);
  const shared = images.filter((i) => i.project_id === null || i.project_id === undefined).map(option).sort(byName);
  const groups: ImageGroup[] = [];
  if (own.length) groups.push({ label: "This project's environments and images", options: own });
  if (shared.length) groups.push({ label: "Catalog images", options: shared });
  if (current && !own.concat(shared).some((o) => o.value === current)) {
    groups.push({ label: "No longer available", options: [{ value: current, label: `${current} (removed)` }] });
  }
  return groups;
}
