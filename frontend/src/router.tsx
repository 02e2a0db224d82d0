// A small history-API router: the app's few routes do not need a routing library.
import { useEffect, useState, type AnchorHTMLAttributes, type MouseEvent } from "react";

export const BASE = "/ui";
const CHANGE = "myapp:navigate";

/** The current path inside the app, without BASE ("/pipelines/3"). */
export function currentPath(): string {
  const path = window.location.pathname;
  return path.startsWith(BASE) ? path.slice(BASE.length) || "/" : "/";
}

export function navigate(to: string, replace = false): void {
  const url = BASE + to;
  if (replace) window.history.replaceState(null, "", url);
  else window.history.pushState(null, "", url);
  window.dispatchEvent(new Event(CHANGE));
}

export function useLocation(): { path: string; search: URLSearchParams } {
  const [state, setState] = useState(() => ({ path: currentPath(), search: window.location.search }));
  useEffect(() => {
    const update = () => setState({ path: currentPath(), search: window.location.search });
    window.addEventListener("popstate", update);
    window.addEventListener(CHANGE, update);
    return () => {
      window.removeEventListener("popstate", update);
      window.removeEventListener(CHANGE, update);
    };
  }, []);
  return { path: state.path, search: new URLSearchParams(state.search) };
}

/** Match "/pipelines/:id" against "/pipelines/3" → {id: "3"}; null when it does not match. */
export function matchRoute(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split("/").filter(Boolean);
  const got = path.split("/").filter(Boolean);
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    if (want[i].startsWith(":")) params[want[i].slice(1)] = decodeURIComponent(got[i]);
    else if (want[i] !== got[i]) return null;
  }
  return params;
}

/** Where to go once signed in: the `next` parameter when it is a path of this app ("/runs/3"), never
 * another site ("//evil.example", "/\\evil.example", "https://…") nor the sign-in page itself; else the
 * pipelines. */
export function nextPath(search: URLSearchParams): string {
  const next = search.get("next") ?? "";
  const path = next.split(/[?#]/, 1)[0];
  const controlOrBackslash = [...next].some((c) => c < " " || c === "\\");
  const sameSite = /^\/(?![/\\])/.test(next) && !controlOrBackslash;
  if (!sameSite || path === "/" || path === "/login") return "/pipelines";
  return next;
}

type LinkProps = AnchorHTMLAttributes<HTMLAnchorElement> & { to: string };

/** An <a> with a real href (open in new tab works) that navigates in place on plain clicks. */
export function Link({ to, onClick, ...rest }: LinkProps) {
  const handle = (event: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) return;
    event.preventDefault();
    navigate(to);
  };
  return <a href={BASE + to} onClick={handle} {...rest} />;
}
