import { describe, expect, it } from "vitest";
import { editorReducer, initialState, isDirty, type EditorState } from "./editorState";
import { addTask, EMPTY_DRAFT, removeElements, setArg, type Draft } from "./model";
import { template } from "./testing";

const tpl = template(3, "train");
const add = (draft: Draft) => addTask(draft, tpl, { x: 0, y: 0 }).draft;

function changed(state: EditorState, change: (d: Draft) => Draft, coalesce?: string) {
  return editorReducer(state, { type: "change", change, coalesce });
}

describe("editor state", () => {
  it("is dirty after a change and clean again after undoing it", () => {
    let state = initialState(EMPTY_DRAFT);
    expect(isDirty(state)).toBe(false);
    state = changed(state, add);
    expect(isDirty(state)).toBe(true);
    state = editorReducer(state, { type: "undo" });
    expect(isDirty(state)).toBe(false);
    state = editorReducer(state, { type: "redo" });
    expect(isDirty(state)).toBe(true);
  });

  it("clears the server error of the field being edited only", () => {
    let state = changed(initialState(EMPTY_DRAFT), add);
    state = editorReducer(state, { type: "serverErrors", errors: { n1: { "args.epochs": "bad", name: "taken" } } });
    state = editorReducer(state, {
      type: "change", change: (d) => setArg(d, "n1", "epochs", "3"), field: { key: "n1", name: "args.epochs" },
    });
    expect(state.serverErrors).toEqual({ n1: { name: "taken" } });
  });

  it("gives saved tasks their ids in every snapshot, keeping them shared", () => {
    let state = initialState(EMPTY_DRAFT);
    state = changed(state, add); // n1
    state = changed(state, add); // n2
    const request = state.history.present;
    state = changed(state, (d) => setArg(d, "n2", "epochs", "5"));
    state = editorReducer(state, { type: "saved", request, ids: new Map([["n1", 10], ["n2", 11]]) });
    expect(isDirty(state)).toBe(true); // the edit after the request is not saved yet
    expect(state.saved.tasks.map((t) => t.id)).toEqual([10, 11]);
    expect(state.history.present.tasks.map((t) => t.id)).toEqual([10, 11]);
    expect(state.history.present.tasks[0]).toBe(state.saved.tasks[0]);
    expect(state.history.past[2].tasks.map((t) => t.id)).toEqual([10, 11]);
    state = editorReducer(state, { type: "undo" });
    expect(isDirty(state)).toBe(false);
  });

  it("drops ids the server deleted, so undoing a saved delete recreates the task", () => {
    let state = changed(initialState(EMPTY_DRAFT), add);
    state = editorReducer(state, { type: "saved", request: state.history.present, ids: new Map([["n1", 4]]) });
    state = changed(state, (d) => removeElements(d, ["n1"]));
    state = editorReducer(state, { type: "saved", request: state.history.present, ids: new Map() });
    state = editorReducer(state, { type: "undo" });
    expect(state.history.present.tasks).toHaveLength(1);
    expect(state.history.present.tasks[0].id).toBeUndefined();
    expect("id" in state.history.present.tasks[0]).toBe(false);
  });
});

describe("renaming a task", () => {
  // prepare (n1), prep (n2), train (n3) reading both by reference.
  function pipeline(): EditorState {
    let state = initialState(EMPTY_DRAFT);
    for (let i = 0; i < 3; i++) state = changed(state, add);
    state = changed(state, (d) => ({ ...d, tasks: d.tasks.map((t, i) => ({ ...t, name: ["prepare", "prep", "train"][i] })) }));
    return changed(state, (d) => setArg(d, "n3", "script",
      "open('{{ tasks.prepare.outputs.data.csv }}'); open('{{tasks.prep.outputs.x}}'); # tasks.prepare.outputs"));
  }
  const typed = (state: EditorState, ...names: string[]) =>
    names.reduce((s, name) => editorReducer(s, { type: "rename", key: "n1", name }), state);

  it("carries the new name into the other tasks' output references", () => {
    const before = pipeline();
    const state = typed(before, "prepare-data");
    expect(state.history.present.tasks.map((t) => t.name)).toEqual(["prepare-data", "prep", "train"]);
    expect(state.history.present.tasks[2].args.script).toBe(
      "open('{{ tasks.prepare-data.outputs.data.csv }}'); open('{{tasks.prep.outputs.x}}'); # tasks.prepare.outputs");
    expect(state.history.present.tasks[1]).toBe(before.history.present.tasks[1]); // untouched tasks stay shared
  });

  it("never takes another task's references when typed through its name, and undoes in one step", () => {
    const before = pipeline();
    let state = typed(before, "prepar", "prepa", "prep", "prep-", "prep-d");
    expect(state.history.present.tasks[2].args.script).toBe(
      "open('{{ tasks.prep-d.outputs.data.csv }}'); open('{{tasks.prep.outputs.x}}'); # tasks.prepare.outputs");
    state = editorReducer(state, { type: "undo" });
    expect(state.history.present).toBe(before.history.present);
  });

  it("leaves references alone while two tasks share the old name, and a new run starts from the last name", () => {
    let state = typed(pipeline(), "prep");
    state = editorReducer(state, { type: "seal" });
    state = typed(state, "prep-2");
    // Which of the two "prep" the references meant is not known: they stay.
    expect(state.history.present.tasks[2].args.script).toContain("{{ tasks.prep.outputs.data.csv }}");
    expect(state.history.present.tasks[2].args.script).toContain("{{tasks.prep.outputs.x}}");
  });
});
