// Times from the API: ISO strings, some without an offset (the server stores UTC), and
// durations shown as compact text ("4m 05s").

/** Milliseconds since the epoch; an ISO string without an offset is UTC. */
export function parseTime(iso: string): number {
  const hasOffset = /(Z|[+-]\d\d:?\d\d)$/i.test(iso);
  return new Date(hasOffset ? iso : `${iso}Z`).getTime();
}

export function formatTime(iso: string | null | undefined): string {
  return iso ? new Date(parseTime(iso)).toLocaleString() : "—";
}

/** "850ms", "42s", "4m 05s", "2h 03m", "3d 4h"; negative spans (clock skew) count as zero. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  const total = Math.max(0, ms);
  if (total < 1000) return `${Math.round(total)}ms`;
  const s = Math.floor(total / 1000);
  if (s < 60) return `${s}s`;
  const pad = (n: number) => String(n).padStart(2, "0");
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

/** How long something ran: start to end, or to `now` while it is still running; "—" before it starts. */
export function duration(start: string | null | undefined, end: string | null | undefined, now: number): string {
  if (!start) return "—";
  return formatMs((end ? parseTime(end) : now) - parseTime(start));
}
