// Administration: clusters, resource groups (each with its live status), quotas, live usage, limits and the
// scheduling simulator, one tab per URL.
import { Link } from "../../router";
import { PageHeader } from "../../components/ui";
import { ClustersTab } from "./ClustersTab";
import { LimitsTab } from "./LimitsTab";
import { QuotasTab } from "./QuotasTab";
import { ResourceGroupsTab } from "./ResourceGroupsTab";
import { SimulatorTab } from "./SimulatorTab";
import { UsageTab } from "./UsageTab";
import "./admin.css";

const TABS = [
  { id: "clusters", label: "Clusters", render: () => <ClustersTab /> },
  { id: "resource-groups", label: "Resource groups", render: () => <ResourceGroupsTab /> },
  { id: "quotas", label: "Quotas", render: () => <QuotasTab /> },
  { id: "usage", label: "Usage", render: () => <UsageTab /> },
  { id: "limits", label: "Limits", render: () => <LimitsTab /> },
  { id: "simulator", label: "Simulator", render: () => <SimulatorTab /> },
];

export default function AdminPage({ tab }: { tab: string }) {
  const current = TABS.find((t) => t.id === tab);
  return (
    <section className="admin-page" aria-labelledby="admin-title">
      <PageHeader title={<span id="admin-title">Administration</span>} />
      <nav className="admin-tabs" aria-label="Administration">
        {TABS.map((t) => (
          <Link key={t.id} to={`/admin/${t.id}`} aria-current={t === current ? "page" : undefined}>{t.label}</Link>
        ))}
      </nav>
      {current ? current.render() : <p role="alert">There is no “{tab}” tab. Pick one above.</p>}
    </section>
  );
}
