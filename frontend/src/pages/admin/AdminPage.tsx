// Placeholder until this page is built (issue 6).
export default function AdminPage(props: { tab: string }) {
  return <p>AdminPage {JSON.stringify(props)}</p>;
}
