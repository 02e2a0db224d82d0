import type { JobTemplate } from "../../types";

interface Props {
  template: JobTemplate;
  selected: boolean;
  onSelect: () => void;
}

export function TemplateCard({ template, selected, onSelect }: Props) {
  return (
    <button type="button" className="template-card" aria-pressed={selected} data-template={template.name}
      onClick={onSelect}>
      <span className="card-head">
        <strong>{template.name}</strong>
        <span className="muted">v{template.version}</span>
      </span>
      <span className="card-tags">
        <span className="tag">{template.kind}</span>
        <span className="tag">{template.category}</span>
      </span>
      <code className="card-image">{template.image}</code>
      <span className="card-description">{template.description}</span>
    </button>
  );
}
