// The Images page's pure parts: the form's text fields into a request body, log lines merged as they
// stream in, and how often the history is polled.
import type { PollPolicy } from "../../hooks/polling";
import type { BuildLogLine, BuildSource, ImageBuild, ImageBuildBody } from "../../types";

export interface BuildForm {
  repository: string;
  tag: string;
  source: BuildSource;
  baseImage: string;
  /** A requirements.txt: one requirement a line, comments allowed (the server checks each line). */
  requirements: string;
  aptPackages: string;
  dockerfile: string;
  notebookId: string;
  resourceGroupId: string;
}

export const EMPTY_FORM: BuildForm = {
  repository: "", tag: "", source: "packages", baseImage: "", requirements: "", aptPackages: "",
  dockerfile: "", notebookId: "", resourceGroupId: "",
};

/** Words of a whitespace- or comma-separated list (apt packages). */
export function words(text: string): string[] {
  return text.split(/[\s,]+/).map((w) => w.trim()).filter(Boolean);
}

/** The POST body for the form: only the fields of the chosen source, empty ones left out. */
export function buildBody(projectId: number, form: BuildForm): ImageBuildBody {
  const body: ImageBuildBody = {
    project_id: projectId, repository: form.repository.trim(), tag: form.tag.trim(), source: form.source,
  };
  if (form.resourceGroupId) body.resource_group_id = Number(form.resourceGroupId);
  if (form.source === "packages") {
    if (form.baseImage.trim()) body.base_image = form.baseImage.trim();
    if (form.requirements.trim()) body.requirements = form.requirements;
    const apt = words(form.aptPackages);
    if (apt.length) body.apt_packages = apt;
  } else if (form.source === "dockerfile") {
    body.dockerfile = form.dockerfile;
  } else if (form.notebookId) {
    body.notebook_id = Number(form.notebookId);
  }
  return body;
}

/** Lines received so far plus new ones, in order, each line once (a reconnect may resend). */
export function mergeLines(have: BuildLogLine[], incoming: BuildLogLine[]): BuildLogLine[] {
  const last = have.length ? have[have.length - 1].seq : 0;
  const fresh = incoming.filter((line) => line.seq > last);
  return fresh.length ? [...have, ...fresh] : have;
}

export function isFinished(build: Pick<ImageBuild, "state">): boolean {
  return build.state === "succeeded" || build.state === "failed";
}

/** Poll the history every 2 s while a build is on its way, every 15 s otherwise (builds others ask for:
 * a notebook's snapshot, the command line). */
export const HISTORY_POLL: PollPolicy<Pick<ImageBuild, "state">> = { busy: (b) => !isFinished(b), busyMs: 2000, idleMs: 15000 };

export function reference(build: Pick<ImageBuild, "repository" | "tag">): string {
  return `${build.repository}:${build.tag}`;
}

export function sourceLabel(build: Pick<ImageBuild, "source" | "packages">): string {
  if (build.source === "dockerfile") return "Dockerfile";
  if (build.source === "notebook") return `notebook snapshot${build.packages.length ? ` (${build.packages.length})` : ""}`;
  return `${build.packages.length} package${build.packages.length === 1 ? "" : "s"}`;
}
