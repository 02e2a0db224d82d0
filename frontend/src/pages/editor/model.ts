// The editor's draft of a pipeline graph and the operations on it. Every operation returns a new
// draft sharing the untouched tasks and edges with the old one (cheap history, memoized nodes).
import { layout, NODE_HEIGHT, NODE_WIDTH } from "../../lib/layout";
import type { Edge, JobTemplate, Resources, Task, TriggerRule } from "../../types";

export interface Point {
  x: number;
  y: number;
}

/** A task as the form edits it: numbers and args stay text until saved, so half-typed values can be shown. */
export interface DraftTask {
  /** Stable identity inside the editor ("t12" for saved task 12, "n3" for new ones); names can change. */
  key: string;
  id?: number;
  name: string;
  templateId: number;
  /** Argument text by name; "" = not set (the server applies the default). Arrays: one item per line. */
  args: Record<string, string>;
  resources: { cpu: string; memory: string; gpu: string };
  resourceGroupId: number | null;
  /** The image or environment (`repository:tag`) the task runs in; null = its template's image. */
  image: string | null;
  retries: string;
  retryDelay: string;
  timeout: string;
  triggerRule: TriggerRule;
  position: Point;
}

export interface DraftEdge {
  upstream: string;
  downstream: string;
}

export interface Draft {
  tasks: DraftTask[];
  edges: DraftEdge[];
  /** Counter for new task keys. */
  seq: number;
}

export const EMPTY_DRAFT: Draft = { tasks: [], edges: [], seq: 1 };

export function edgeId(edge: DraftEdge): string {
  return `${edge.upstream}->${edge.downstream}`;
}

/** Text shown in the form for a stored argument value. */
export function argText(value: unknown): string {
  if (value === null || value === undefined) return "";
  if (Array.isArray(value)) {
    // One item per line reads best; JSON when an item itself spans lines or is not a scalar.
    const plain = value.every((v) => ["string", "number", "boolean"].includes(typeof v) && !String(v).includes("\n")
      && String(v) !== "");
    return plain ? value.map(String).join("\n") : JSON.stringify(value);
  }
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

function resourceText(resources: Resources | undefined): DraftTask["resources"] {
  return {
    cpu: resources?.cpu === undefined ? "" : String(resources.cpu),
    memory: resources?.memory === undefined ? "" : String(resources.memory),
    gpu: resources?.gpu === undefined ? "" : String(resources.gpu),
  };
}

/** The draft of a saved graph. Tasks without a stored position are laid out automatically. */
export function draftFromServer(tasks: Task[], edges: Edge[]): Draft {
  const keyOf = new Map(tasks.map((t) => [t.id, `t${t.id}`]));
  const draftTasks: DraftTask[] = tasks.map((t) => ({
    key: `t${t.id}`,
    id: t.id,
    name: t.name,
    templateId: t.template_id,
    args: Object.fromEntries(Object.entries(t.args ?? {}).map(([k, v]) => [k, argText(v)])),
    resources: resourceText(t.resources),
    resourceGroupId: t.resource_group_id,
    image: t.image ?? null,
    retries: String(t.retries),
    retryDelay: String(t.retry_delay),
    timeout: t.timeout === null ? "" : String(t.timeout),
    triggerRule: t.trigger_rule,
    position: { x: t.position?.x ?? NaN, y: t.position?.y ?? NaN },
  }));
  const draftEdges: DraftEdge[] = [];
  for (const e of edges) {
    const upstream = keyOf.get(e.upstream_task_id);
    const downstream = keyOf.get(e.downstream_task_id);
    if (upstream && downstream) draftEdges.push({ upstream, downstream });
  }
  let draft: Draft = { tasks: draftTasks, edges: draftEdges, seq: 1 };
  const unplaced = draftTasks.filter((t) => !Number.isFinite(t.position.x) || !Number.isFinite(t.position.y));
  if (unplaced.length) draft = autoLayout(draft);
  return draft;
}

const MAX_NAME = 63;

/** A DNS-1123 label from any text ("PyTorch DDP" → "pytorch-ddp"). */
export function toLabel(text: string): string {
  const label = text.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/-+/g, "-").replace(/^-+|-+$/g, "");
  return label.slice(0, MAX_NAME).replace(/-+$/, "") || "task";
}

