// Placeholder until this page is built (issue 6).
export default function RunsPage(props: { pipelineId?: number }) {
  return <p>RunsPage {JSON.stringify(props)}</p>;
}
