// Admin limits: reading what an admin types into a limit field, and saying limits in plain words.

export interface LimitInput {
  /** null: the field is empty (no limit, or back to the default). */
  value: number | null;
  problem: string | null;
}

/** A whole number between min and max, or empty. */
export function parseLimit(text: string, min: number, max: number): LimitInput {
  const trimmed = text.trim();
  if (trimmed === "") return { value: null, problem: null };
  if (!/^\d+$/.test(trimmed)) return { value: null, problem: "a whole number" };
  const value = Number(trimmed);
  if (value < min || value > max) return { value: null, problem: `between ${min} and ${max}` };
  return { value, problem: null };
}

/** Seconds as the largest units that say them exactly: 90 -> "1 min 30 s", 7200 -> "2 h". */
export function describeSeconds(seconds: number): string {
  const parts: string[] = [];
  let rest = seconds;
  for (const [size, unit] of [[86_400, "d"], [3600, "h"], [60, "min"], [1, "s"]] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)} ${unit}`);
      rest %= size;
    }
  }
  return parts.length ? parts.join(" ") : "0 s";
}

/** What a project's limit means right now, e.g. "2 of 3 running · 1 waiting". */
export function projectLoad(p: { max_running_runs: number | null; running: number; queued: number }): string {
  const running = p.max_running_runs === null ? `${p.running} running` : `${p.running} of ${p.max_running_runs} running`;
  return p.queued ? `${running} · ${p.queued} queued` : running;
}

/** Whether a project is at its limit (its queued runs wait for a slot). */
export function atLimit(p: { max_running_runs: number | null; running: number }): boolean {
  return p.max_running_runs !== null && p.running >= p.max_running_runs;
}
