// Who is signed in and which project they are working in; shared by every page.
import { createContext, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from "react";
import { api, setCsrfToken, UNAUTHORIZED_EVENT } from "./api/client";
import type { Me, MyProject, SessionStatus } from "./types";

export interface Session {
  me: Me | null;
  /** The selected project (id and role), or null if the user belongs to none. */
  project: MyProject | null;
  setProjectId: (id: number) => void;
  login: (username: string, password: string) => Promise<void>;
  logout: () => Promise<void>;
  refresh: () => Promise<void>;
}

const SessionContext = createContext<Session | null>(null);
const PROJECT_KEY = "myapp.project";

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession outside SessionProvider");
  return session;
}

/** The selected project; pages under the app layout can rely on it being set. */
export function useProject(): MyProject {
  const { project } = useSession();
  if (!project) throw new Error("no project selected");
  return project;
}

/** Who is signed in (null: nobody); keeps the CSRF token for the writes that follow. */
async function signedIn(): Promise<Me | null> {
  const status = await api<SessionStatus>("/api/v1/session/");
  setCsrfToken(status.csrf_token);
  if (!status.authenticated) return null;
  const who = await api<Me>("/api/v1/me/");
  setCsrfToken(who.csrf_token);
  return who;
}

export function SessionProvider({ children }: { children: (ready: boolean) => ReactNode }) {
  const [me, setMe] = useState<Me | null>(null);
  const [ready, setReady] = useState(false);
  const [projectId, setProjectIdState] = useState<number | null>(() => {
    const stored = Number(window.localStorage.getItem(PROJECT_KEY));
    return Number.isInteger(stored) && stored > 0 ? stored : null;
  });

  const refresh = useCallback(async () => setMe(await signedIn()), []);

  useEffect(() => {
    signedIn().then(setMe).finally(() => setReady(true));
    const expired = () => setMe(null);
    window.addEventListener(UNAUTHORIZED_EVENT, expired);
    return () => window.removeEventListener(UNAUTHORIZED_EVENT, expired);
  }, [refresh]);

  const login = useCallback(async (username: string, password: string) => {
    await api("/api/v1/session/login", { method: "POST", body: { username, password } });
    await refresh();
  }, [refresh]);

  const logout = useCallback(async () => {
    await api("/api/v1/session/logout", { method: "POST" });
    await refresh();
  }, [refresh]);

  const setProjectId = useCallback((id: number) => {
    window.localStorage.setItem(PROJECT_KEY, String(id));
    setProjectIdState(id);
  }, []);

  const project = useMemo(() => {
    const projects = me?.projects ?? [];
    return projects.find((p) => p.id === projectId) ?? projects[0] ?? null;
  }, [me, projectId]);

  const value = useMemo(() => ({ me, project, setProjectId, login, logout, refresh }),
    [me, project, setProjectId, login, logout, refresh]);
  return <SessionContext.Provider value={value}>{children(ready)}</SessionContext.Provider>;
}
