// Pure helpers of the catalog: search, grouping by category, and the argument table of a template.
import type { ArgProperty, ArgsSchema, JobTemplate } from "../../types";

/** True when every word of the query is in the template's name or description. */
export function matchesSearch(template: JobTemplate, query: string): boolean {
  const text = `${template.name} ${template.description}`.toLowerCase();
  return query.toLowerCase().split(/\s+/).filter(Boolean).every((word) => text.includes(word));
}

export interface CategoryGroup {
  category: string;
  templates: JobTemplate[];
}

/** Matching templates by category (categories and names in alphabetical order). */
export function groupByCategory(templates: JobTemplate[], query: string): CategoryGroup[] {
  const groups = new Map<string, JobTemplate[]>();
  for (const template of templates) {
    if (!matchesSearch(template, query)) continue;
    const category = template.category || "general";
    groups.set(category, [...(groups.get(category) ?? []), template]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([category, items]) => ({
      category,
      templates: items.sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version)),
    }));
}

/** A value as it would be written in YAML/JSON, "—" when absent. */
export function formatValue(value: unknown): string {
  if (value === undefined) return "—";
  return typeof value === "string" ? value : JSON.stringify(value);
}

export interface ArgRow {
  name: string;
  type: string;
  default: string;
  constraints: string[];
  required: boolean;
  description: string;
  flag?: string;
}

function constraintsOf(prop: ArgProperty): string[] {
  const out: string[] = [];
  if (prop.minimum !== undefined && prop.maximum !== undefined) out.push(`${prop.minimum} – ${prop.maximum}`);
  else if (prop.minimum !== undefined) out.push(`≥ ${prop.minimum}`);
  else if (prop.maximum !== undefined) out.push(`≤ ${prop.maximum}`);
  if (prop.minLength !== undefined) out.push(`length ≥ ${prop.minLength}`);
  if (prop.maxLength !== undefined) out.push(`length ≤ ${prop.maxLength}`);
  if (prop.minItems !== undefined) out.push(`items ≥ ${prop.minItems}`);
  if (prop.maxItems !== undefined) out.push(`items ≤ ${prop.maxItems}`);
  if (prop.pattern !== undefined) out.push(`pattern ${prop.pattern}`);
  if (prop.enum) out.push(`one of ${prop.enum.map(formatValue).join(", ")}`);
  if (prop.items) out.push(...constraintsOf(prop.items).map((c) => `each ${c}`));
  return out;
}

/** One row per argument, required ones first, then by name. */
export function argRows(schema: ArgsSchema | undefined): ArgRow[] {
  const required = new Set(schema?.required ?? []);
  return Object.entries(schema?.properties ?? {})
    .map(([name, prop]) => ({
      name,
      type: prop.type === "array" && prop.items ? `array of ${prop.items.type}` : prop.type,
      default: formatValue(prop.default),
      constraints: constraintsOf(prop),
      required: required.has(name),
      description: prop.description ?? prop.title ?? "",
      flag: prop["x-flag"],
    }))
    .sort((a, b) => Number(b.required) - Number(a.required) || a.name.localeCompare(b.name));
}
