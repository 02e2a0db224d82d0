// The catalog: job templates by category with search, one template's details, and the registered images.
import { useMemo, useState } from "react";
import { listAll } from "../../api/client";
import { ErrorBanner, Loading, PageHeader } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import { navigate, useLocation } from "../../router";
import type { Image, JobTemplate } from "../../types";
import { ImageTable } from "./ImageTable";
import { groupByCategory } from "./logic";
import { TemplateCard } from "./TemplateCard";
import { TemplateDetail } from "./TemplateDetail";
import "./catalog.css";

export default function CatalogPage() {
  const { data, error, loading } = useAsync(
    () => Promise.all([listAll<JobTemplate>("job_template"), listAll<Image>("image")]), []);
  const { search } = useLocation();
  const [query, setQuery] = useState("");
  const templates = data?.[0];
  const images = data?.[1] ?? [];
  const groups = useMemo(() => groupByCategory(templates ?? [], query), [templates, query]);
  // The selection lives in the URL (?template=<id>) so a template can be linked to.
  const selectedId = Number(search.get("template"));
  const selected = templates?.find((t) => t.id === selectedId);
  const select = (id: number) => navigate(`/catalog?template=${id}`, true);

  return (
    <section className="catalog-page" aria-labelledby="catalog-title">
      <PageHeader title={<span id="catalog-title">Catalog</span>}>
        <input type="search" aria-label="Search templates by name or description"
          placeholder="Search name or description" value={query} onChange={(e) => setQuery(e.target.value)} />
      </PageHeader>
      <ErrorBanner error={error} />
      {!templates ? (loading && <Loading what="Loading the catalog" />) : (
        <>
          <div className="catalog-layout">
            <div className="catalog-list">
              {templates.length === 0 && <p className="panel muted">The catalog has no job templates yet.</p>}
              {templates.length > 0 && groups.length === 0 && (
                <p className="panel muted">No template matches “{query.trim()}”.</p>
              )}
              {groups.map((group) => (
                <section key={group.category} aria-labelledby={`category-${group.category}`}>
                  <h2 id={`category-${group.category}`} className="category-title">
                    {group.category} <span className="muted">({group.templates.length})</span>
                  </h2>
                  <ul className="template-grid">
                    {group.templates.map((template) => (
                      <li key={template.id}>
                        <TemplateCard template={template} selected={template.id === selected?.id}
                          onSelect={() => select(template.id)} />
                      </li>
                    ))}
                  </ul>
                </section>
              ))}
            </div>
            <aside className="catalog-detail panel" aria-label="Template details">
              {selected ? <TemplateDetail template={selected} /> : (
                <p className="muted">Select a template to see its arguments, resources, command and environment.</p>
              )}
            </aside>
          </div>
          {images.length > 0 && <ImageTable images={images} />}
        </>
      )}
    </section>
  );
}
