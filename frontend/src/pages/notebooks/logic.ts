// The Notebooks page's rules, kept pure for tests: what each state means and allows, idle time, the
// create form's checks (the server's rules, so errors show before a round trip) and its request body.
import type { PollPolicy } from "../../hooks/polling";
import type { Notebook, NotebookBody, NotebookImageChoice, NotebookState, ProjectRole } from "../../types";

/** States on their way somewhere: the list is polled faster while one is shown. */
export const MOVING: readonly NotebookState[] = ["pending", "pulling", "waiting", "stopping"];
const SERVING: readonly NotebookState[] = ["running", "idle"];
const STOPPABLE: readonly NotebookState[] = ["pending", "pulling", "waiting", "running", "idle"];
const STARTABLE: readonly NotebookState[] = ["stopped", "failed"];
const WRITERS: readonly ProjectRole[] = ["developer", "owner"];

/** How the list is polled: every 2 s while something is moving, else every 10 s (idle time, culling). */
export const LIST_POLL: PollPolicy<Notebook> = { busy: (nb) => MOVING.includes(nb.state), busyMs: 2000, idleMs: 10000 };

/** Words for a state, as a badge says them. */
export function stateLabel(state: NotebookState): string {
  switch (state) {
    case "pulling": return "preparing image";
    case "waiting": return "waiting for resources";
    default: return state;
  }
}

/** Badge colour class: the run states' palette. */
export function stateClass(state: NotebookState): string {
  if (state === "idle") return "cancelled";
  if (state === "stopping" || state === "pulling") return "pending";
  if (state === "stopped") return "skipped";
  return state;
}

/** "3m", "2h 5m", "1d 4h": a short duration. */
export function shortDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** How long a serving notebook has had no kernel or terminal activity; null when it is not serving. */
export function idleTime(nb: Notebook, now: number): string | null {
  if (!SERVING.includes(nb.state)) return null;
  const since = nb.last_activity_at ?? nb.started_at;
  if (!since) return null;
  return shortDuration(now - new Date(since).getTime());
}

/** Where the browser opens JupyterLab: the server's link, on the notebook's own origin (the platform's
 * hand-off lets the browser in there); never a path on the platform's origin. */
export function openUrl(nb: Notebook): string | null {
  if (!SERVING.includes(nb.state)) return null;
  return nb.url ?? null;
}

export interface Actions {
  /** The row's one start-or-stop button: Stop while it runs or is on its way, else Start. */
  toggle: "start" | "stop";
  start: boolean;
  stop: boolean;
  remove: boolean;
  /** Why writes are disabled, for the buttons' titles; null when the role allows them. */
  locked: string | null;
}

/** Which buttons a row enables for the caller's role in the project. */
export function actions(nb: Notebook, role: ProjectRole): Actions {
  const writer = WRITERS.includes(role);
  const deleting = nb.desired === "deleted";
  return {
    toggle: STARTABLE.includes(nb.state) ? "start" : "stop",
    start: writer && !deleting && STARTABLE.includes(nb.state),
    stop: writer && !deleting && STOPPABLE.includes(nb.state),
    remove: writer && !deleting,
    locked: writer ? null : `a ${role} cannot start, stop or delete notebooks (developers and owners can)`,
  };
}

// ---- the create form ----------------------------------------------------------------------------------

export interface NotebookForm {
  name: string;
  image: string;
  cpu: string;
  memory: string;
  gpu: string;
  resourceGroupId: string; // "" = the cluster default
  volume: string;
}

export const EMPTY_FORM: NotebookForm = { name: "", image: "", cpu: "1", memory: "2Gi", gpu: "0", resourceGroupId: "", volume: "" };

const NAME = /^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const CPU = /^([0-9]+(\.[0-9]+)?|[0-9]+m)$/;
const MEMORY = /^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|K|M|G|T)?$/;

export type FormProblems = Partial<Record<"name" | "image" | "resources.cpu" | "resources.memory" | "resources.gpu" | "volume", string>>;

/** The form's problems by the field name the server would blame. */
export function formProblems(form: NotebookForm): FormProblems {
  const out: FormProblems = {};
  const name = form.name.trim();
  if (!name) out.name = "is required";
  else if (!NAME.test(name)) out.name = "must be a DNS label of at most 40 characters starting with a letter";
  if (!form.image) out.image = "choose an image or environment";
  if (!CPU.test(form.cpu.trim())) out["resources.cpu"] = "a number of CPUs such as 1, 0.5 or 500m";
  if (!MEMORY.test(form.memory.trim())) out["resources.memory"] = "an amount such as 2Gi or 512Mi";
  if (!/^[0-9]+$/.test(form.gpu.trim())) out["resources.gpu"] = "a whole number of GPUs";
  if (form.volume.trim() && !DNS_LABEL.test(form.volume.trim())) out.volume = "the name of an existing volume claim";
  return out;
}

/** The POST /api/v1/notebook/ body. */
export function createBody(form: NotebookForm, projectId: number): NotebookBody {
  const body: NotebookBody = {
    project_id: projectId,
    name: form.name.trim(),
    image: form.image,
    resources: { cpu: form.cpu.trim(), memory: form.memory.trim(), gpu: Number(form.gpu.trim()) },
  };
  if (form.resourceGroupId) body.resource_group_id = Number(form.resourceGroupId);
  if (form.volume.trim()) body.volume = form.volume.trim();
  return body;
}

export interface ImageChoice {
  value: string; // repository:tag, what the API takes
  label: string;
  group: NotebookImageChoice["group"];
}

/** The groups of the image list, in the order the server gives them, with the words the dialog shows. */
export const CHOICE_GROUPS: readonly { group: ImageChoice["group"]; label: string }[] = [
  { group: "default", label: "Platform defaults" },
  { group: "project", label: "This project" },
  { group: "catalog", label: "Catalog" },
];

/** The server's choices (GET /api/v1/notebook/project/{id}/images) as options: built environments say so. */
export function imageChoices(items: readonly NotebookImageChoice[]): ImageChoice[] {
  return items.map((item) => ({
    value: item.image,
    label: item.environment && item.group !== "default" ? `${item.image} (environment)` : item.image,
    group: item.group,
  }));
}

/** The image a new form starts with: the first default, so that a new user can create a notebook at once. */
export function firstChoice(choices: readonly ImageChoice[]): string {
  return choices.find((choice) => choice.group === "default")?.value ?? "";
}
