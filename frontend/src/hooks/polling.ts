// When a list is read again: soon while one of its rows is on its way somewhere (a build, a starting
// notebook, a queued run), more slowly or never once everything has settled. Pure, for the list hook.

export interface PollPolicy<T> {
  /** A row in a transitional state: while one is listed, the list is read again every `busyMs`. */
  busy: (row: T) => boolean;
  busyMs: number;
  /** Between reads when no row is busy (rows that others may add or change); absent: polling stops. */
  idleMs?: number;
}

/** Milliseconds from the answer just shown to the next read, or null for none. A list that failed to
 * load before showing anything is read again at the idle pace, if there is one. */
export function nextReadIn<T>(rows: readonly T[] | undefined, policy: PollPolicy<T> | undefined): number | null {
  if (!policy) return null;
  if ((rows ?? []).some(policy.busy)) return policy.busyMs;
  return policy.idleMs ?? null;
}

/** The pages of `count` rows `size` at a time (at least one, so an empty list has a page 1 of 1). */
export function pageCount(count: number, size: number): number {
  return Math.max(1, Math.ceil(count / size));
}
