// Which templates let a task choose its image, and the choices offered. The rule is rendering's
// (myapp/rendering/image_choice.py); tests/pipelines/test_task_image.py keeps these two sets equal to it.
// The choices are a notebook's (GET /api/v1/notebook/project/{id}/images): the same images, in the same groups.
import type { JobTemplate } from "../../types";
import { CHOICE_GROUPS, type ImageChoice } from "../notebooks/logic";

// The kinds whose containers run the user's code.
export const USER_CODE_KINDS = new Set(["job", "pytorchjob", "tfjob", "xgboostjob", "mpijob", "volcanojob"]);
// Templates of those kinds that are the platform's own steps: they keep their image.
export const PLATFORM_STEPS = new Set(["model-register", "deploy-service", "serve-model", "image-build", "notebook"]);

export function canChooseImage(template: Pick<JobTemplate, "name" | "kind"> | undefined): boolean {
  return template !== undefined && USER_CODE_KINDS.has(template.kind) && !PLATFORM_STEPS.has(template.name);
}

export interface ImageOption { value: string; label: string }
export interface ImageGroup { label: string; options: ImageOption[] }

/** The select's groups in the server's order (platform defaults, the project's, the catalog's), empty ones
 * left out. A task's stored image that is no longer offered (removed since) stays listed, so the form shows
 * what is stored. */
export function imageGroups(choices: readonly ImageChoice[], current: string | null): ImageGroup[] {
  const groups = CHOICE_GROUPS.map(({ group, label }) => ({
    label, options: choices.filter((c) => c.group === group).map(({ value, label: text }) => ({ value, label: text })),
  })).filter((g) => g.options.length > 0);
  if (current && !choices.some((c) => c.value === current)) {
    groups.push({ label: "No longer available", options: [{ value: current, label: `${current} (removed)` }] });
  }
  return groups;
}
