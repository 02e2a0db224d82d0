// Placeholder until this page is built (issue 6).
export function PipelinesPage() {
  return <p>Pipelines</p>;
}
