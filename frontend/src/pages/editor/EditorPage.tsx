// Placeholder until this page is built (issue 6).
export default function EditorPage(props: { pipelineId: number }) {
  return <p>EditorPage {JSON.stringify(props)}</p>;
}
