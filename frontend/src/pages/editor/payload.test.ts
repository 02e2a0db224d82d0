import { describe, expect, it } from "vitest";
import { addTask, connect, draftFromServer, EMPTY_DRAFT, setArg, updateTask } from "./model";
import { buildGraphPayload, mapServerErrors } from "./payload";
import { STAMP, template } from "./testing";

const tpl = template(3, "pytorch-ddp", {
  args_schema: {
    properties: {
      epochs: { type: "integer", minimum: 1, maximum: 100 },
      lr: { type: "number", minimum: 0, maximum: 1 },
      output: { type: "string" },
      packages: { type: "array" },
    },
  },
});
const templates = new Map([[3, tpl]]);

function twoTasks() {
  let draft = addTask(EMPTY_DRAFT, tpl, { x: 0, y: 0 }).draft;
  draft = addTask(draft, tpl, { x: 300, y: 0 }).draft;
  return connect(draft, "n1", "n2").draft!;
}

describe("buildGraphPayload", () => {
  it("sends typed args, skips empty ones, keys edges by task key", () => {
    let draft = twoTasks();
    draft = setArg(draft, "n1", "epochs", "12");
    draft = setArg(draft, "n1", "lr", "0.5");
    draft = setArg(draft, "n1", "output", "");
    draft = setArg(draft, "n1", "packages", "numpy\nscipy");
    const payload = buildGraphPayload(draft, templates);
    expect(payload.tasks[0]).toEqual({
      key: "n1", name: "pytorch-ddp", template_id: 3, args: { epochs: 12, lr: 0.5, packages: ["numpy", "scipy"] },
      resources: { cpu: "1", memory: "2Gi", gpu: 0 }, resource_group_id: null, image: null, retries: 0,
      retry_delay: 30, timeout: null, trigger_rule: "all_success", position: { x: 0, y: 0 },
    });
    expect(payload.edges).toEqual([{ upstream: "n1", downstream: "n2" }]);
  });

  it("keeps ids of saved tasks and sends invalid values as typed", () => {
    const saved = draftFromServer([{
      id: 7, project_id: 1, pipeline_id: 1, name: "a", template_id: 3, args: {}, resources: {}, resource_group_id: 2,
      image: "registry.local/p/env:v1", retries: 0, retry_delay: 0, timeout: 600, trigger_rule: "one_failed", position: { x: 1, y: 2 },
      created_at: STAMP, updated_at: STAMP,
    }], []);
    const draft = updateTask(setArg(saved, "t7", "epochs", "many"), "t7", (t) => ({ ...t, retries: "x" }));
    const [task] = buildGraphPayload(draft, templates).tasks;
    expect(task).toMatchObject({ key: "t7", id: 7, args: { epochs: "many" }, resources: {}, resource_group_id: 2,
      image: "registry.local/p/env:v1", timeout: 600, retries: "x", trigger_rule: "one_failed" });
  });
});

describe("mapServerErrors", () => {
  it("maps task fields by request order and edges to sentences", () => {
    const draft = twoTasks();
    const mapped = mapServerErrors([
      { field: "tasks[1].args.epochs", reason: "must be <= 100" },
      { field: "tasks[0].resources.cpu", reason: "exceeds" },
      { field: "tasks[0].args.packages[1]", reason: "bad item" },
      { field: "tasks[1].name", reason: "duplicate" },
      { field: "edges[0]", reason: "would create a cycle" },
      { field: "tasks[9].name", reason: "gone" },
      { field: "", reason: "conflict" },
    ], draft);
    expect(mapped.byTask).toEqual({
      n2: { "args.epochs": "must be <= 100", name: "duplicate" },
      n1: { "resources.cpu": "exceeds", "args.packages": "bad item" },
    });
    expect(mapped.general).toEqual([
      "Dependency pytorch-ddp → pytorch-ddp-2: would create a cycle", "tasks[9].name: gone", "conflict",
    ]);
  });
});
