// Numbers with their units, for axes, tooltips and tables: one formatting for every chart.

/** What a chart's values are: the axis, the tooltip and the legend say it. */
export type Unit = "" | "bytes" | "%" | "cores" | "ms" | "h" | "d" | "req/s" | "errors/s" | "jobs";

const BYTE_UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/** "512 B", "1.5 KiB", "118 MiB", "2 GiB": at most three significant digits. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return "—";
  let value = Math.abs(bytes);
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const digits = unit === 0 || value >= 100 ? 0 : value >= 10 ? 1 : 2;
  const text = Number(value.toFixed(digits)).toString();
  return `${bytes < 0 ? "-" : ""}${text} ${BYTE_UNITS[unit]}`;
}

/** Short numbers: "0", "0.25", "1.5", "12", "0.944", "1.2k" (three significant digits). */
export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return "—";
  if (Math.abs(value) >= 10_000) return `${Number((value / 1000).toFixed(1))}k`;
  return Number(value.toPrecision(3)).toString();
}

/** A value with its unit: "1.5 GiB", "42%", "0.25 cores", "12.5 ms", "0.944". */
export function formatValue(value: number, unit: Unit): string {
  if (unit === "bytes") return formatBytes(value);
  if (unit === "%") return `${formatNumber(value)}%`;
  return unit ? `${formatNumber(value)} ${unit}` : formatNumber(value);
}

/** The time zone charts show times in: the user's (the browser's), e.g. "Europe/Berlin". */
export function userZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
}

/** A clock time ("14:05:09") of Unix milliseconds in a zone. */
export function formatClock(ms: number, zone: string): string {
  return new Intl.DateTimeFormat("en-GB", { hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23",
    timeZone: zone }).format(new Date(ms));
}
