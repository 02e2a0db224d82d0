import { describe, expect, it } from "vitest";
import type { Edge, Task } from "../../types";
import {
  addTask, argText, autoLayout, connect, draftFromServer, EMPTY_DRAFT, findFreeSpot, moveTasks, removeElements, setArg,
  toLabel, uniqueName, updateTask, type Draft,
} from "./model";
import { STAMP, template } from "./testing";

const ddp = template(3, "pytorch-ddp");

function withTasks(n: number): Draft {
  let draft = EMPTY_DRAFT;
  for (let i = 0; i < n; i++) draft = addTask(draft, ddp, { x: i * 300, y: 0 }).draft;
  return draft;
}

function keys(draft: Draft) {
  return draft.tasks.map((t) => t.key);
}

describe("names", () => {
  it("auto-names tasks after the template, numbering repeats", () => {
    const draft = withTasks(3);
    expect(draft.tasks.map((t) => t.name)).toEqual(["pytorch-ddp", "pytorch-ddp-2", "pytorch-ddp-3"]);
  });

  it("makes a DNS label from any text, within 63 characters", () => {
    expect(toLabel("PyTorch DDP (v2)")).toBe("pytorch-ddp-v2");
    expect(toLabel("__")).toBe("task");
    const long = "a".repeat(70);
    expect(uniqueName(long, new Set())).toHaveLength(63);
    expect(uniqueName(long, new Set(["a".repeat(63)]))).toBe("a".repeat(61) + "-2");
  });

  it("fills a gap left by a deleted task", () => {
    expect(uniqueName("x", new Set(["x", "x-3"]))).toBe("x-2");
  });
});

describe("add/update/remove", () => {
  it("gives new tasks unique keys and template defaults", () => {
    const { draft, key } = addTask(withTasks(1), ddp, { x: 10.4, y: 20.6 });
    expect(new Set(keys(draft)).size).toBe(2);
    const task = draft.tasks.find((t) => t.key === key)!;
    expect(task.position).toEqual({ x: 10, y: 21 });
    expect(task.resources).toEqual({ cpu: "1", memory: "2Gi", gpu: "0" });
    expect(task.templateId).toBe(3);
  });

  it("shares untouched tasks between snapshots", () => {
    const before = withTasks(3);
    const after = setArg(before, before.tasks[1].key, "epochs", "5");
    expect(after.tasks[0]).toBe(before.tasks[0]);
    expect(after.tasks[2]).toBe(before.tasks[2]);
    expect(after.tasks[1].args).toEqual({ epochs: "5" });
    expect(before.tasks[1].args).toEqual({});
    expect(after.edges).toBe(before.edges);
  });

  it("returns the same draft when nothing changes", () => {
    const draft = withTasks(2);
    expect(setArg(draft, draft.tasks[0].key, "epochs", "")).toBe(draft);
    expect(updateTask(draft, "nope", (t) => ({ ...t, name: "x" }))).toBe(draft);
    expect(moveTasks(draft, new Map([[draft.tasks[0].key, { x: 0, y: 0 }]]))).toBe(draft);
  });

  it("removes a task with its edges, and single edges", () => {
    let draft = withTasks(3);
    const [a, b, c] = keys(draft);
    draft = connect(draft, a, b).draft!;
    draft = connect(draft, b, c).draft!;
    const noB = removeElements(draft, [b]);
    expect(keys(noB)).toEqual([a, c]);
    expect(noB.edges).toEqual([]);
    const noEdge = removeElements(draft, [], [`${a}->${b}`]);
    expect(noEdge.edges).toEqual([{ upstream: b, downstream: c }]);
    expect(removeElements(draft, ["zz"], ["q->r"])).toBe(draft);
  });
});

describe("connect", () => {
  it("refuses self-edges, duplicates and cycles, naming the tasks", () => {
    let draft = withTasks(3);
    const [a, b, c] = keys(draft);
    expect(connect(draft, a, a).error).toMatch(/itself/);
    draft = connect(draft, a, b).draft!;
    draft = connect(draft, b, c).draft!;
    expect(connect(draft, a, b).error).toMatch(/already depends/);
    expect(connect(draft, c, a).error).toBe(
      "That dependency would create a cycle: pytorch-ddp → pytorch-ddp-2 → pytorch-ddp-3 → pytorch-ddp.");
    expect(connect(draft, a, c).draft!.edges).toHaveLength(3);
  });

  it("refuses edges to unknown tasks", () => {
    expect(connect(withTasks(1), "n1", "ghost").error).toBeDefined();
  });
});

describe("layout and placement", () => {
  it("auto-layout puts upstream left of downstream", () => {
    let draft = withTasks(2);
    const [a, b] = keys(draft);
    draft = connect(draft, b, a).draft!;
    const laid = autoLayout(draft);
    expect(laid.tasks[1].position.x).toBeLessThan(laid.tasks[0].position.x);
  });

  it("finds a spot that overlaps no task", () => {
    const draft = addTask(EMPTY_DRAFT, ddp, { x: 0, y: 0 }).draft;
    const spot = findFreeSpot(draft.tasks, { x: 10, y: 10 });
    expect(spot).not.toEqual({ x: 10, y: 10 });
    expect(Math.abs(spot.y - 0) >= 64 || Math.abs(spot.x) >= 200).toBe(true);
    expect(findFreeSpot([], { x: 5, y: 6 })).toEqual({ x: 5, y: 6 });
  });
});

describe("from the server", () => {
  const task = (id: number, position: Task["position"]): Task => ({
    id, project_id: 1, pipeline_id: 1, name: `t${id}`, template_id: 3, args: { epochs: 5, packages: ["a", "b"], flag: true },
    resources: { cpu: "500m" }, resource_group_id: null, image: null, retries: 1, retry_delay: 30, timeout: null,
    trigger_rule: "all_done", position, created_at: STAMP, updated_at: STAMP,
  });
  const edge: Edge = { id: 1, project_id: 1, pipeline_id: 1, upstream_task_id: 1, downstream_task_id: 2 };

  it("keeps stored positions and turns values into form text", () => {
    const draft = draftFromServer([task(1, { x: 5, y: 6 }), task(2, { x: 300, y: 6 })], [edge]);
    expect(draft.tasks[0]).toMatchObject({
      key: "t1", id: 1, position: { x: 5, y: 6 }, retries: "1", retryDelay: "30", timeout: "",
      args: { epochs: "5", packages: "a\nb", flag: "true" }, resources: { cpu: "500m", memory: "", gpu: "" },
    });
    expect(draft.edges).toEqual([{ upstream: "t1", downstream: "t2" }]);
  });

  it("lays out tasks that have no position", () => {
    const draft = draftFromServer([task(1, {}), task(2, {})], [edge]);
    for (const t of draft.tasks) expect(Number.isFinite(t.position.x)).toBe(true);
    expect(draft.tasks[0].position.x).toBeLessThan(draft.tasks[1].position.x);
  });

  it("writes arrays with multi-line items as JSON", () => {
    expect(argText(["a\nb", "c"])).toBe('["a\\nb","c"]');
    expect(argText(null)).toBe("");
  });
});
