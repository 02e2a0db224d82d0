// Placeholder until this page is built (issue 6).
export default function RunPage(props: { runId: number }) {
  return <p>RunPage {JSON.stringify(props)}</p>;
}
