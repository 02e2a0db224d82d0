// Kubernetes quantities ("500m", "2", "256Gi", "1e3") as the admin forms take them, and human units for display.

const QUANTITY = /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$/;
const SUFFIX: Record<string, number> = {
  "": 1, n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

/** The value of a quantity in base units (cores, bytes), or null if the text is not a quantity. */
export function parseQuantity(text: string): number | null {
  const match = QUANTITY.exec(text.trim());
  if (!match) return null;
  const [, number, suffix = ""] = match;
  if (/^[eE]/.test(suffix)) return Number(number) * 10 ** Number(suffix.slice(1));
  return Number(number) * SUFFIX[suffix];
}

/** Why a cpu or memory field is not acceptable, or null. Empty counts as missing. */
export function quantityProblem(text: string, kind: "cpu" | "memory"): string | null {
  if (!text.trim()) return "is required";
  const value = parseQuantity(text);
  const example = kind === "cpu" ? "64 or 500m" : "256Gi or 512Mi";
  if (value === null) return `is not a quantity (e.g. ${example})`;
  if (value < 0) return "must not be negative";
  if (kind === "cpu" && !Number.isInteger(Math.round(value * 1e6) / 1e3)) return "is finer than 1m";
  return null;
}

/** Why a GPU count is not acceptable, or null. */
export function gpuProblem(text: string): string | null {
  if (!/^\d+$/.test(text.trim())) return "must be a whole number ≥ 0";
  return null;
}

function trim(value: number): string {
  return String(Math.round(value * 100) / 100);
}

/** "3.5 cores" from millicores. */
export function formatCores(millicores: number): string {
  const cores = millicores / 1000;
  return `${cores > 0 && cores < 0.01 ? "<0.01" : trim(cores)} ${cores === 1 ? "core" : "cores"}`;
}

/** "12.5 GiB" from bytes. */
export function formatGiB(bytes: number): string {
  const gib = bytes / 2 ** 30;
  return `${gib > 0 && gib < 0.01 ? "<0.01" : trim(gib)} GiB`;
}

export function formatGpus(gpus: number): string {
  return `${gpus} ${gpus === 1 ? "GPU" : "GPUs"}`;
}
