// Undo/redo over immutable snapshots. Snapshots share structure (an edit copies only the changed
// task and the arrays holding it), so keeping a few hundred of them is cheap.

export interface History<T> {
  past: T[];
  present: T;
  future: T[];
  /** Key of the last commit, so a run of keystrokes in one field becomes one undo step. */
  coalesce: string | null;
}

export const HISTORY_LIMIT = 200;

export function createHistory<T>(present: T): History<T> {
  return { past: [], present, future: [], coalesce: null };
}

/**
 * Make `next` the present. With a `coalesce` key equal to the previous commit's, the previous
 * step is extended instead of adding a new one (typing "128" is one step, not three).
 */
export function commit<T>(history: History<T>, next: T, coalesce: string | null = null): History<T> {
  if (next === history.present) return history;
  if (coalesce !== null && coalesce === history.coalesce) {
    return { ...history, present: next, future: [] };
  }
  const past = [...history.past, history.present];
  if (past.length > HISTORY_LIMIT) past.splice(0, past.length - HISTORY_LIMIT);
  return { past, present: next, future: [], coalesce };
}

export function undo<T>(history: History<T>): History<T> {
  if (history.past.length === 0) return history;
  const present = history.past[history.past.length - 1];
  return { past: history.past.slice(0, -1), present, future: [history.present, ...history.future], coalesce: null };
}

export function redo<T>(history: History<T>): History<T> {
  if (history.future.length === 0) return history;
  const [present, ...future] = history.future;
  return { past: [...history.past, history.present], present, future, coalesce: null };
}

/** End coalescing: the next commit starts a new undo step even with the same key. */
export function seal<T>(history: History<T>): History<T> {
  return history.coalesce === null ? history : { ...history, coalesce: null };
}
