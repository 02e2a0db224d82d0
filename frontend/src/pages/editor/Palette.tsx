// The job templates, grouped by category. Drag one onto the canvas, or press it to add it at a free spot.
import { memo, useMemo, useState, type DragEvent } from "react";
import type { JobTemplate } from "../../types";

/** The drag payload's type: the template id. */
export const TEMPLATE_MIME = "application/x-myapp-template";

/** The templates a task may use that match every word of `query`, by category, sorted. */
export function paletteGroups(templates: JobTemplate[], query: string): [string, JobTemplate[]][] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const byCategory = new Map<string, JobTemplate[]>();
  const sorted = [...templates].sort((a, b) => a.category.localeCompare(b.category) || a.name.localeCompare(b.name));
  for (const t of sorted) {
    // The server says which templates a task may use (a notebook or a model server never runs to
    // completion, so it refuses them as tasks).
    if (!t.pipeline_step) continue;
    const text = `${t.name} ${t.category} ${t.kind} ${t.description}`.toLowerCase();
    if (!words.every((w) => text.includes(w))) continue;
    const category = t.category || "other";
    byCategory.set(category, [...(byCategory.get(category) ?? []), t]);
  }
  return [...byCategory];
}

interface PaletteProps {
  templates: JobTemplate[];
  onAdd: (template: JobTemplate) => void;
}

export const Palette = memo(function Palette({ templates, onAdd }: PaletteProps) {
  const [query, setQuery] = useState("");
  const groups = useMemo(() => paletteGroups(templates, query), [templates, query]);

  const onDragStart = (event: DragEvent<HTMLButtonElement>, template: JobTemplate) => {
    event.dataTransfer.setData(TEMPLATE_MIME, String(template.id));
    event.dataTransfer.setData("text/plain", template.name);
    event.dataTransfer.effectAllowed = "copy";
  };

  return (
    <aside className="editor-palette" aria-label="Job templates">
      <input type="search" placeholder="Search templates" aria-label="Search templates" value={query}
        onChange={(e) => setQuery(e.target.value)} />
      <p className="hint">Drag a template onto the canvas, or press it to add a task.</p>
      {groups.length === 0 && <p className="muted">{templates.length ? "No template matches." : "No templates."}</p>}
      {groups.map(([category, items]) => (
        <section key={category}>
          <h2>{category}</h2>
          <ul>
            {items.map((t) => (
              <li key={t.id}>
                <button type="button" className="palette-item" data-template={t.name} draggable
                  title={t.description} onDragStart={(e) => onDragStart(e, t)} onClick={() => onAdd(t)}>
                  <span className="palette-item-name">{t.name}</span>
                  <span className="palette-item-kind">{t.kind} · {t.version}</span>
                </button>
              </li>
            ))}
          </ul>
        </section>
      ))}
    </aside>
  );
});
