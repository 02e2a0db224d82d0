// The shell: session gate, top bar (project switcher, navigation), and the page for the URL.
// Heavy pages (editor, run view, admin) load on demand so the first page stays small.
import { lazy, Suspense, useEffect, type ReactNode } from "react";
import { Link, matchRoute, navigate, nextPath, useLocation } from "./router";
import { SessionProvider, useSession } from "./session";
import { Loading } from "./components/ui";
import { LoginPage } from "./pages/login/LoginPage";
import { PipelinesPage } from "./pages/pipelines/PipelinesPage";

const CatalogPage = lazy(() => import("./pages/catalog/CatalogPage"));
const EditorPage = lazy(() => import("./pages/editor/EditorPage"));
const RunPage = lazy(() => import("./pages/run/RunPage"));
const RunsPage = lazy(() => import("./pages/run/RunsPage"));
const ComparePage = lazy(() => import("./pages/compare/ComparePage"));
const AdminPage = lazy(() => import("./pages/admin/AdminPage"));
const MembersPage = lazy(() => import("./pages/members/MembersPage"));
const UsersPage = lazy(() => import("./pages/users/UsersPage"));
const NotebooksPage = lazy(() => import("./pages/notebooks/NotebooksPage"));
const ImagesPage = lazy(() => import("./pages/images/ImagesPage"));
const ModelsPage = lazy(() => import("./pages/models/ModelsPage"));
const ServicesPage = lazy(() => import("./pages/services/ServicesPage"));
const ProjectsPage = lazy(() => import("./pages/projects/ProjectsPage"));
const ExperimentsPage = lazy(() => import("./pages/experiments/ExperimentsPage"));
const ExperimentPage = lazy(() => import("./pages/experiments/ExperimentPage"));

export function App() {
  return <SessionProvider>{(ready) => (ready ? <Gate /> : <Loading />)}</SessionProvider>;
}

function Gate() {
  const { me } = useSession();
  const { path, search } = useLocation();
  const next = nextPath(search);
  useEffect(() => {
    if (!me && path !== "/login") navigate(`/login?next=${encodeURIComponent(path)}`, true);
    if (me && path === "/login") navigate(next, true); // signed in (now, or already): on to `next`
  }, [me, path, next]);
  if (!me) return <LoginPage />;
  return <Shell />;
}

interface Route {
  pattern: string;
  render: (params: Record<string, string>) => ReactNode;
  admin?: boolean;
  /** Open without a selected project (creating the first one). */
  anyProject?: boolean;
}

const ROUTES: Route[] = [
  { pattern: "/pipelines", render: () => <PipelinesPage /> },
  { pattern: "/pipelines/:id", render: (p) => <EditorPage key={p.id} pipelineId={Number(p.id)} /> },
  { pattern: "/pipelines/:id/runs", render: (p) => <RunsPage key={p.id} pipelineId={Number(p.id)} /> },
  { pattern: "/pipelines/:id/compare", render: (p) => <ComparePage key={p.id} pipelineId={Number(p.id)} /> },
  { pattern: "/runs", render: () => <RunsPage /> },
  { pattern: "/runs/:id", render: (p) => <RunPage key={p.id} runId={Number(p.id)} /> },
  { pattern: "/experiments", render: () => <ExperimentsPage /> },
  { pattern: "/experiments/:id", render: (p) => <ExperimentPage key={p.id} experimentId={Number(p.id)} /> },
  { pattern: "/catalog", render: () => <CatalogPage /> },
  { pattern: "/notebooks", render: () => <NotebooksPage /> },
  { pattern: "/images", render: () => <ImagesPage /> },
  { pattern: "/models", render: () => <ModelsPage /> },
  { pattern: "/services", render: () => <ServicesPage /> },
  { pattern: "/members", render: () => <MembersPage /> },
  { pattern: "/projects", render: () => <ProjectsPage />, anyProject: true },
  { pattern: "/users", render: () => <UsersPage />, admin: true },
  { pattern: "/admin", render: () => <AdminPage tab="clusters" />, admin: true },
  { pattern: "/admin/:tab", render: (p) => <AdminPage tab={p.tab} />, admin: true },
];

function Shell() {
  const { me, project } = useSession();
  const { path } = useLocation();
  useEffect(() => {
    if (path === "/") navigate("/pipelines", true);
  }, [path]);
  let page: ReactNode = <p>Page not found. <Link to="/pipelines">Go to pipelines</Link></p>;
  for (const route of ROUTES) {
    const params = matchRoute(route.pattern, path);
    if (!params) continue;
    if (route.admin && !me?.is_admin) page = <p role="alert">Only administrators can open this page.</p>;
    else if (!project && !route.admin && !route.anyProject) page = <NoProject />;
    else page = route.render(params);
    break;
  }
  return (
    <div className="shell">
      <TopBar />
      <main className="content">
        <Suspense fallback={<Loading />}>{page}</Suspense>
      </main>
    </div>
  );
}

function NoProject() {
  return (
    <section className="empty-state">
      <h1>No project yet</h1>
      <p>Pipelines, notebooks, models and services live in a project. Create one (you will be its owner), or ask a
        project owner to add you to theirs.</p>
      <Link to="/projects?new=1" className="button primary">Create a project</Link>
    </section>
  );
}

// The switcher's two entries that are pages, not projects: the Projects page, with its form open or not.
const NEW_PROJECT = "new";
const ALL_PROJECTS = "all";

function TopBar() {
  const { me, project, setProjectId, logout } = useSession();
  const { path } = useLocation();
  const nav = [
    { to: "/pipelines", label: "Pipelines" },
    { to: "/runs", label: "Runs" },
    { to: "/experiments", label: "Experiments" },
    { to: "/notebooks", label: "Notebooks" },
    { to: "/images", label: "Images" },
    { to: "/models", label: "Models" },
    { to: "/services", label: "Services" },
    { to: "/catalog", label: "Catalog" },
    { to: "/members", label: "Members" },
    ...(me?.is_admin ? [{ to: "/admin", label: "Admin" }, { to: "/users", label: "Users" }] : []),
  ];
  return (
    <header className="topbar">
      <Link to="/pipelines" className="brand">myapp</Link>
      <label className="project-switcher">
        <span>Project</span>
        <select aria-label="Project" value={project?.id ?? ""}
          onChange={(e) => {
            if (e.target.value === NEW_PROJECT) navigate("/projects?new=1");
            else if (e.target.value === ALL_PROJECTS) navigate("/projects");
            else setProjectId(Number(e.target.value));
          }}>
          {!project && <option value="">no project</option>}
          {(me?.projects ?? []).map((p) => <option key={p.id} value={p.id}>{p.name} ({p.role})</option>)}
          <option value={NEW_PROJECT}>New project…</option>
          <option value={ALL_PROJECTS}>All projects…</option>
        </select>
      </label>
      <nav aria-label="Main">
        {nav.map((item) => (
          <Link key={item.to} to={item.to} aria-current={path.startsWith(item.to) ? "page" : undefined}>
            {item.label}
          </Link>
        ))}
      </nav>
      <span className="user">{me?.username}</span>
      <button type="button" className="link-button" onClick={() => void logout()}>Sign out</button>
    </header>
  );
}