/** `base`, else `base-2`, `base-3`, … : the first not in `taken`, always ≤ 63 characters. */
export function uniqueName(base: string, taken: Set<string>): string {
  const label = toLabel(base);
  if (!taken.has(label)) return label;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const name = label.slice(0, MAX_NAME - suffix.length).replace(/-+$/, "") + suffix;
    if (!taken.has(name)) return name;
  }
}

export function newTask(draft: Draft, template: JobTemplate, position: Point): DraftTask {
  const names = new Set(draft.tasks.map((t) => t.name));
  return {
    key: `n${draft.seq}`,
    name: uniqueName(template.name, names),
    templateId: template.id,
    args: {},
    resources: resourceText(template.default_resources),
    resourceGroupId: null,
    image: null,
    retries: "0",
    retryDelay: "30", // the server's default
    timeout: "",
    triggerRule: "all_success",
    position: { x: Math.round(position.x), y: Math.round(position.y) },
  };
}

export function addTask(draft: Draft, template: JobTemplate, position: Point): { draft: Draft; key: string } {
  const task = newTask(draft, template, position);
  return { draft: { ...draft, tasks: [...draft.tasks, task], seq: draft.seq + 1 }, key: task.key };
}

export function updateTask(draft: Draft, key: string, change: (task: DraftTask) => DraftTask): Draft {
  let changed = false;
  const tasks = draft.tasks.map((t) => {
    if (t.key !== key) return t;
    const next = change(t);
    changed ||= next !== t;
    return next;
  });
  return changed ? { ...draft, tasks } : draft;
}

/** An output reference's head naming `name`: `{{ tasks.<name>.outputs.` (docs/outputs.md). */
function referenceHead(name: string): RegExp {
  return new RegExp(`(\\{\\{\\s*tasks\\.)${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(\\.outputs\\.)`, "g");
}

/**
 * Rename a task, and the output references to it in every task's arguments with it, so the pipeline
 * still saves. References stay as written when another task bears the old name too (they may mean it).
 */
export function renameTask(draft: Draft, key: string, name: string): Draft {
  const renamed = draft.tasks.find((t) => t.key === key);
  if (!renamed || renamed.name === name) return draft;
  const ambiguous = draft.tasks.some((t) => t.key !== key && t.name === renamed.name);
  const head = referenceHead(renamed.name);
  const tasks = draft.tasks.map((t) => {
    const task = t.key === key ? { ...t, name } : t;
    if (ambiguous) return task;
    let args = task.args;
    for (const [arg, text] of Object.entries(task.args)) {
      const carried = text.replace(head, (_, open: string, rest: string) => `${open}${name}${rest}`);
      if (carried !== text) args = { ...args, [arg]: carried };
    }
    return args === task.args ? task : { ...task, args };
  });
  return { ...draft, tasks };
}

export function setArg(draft: Draft, key: string, name: string, text: string): Draft {
  return updateTask(draft, key, (t) => (t.args[name] ?? "") === text ? t : { ...t, args: { ...t.args, [name]: text } });
}

/** Move tasks; positions equal to the current ones change nothing (so no empty undo step). */
export function moveTasks(draft: Draft, positions: Map<string, Point>): Draft {
  let changed = false;
  const tasks = draft.tasks.map((t) => {
    const p = positions.get(t.key);
    if (!p) return t;
    const x = Math.round(p.x);
    const y = Math.round(p.y);
    if (x === t.position.x && y === t.position.y) return t;
    changed = true;
    return { ...t, position: { x, y } };
  });
  return changed ? { ...draft, tasks } : draft;
}

/** Remove tasks (with their edges) and edges (by edgeId). */
export function removeElements(draft: Draft, taskKeys: Iterable<string>, edgeIds: Iterable<string> = []): Draft {
  const goneTasks = new Set(taskKeys);
  const goneEdges = new Set(edgeIds);
  const tasks = goneTasks.size ? draft.tasks.filter((t) => !goneTasks.has(t.key)) : draft.tasks;
  const edges = draft.edges.filter((e) =>
    !goneTasks.has(e.upstream) && !goneTasks.has(e.downstream) && !goneEdges.has(edgeId(e)));
  if (tasks.length === draft.tasks.length && edges.length === draft.edges.length) return draft;
  return { ...draft, tasks, edges };
}

