// Placeholder until this page is built (issue 6).
export default function CatalogPage() {
  return <p>CatalogPage</p>;
}
