// The editor's state: the draft with its undo history, what was last saved (dirty = differs from
// it), and the server's errors from the last save by task key and field.
import { commit, createHistory, redo, seal, undo, type History } from "./history";
import { reconcileIds, renameTask, type Draft, type DraftTask } from "./model";

export type ServerErrors = Record<string, Record<string, string>>;

export interface EditorState {
  history: History<Draft>;
  saved: Draft;
  serverErrors: ServerErrors;
}

export type EditorAction =
  /** Apply `change` to the draft; `coalesce` merges a run of edits to one field into one undo step. */
  | { type: "change"; change: (draft: Draft) => Draft; coalesce?: string; field?: { key: string; name: string } }
  /** Rename a task, carrying the rename into the output references to it (one undo step per run of keys). */
  | { type: "rename"; key: string; name: string }
  | { type: "undo" }
  | { type: "redo" }
  | { type: "seal" }
  /** The server stored `request`; `ids` maps each task key to its id. */
  | { type: "saved"; request: Draft; ids: Map<string, number> }
  | { type: "serverErrors"; errors: ServerErrors };

export function initialState(draft: Draft): EditorState {
  return { history: createHistory(draft), saved: draft, serverErrors: {} };
}

export function isDirty(state: EditorState): boolean {
  return state.history.present !== state.saved;
}

function withoutError(errors: ServerErrors, key: string, name: string): ServerErrors {
  if (!errors[key]?.[name]) return errors;
  const rest = { ...errors[key] };
  delete rest[name];
  return { ...errors, [key]: rest };
}

export function editorReducer(state: EditorState, action: EditorAction): EditorState {
  switch (action.type) {
    case "change": {
      const history = commit(state.history, action.change(state.history.present), action.coalesce ?? null);
      const serverErrors = action.field
        ? withoutError(state.serverErrors, action.field.key, action.field.name) : state.serverErrors;
      return history === state.history && serverErrors === state.serverErrors
        ? state : { ...state, history, serverErrors };
    }
    case "rename": {
      // A run of keystrokes renames from the name the run started with: a name typed through another
      // task's name on its way ("prepare" → "prep" → "prep-data") never takes that task's references.
      const coalesce = `${action.key}:name`;
      const { past, present } = state.history;
      const base = state.history.coalesce === coalesce && past.length ? past[past.length - 1] : present;
      return editorReducer(state, {
        type: "change", change: () => renameTask(base, action.key, action.name), coalesce,
        field: { key: action.key, name: "name" },
      });
    }
    case "undo":
      return { ...state, history: undo(state.history) };
    case "redo":
      return { ...state, history: redo(state.history) };
    case "seal":
      return { ...state, history: seal(state.history) };
    case "saved": {
      // Caches keep shared tasks and identical snapshots shared (dirty = present !== saved).
      const tasks = new Map<DraftTask, DraftTask>();
      const drafts = new Map<Draft, Draft>();
      const fix = (draft: Draft) => {
        if (!drafts.has(draft)) drafts.set(draft, reconcileIds(draft, action.ids, tasks));
        return drafts.get(draft)!;
      };
      const { past, present, future } = state.history;
      return {
        history: { ...state.history, past: past.map(fix), present: fix(present), future: future.map(fix) },
        saved: fix(action.request),
        serverErrors: {},
      };
    }
    case "serverErrors":
      return { ...state, serverErrors: action.errors };
  }
}
