// The log view's memory: lines in arrival order, each (replica, seq) once, at most `cap` of them.
import type { LogLine } from "../../types";

export const MAX_LINES = 10_000;

const key = (line: LogLine) => `${line.replica}\u0000${line.seq}`;

/** `buffer` followed by the lines of `incoming` it does not hold yet, trimmed to the newest `cap`. */
export function mergeLines(buffer: LogLine[], incoming: LogLine[], cap = MAX_LINES): LogLine[] {
  const seen = new Set(buffer.map(key));
  const fresh: LogLine[] = [];
  for (const line of incoming) {
    const k = key(line);
    if (seen.has(k)) continue;
    seen.add(k);
    fresh.push(line);
  }
  if (fresh.length === 0 && buffer.length <= cap) return buffer;
  const merged = buffer.concat(fresh);
  return merged.length > cap ? merged.slice(merged.length - cap) : merged;
}

/** Replica names in the order first seen, new ones from `lines` appended. */
export function addReplicas(known: string[], lines: { replica: string }[]): string[] {
  const added = [...new Set(lines.map((l) => l.replica))].filter((r) => !known.includes(r));
  return added.length ? [...known, ...added] : known;
}

const PALETTE = ["#2459d6", "#b5478a", "#1a7f37", "#c2410c", "#7c3aed", "#0e7490", "#9a6700", "#be123c"];

/** A stable colour per replica name, the same in the log view and the metric charts. */
export function replicaColor(replica: string): string {
  let hash = 0;
  for (const ch of replica) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return PALETTE[hash % PALETTE.length];
}