/** A path from `from` to `to` following edges downstream (task keys, both ends included), or null. */
export function findPath(edges: DraftEdge[], from: string, to: string): string[] | null {
  const downstream = new Map<string, string[]>();
  for (const e of edges) {
    const list = downstream.get(e.upstream);
    if (list) list.push(e.downstream);
    else downstream.set(e.upstream, [e.downstream]);
  }
  const cameFrom = new Map<string, string>();
  const queue = [from];
  const seen = new Set([from]);
  while (queue.length) {
    const node = queue.shift()!;
    if (node === to) {
      const path = [to];
      while (path[0] !== from) path.unshift(cameFrom.get(path[0])!);
      return path;
    }
    for (const next of downstream.get(node) ?? []) {
      if (seen.has(next)) continue;
      seen.add(next);
      cameFrom.set(next, node);
      queue.push(next);
    }
  }
  return null;
}

export type ConnectResult = { draft: Draft; error?: undefined } | { draft?: undefined; error: string };

/** Add the edge upstream → downstream, refusing self-edges, duplicates and cycles with a reason. */
export function connect(draft: Draft, upstream: string, downstream: string): ConnectResult {
  const name = (key: string) => draft.tasks.find((t) => t.key === key)?.name ?? key;
  if (!draft.tasks.some((t) => t.key === upstream) || !draft.tasks.some((t) => t.key === downstream)) {
    return { error: "Both ends of a dependency must be tasks of this pipeline." };
  }
  if (upstream === downstream) return { error: `A task cannot depend on itself (${name(upstream)}).` };
  if (draft.edges.some((e) => e.upstream === upstream && e.downstream === downstream)) {
    return { error: `${name(downstream)} already depends on ${name(upstream)}.` };
  }
  const back = findPath(draft.edges, downstream, upstream);
  if (back) {
    const cycle = [...back, downstream].map(name).join(" → ");
    return { error: `That dependency would create a cycle: ${cycle}.` };
  }
  return { draft: { ...draft, edges: [...draft.edges, { upstream, downstream }] } };
}

/** Lay every task out left to right (dagre). */
export function autoLayout(draft: Draft): Draft {
  const positions = layout(
    draft.tasks.map((t) => ({ id: t.key })),
    draft.edges.map((e) => ({ source: e.upstream, target: e.downstream })),
  );
  return moveTasks(draft, positions);
}

const GAP = 24;

function overlaps(p: Point, tasks: DraftTask[]): boolean {
  return tasks.some((t) => Math.abs(t.position.x - p.x) < NODE_WIDTH + GAP && Math.abs(t.position.y - p.y) < NODE_HEIGHT + GAP);
}

/** The first spot near `near` (scanning down, then right) where a new node overlaps none. */
export function findFreeSpot(tasks: DraftTask[], near: Point): Point {
  const stepY = NODE_HEIGHT + GAP;
  const stepX = NODE_WIDTH + GAP;
  for (let column = 0; column < 50; column++) {
    for (let row = 0; row < 8; row++) {
      const p = { x: Math.round(near.x + column * stepX), y: Math.round(near.y + row * stepY) };
      if (!overlaps(p, tasks)) return p;
    }
  }
  const right = Math.max(...tasks.map((t) => t.position.x));
  return { x: right + stepX, y: Math.round(near.y) };
}

/**
 * After a save: give each task the id the server stored it under (by key), and drop ids the
 * server no longer has, in every snapshot. Tasks shared between snapshots stay shared (`cache`).
 */
export function reconcileIds(draft: Draft, ids: Map<string, number>, cache: Map<DraftTask, DraftTask>): Draft {
  let changed = false;
  const tasks = draft.tasks.map((t) => {
    let next = cache.get(t);
    if (!next) {
      const id = ids.get(t.key);
      next = t.id === id ? t : { ...t, id };
      if (next.id === undefined) delete next.id;
      cache.set(t, next);
    }
    changed ||= next !== t;
    return next;
  });
  return changed ? { ...draft, tasks } : draft;
}
