// The one save request (PUT /api/v1/pipeline/{id}/graph) built from the draft, and the server's
// error fields ("tasks[3].args.epochs") mapped back to the task and form field they name.
import type { FieldReason, GraphPayload, GraphTaskPayload, JobTemplate, Resources } from "../../types";
import type { Draft } from "./model";
import { coerceArg } from "./validation";

/** Whole numbers are sent as numbers; anything else as its text so the server names the problem. */
function intOrText(text: string): number {
  const trimmed = text.trim();
  return (/^[+-]?[0-9]+$/.test(trimmed) ? Number(trimmed) : trimmed) as number;
}

export function buildGraphPayload(draft: Draft, templates: Map<number, JobTemplate>): GraphPayload {
  const tasks = draft.tasks.map((t): GraphTaskPayload => {
    const properties = templates.get(t.templateId)?.args_schema?.properties ?? {};
    const args: Record<string, unknown> = {};
    for (const [name, text] of Object.entries(t.args)) {
      if (text === "") continue; // not set: the server applies the template default
      const prop = properties[name];
      const coerced = prop ? coerceArg(prop, text) : { value: text };
      // An invalid value goes as typed: the server's error then names the field.
      args[name] = coerced.error === undefined ? coerced.value : text;
    }
    const resources: Resources = {};
    if (t.resources.cpu.trim()) resources.cpu = t.resources.cpu.trim();
    if (t.resources.memory.trim()) resources.memory = t.resources.memory.trim();
    if (t.resources.gpu.trim()) resources.gpu = intOrText(t.resources.gpu);
    return {
      key: t.key,
      ...(t.id === undefined ? {} : { id: t.id }),
      name: t.name,
      template_id: t.templateId,
      args,
      resources,
      resource_group_id: t.resourceGroupId,
      image: t.image,
      retries: intOrText(t.retries),
      retry_delay: intOrText(t.retryDelay),
      timeout: t.timeout.trim() === "" ? null : intOrText(t.timeout),
      trigger_rule: t.triggerRule,
      position: { x: t.position.x, y: t.position.y },
    };
  });
  return { tasks, edges: draft.edges.map((e) => ({ upstream: e.upstream, downstream: e.downstream })) };
}

export interface MappedErrors {
  /** Task key → form field ("args.epochs", "resources.cpu", "name") → reason. */
  byTask: Record<string, Record<string, string>>;
  /** Errors that name no task field (edges, the request itself), as sentences. */
  general: string[];
}

const TASK_FIELD = /^tasks\[(\d+)\](?:\.(.+))?$/;
const EDGE_FIELD = /^edges\[(\d+)\]/;

/** The form field a server sub-path names: "args.packages[1]" → "args.packages"; whole-task errors → "task". */
function formField(path: string): string {
  const field = path.replace(/\[\d+\].*$/, "");
  return field === "resource_group" ? "resource_group_id" : field;
}

/** Map the server's field errors onto the draft the request was built from (same task order). */
export function mapServerErrors(errors: FieldReason[], draft: Draft): MappedErrors {
  const byTask: MappedErrors["byTask"] = {};
  const general: string[] = [];
  const name = (key: string) => draft.tasks.find((t) => t.key === key)?.name ?? key;
  for (const { field, reason } of errors) {
    const task = TASK_FIELD.exec(field);
    const target = task ? draft.tasks[Number(task[1])] : undefined;
    if (task && target) {
      const sub = formField(task[2] ?? "task");
      (byTask[target.key] ??= {})[sub] = reason;
      continue;
    }
    const edge = EDGE_FIELD.exec(field);
    const link = edge ? draft.edges[Number(edge[1])] : undefined;
    if (link) general.push(`Dependency ${name(link.upstream)} → ${name(link.downstream)}: ${reason}`);
    else general.push(field ? `${field}: ${reason}` : reason);
  }
  return { byTask, general };
}
