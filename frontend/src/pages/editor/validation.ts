// Client-side checks mirroring the server (myapp/rendering/args.py, quantity.py, api/fields.py), so
// mistakes show while typing. The server stays the authority: its answer on save is shown the same way.
import type { ArgProperty, ArgsSchema, JobTemplate, Resources } from "../../types";
import type { DraftTask } from "./model";

/** Field name → reason. Field names: "name", "args.<arg>", "resources.cpu", "retries", … */
export type FieldErrors = Record<string, string>;

const INT = /^[+-]?[0-9]+$/;
const FLOAT = /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$/;
const TRUE = new Set(["true", "yes", "on", "1"]);
const FALSE = new Set(["false", "no", "off", "0"]);
const MAX_STRING = 65536;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const regexCache = new Map<string, RegExp | null>();

/** A Python `re` pattern as a JS RegExp anchored for a whole-value match (re.fullmatch); null if untranslatable. */
export function fullMatchRegex(pattern: string): RegExp | null {
  if (!regexCache.has(pattern)) {
    const js = pattern.replace(/\(\?P</g, "(?<").replace(/\(\?P=(\w+)\)/g, "\\k<$1>").replace(/\\A/g, "^").replace(/\\Z/g, "$");
    let compiled: RegExp | null;
    try {
      compiled = new RegExp(`^(?:${js})$`);
    } catch {
      compiled = null; // Python-only syntax: leave the check to the server
    }
    regexCache.set(pattern, compiled);
  }
  return regexCache.get(pattern)!;
}

function show(value: unknown): string {
  return typeof value === "string" ? `'${value}'` : JSON.stringify(value);
}

type Coerced = { value: unknown; error?: undefined } | { value?: undefined; error: string };

/** Convert one scalar given as text (or JSON value for array items) to the schema type. */
function coerceScalar(prop: Omit<ArgProperty, "items">, raw: unknown): Coerced {
  const type = prop.type ?? "string";
  const text = typeof raw === "string" ? raw.trim() : raw;
  switch (type) {
    case "integer":
      if (typeof text === "number" && Number.isInteger(text)) return { value: text };
      if (typeof text === "string" && INT.test(text)) return { value: Number(text) };
      return { error: `expected an integer, got ${show(raw)}` };
    case "number":
      if (typeof text === "number" && Number.isFinite(text)) return { value: text };
      if (typeof text === "string" && FLOAT.test(text)) return { value: Number(text) };
      return { error: `expected a number, got ${show(raw)}` };
    case "boolean":
      if (typeof text === "boolean") return { value: text };
      if (typeof text === "string" && TRUE.has(text.toLowerCase())) return { value: true };
      if (typeof text === "string" && FALSE.has(text.toLowerCase())) return { value: false };
      return { error: `expected a boolean (true/false), got ${show(raw)}` };
    default:
      if (typeof raw !== "string") return { error: `expected a string, got ${show(raw)}` };
      if (raw.includes("\0")) return { error: "contains a NUL character" };
      if (raw.length > MAX_STRING) return { error: `is longer than ${MAX_STRING} characters` };
      return { value: raw };
  }
}

function constraints(prop: ArgProperty, value: unknown): string | null {
  if (prop.enum && !prop.enum.some((option) => option === value)) {
    return `must be one of ${prop.enum.map(show).join(", ")}`;
  }
  if (typeof value === "number") {
    if (prop.minimum !== undefined && value < prop.minimum) return `must be >= ${prop.minimum}`;
    if (prop.maximum !== undefined && value > prop.maximum) return `must be <= ${prop.maximum}`;
  }
  if (Array.isArray(value)) {
    if (prop.minItems !== undefined && value.length < prop.minItems) return `must have at least ${prop.minItems} items`;
    if (prop.maxItems !== undefined && value.length > prop.maxItems) return `must have at most ${prop.maxItems} items`;
  }
  if (typeof value === "string") {
    // String length as Python counts it (code points, not UTF-16 units).
    const length = [...value].length;
    if (prop.minLength !== undefined && length < prop.minLength) return `must have at least ${prop.minLength} characters`;
    if (prop.maxLength !== undefined && length > prop.maxLength) return `must have at most ${prop.maxLength} characters`;
    const regex = prop.pattern === undefined ? null : fullMatchRegex(prop.pattern);
    if (regex && !regex.test(value)) return `does not match the pattern ${prop.pattern}`;
  }
  return null;
}

/** Array text: a JSON list when it starts with "[", else one item per line (blank lines ignored). */
function arrayItems(text: string): unknown[] | string {
  if (text.trimStart().startsWith("[")) {
    try {
      const parsed: unknown = JSON.parse(text);
      return Array.isArray(parsed) ? parsed : "is not a valid JSON list";
    } catch {
      return "is not a valid JSON list";
    }
  }
  return text.split("\n").map((line) => line.replace(/\r$/, "")).filter((line) => line.trim() !== "");
}

/** Text containing a macro ({{ ds }}, {{ params.x }}) is substituted at run time: the server judges it. */
export function hasMacro(text: string): boolean {
  return text.includes("{{");
}

/**
 * The value to send for an argument's text: `undefined` when empty (not sent: the server applies
 * the default), the typed value when valid, else an error. Macros are sent as text.
 */
export function coerceArg(prop: ArgProperty, text: string): { value?: unknown; error?: string } {
  if (text === "") return {};
  if (hasMacro(text)) return { value: text };
  if ((prop.type ?? "string") === "array") {
    const items = arrayItems(text);
    if (typeof items === "string") return { error: items };
    const itemSchema = prop.items ?? { type: "string" };
    const values: unknown[] = [];
    for (const [index, item] of items.entries()) {
      const one = coerceScalar(itemSchema, item);
      const error = one.error ?? constraints(itemSchema, one.value);
      if (error) return { error: `item ${index + 1}: ${error}` };
      values.push(one.value);
    }
    const error = constraints(prop, values);
    return error ? { error } : { value: values };
  }
  const one = coerceScalar(prop, text);
  if (one.error) return { error: one.error };
  const error = constraints(prop, one.value);
  return error ? { error } : { value: one.value };
}

/** The reason an argument's text is wrong, or null. */
export function checkArg(prop: ArgProperty, text: string, required: boolean): string | null {
  if (text === "") return required && !("default" in prop) ? "is required" : null;
  return coerceArg(prop, text).error ?? null;
}

const QUANTITY = /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?$/;
const SUFFIX: Record<string, number> = {
  "": 1, n: 1e-9, u: 1e-6, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
};

/** The amount a Kubernetes quantity ("500m", "2", "4Gi", "1e3") stands for, or null if it is not one. */
export function parseQuantity(text: string | number | undefined): number | null {
  if (text === undefined) return null;
  const match = QUANTITY.exec(String(text).trim());
  if (!match) return null;
  const [, number, suffix = ""] = match;
  if (suffix[0] === "e" || suffix[0] === "E") return Number(number) * 10 ** Number(suffix.slice(1));
  return Number(number) * SUFFIX[suffix];
}

const isWhole = (n: number) => Math.abs(n - Math.round(n)) < 1e-6;

/** The reason a resource text is wrong (mirrors quantity._normalise and the template maximum), or null. */
export function checkResource(key: "cpu" | "memory" | "gpu", text: string, max: Resources | undefined): string | null {
  if (text.trim() === "") return null; // not set: the template default applies
  const amount = parseQuantity(text);
  if (amount === null) return key === "gpu" ? "must be a whole number >= 0" : "is not a quantity (examples: 500m, 2, 4Gi)";
  if (key === "gpu") {
    if (!INT.test(text.trim()) || amount < 0) return "must be a whole number >= 0";
    if (amount > 64) return "must be <= 64";
  } else if (amount <= 0) {
    return `${key} must be > 0`;
  }
  if (key === "memory" && amount < 2 ** 22) return "is below 4Mi (did you forget the unit, e.g. 4Gi?)";
  if (key === "cpu" && !isWhole(amount * 1000)) return "is finer than 1m";
  if (key === "memory" && !isWhole(amount)) return "is not a whole number of bytes";
  const limit = parseQuantity(max?.[key]);
  if (limit !== null && amount > limit * (1 + 1e-12)) return `exceeds the template maximum ${max![key]}`;
  return null;
}

/** The reason a whole-number field's text is wrong, or null. Empty is allowed only when `optional`. */
export function checkInt(text: string, min: number, max: number, optional = false): string | null {
  const trimmed = text.trim();
  if (trimmed === "") return optional ? null : "is required";
  if (!INT.test(trimmed)) return "must be a whole number";
  const n = Number(trimmed);
  if (n < min || n > max) return `must be between ${min} and ${max}`;
  return null;
}

export function checkTaskName(name: string, duplicate: boolean): string | null {
  if (name === "") return "is required";
  if (name.length > 63) return `must be at most 63 characters (got ${name.length})`;
  if (!DNS_LABEL.test(name)) {
    return "must be a DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit";
  }
  return duplicate ? "another task of this pipeline has this name" : null;
}

export function argProperties(schema: ArgsSchema | undefined): [string, ArgProperty][] {
  return Object.entries(schema?.properties ?? {});
}

export const LIMITS = {
  retries: [0, 100],
  retryDelay: [0, 86_400],
  timeout: [1, 30 * 86_400],
} as const;

/** Every client-side problem of one task, by field. `template` undefined = the template is unknown. */
export function validateTask(task: DraftTask, template: JobTemplate | undefined, duplicateName: boolean): FieldErrors {
  const errors: FieldErrors = {};
  const add = (field: string, reason: string | null) => {
    if (reason) errors[field] = reason;
  };
  add("name", checkTaskName(task.name, duplicateName));
  if (!template) {
    errors.template_id = "the job template of this task is not available";
    return errors;
  }
  const required = new Set(template.args_schema?.required ?? []);
  for (const [name, prop] of argProperties(template.args_schema)) {
    add(`args.${name}`, checkArg(prop, task.args[name] ?? "", required.has(name)));
  }
  for (const name of Object.keys(task.args)) {
    if (!template.args_schema?.properties?.[name] && task.args[name] !== "") add(`args.${name}`, "unknown argument");
  }
  for (const key of ["cpu", "memory", "gpu"] as const) {
    add(`resources.${key}`, checkResource(key, task.resources[key], template.max_resources));
  }
  add("retries", checkInt(task.retries, ...LIMITS.retries));
  add("retry_delay", checkInt(task.retryDelay, ...LIMITS.retryDelay));
  add("timeout", checkInt(task.timeout, ...LIMITS.timeout, true));
  return errors;
}

/** Names used by more than one task. */
export function duplicateNames(tasks: DraftTask[]): Set<string> {
  const seen = new Set<string>();
  const duplicates = new Set<string>();
  for (const t of tasks) {
    if (seen.has(t.name)) duplicates.add(t.name);
    seen.add(t.name);
  }
  return duplicates;
}
