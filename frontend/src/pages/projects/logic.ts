// The projects page's rules: who manages a project, the namespace a new one gets, what a delete stops.
import type { ProjectRole, RunningWork } from "../../types";

/** Owners edit and delete a project; admins may too (the server decides either way). */
export function canManageProject(role: ProjectRole | undefined, isAdmin: boolean): boolean {
  return role === "owner" || isAdmin;
}

/** The namespace a new project gets: the one typed, else its name (as the server defaults it). */
export function namespaceOf(name: string, namespace: string): string {
  return namespace.trim() || name;
}

export interface WorkGroup {
  kind: string;
  items: string[];
}

const KINDS: [keyof RunningWork, string, string][] = [
  ["runs", "run", "runs"],
  ["notebooks", "notebook", "notebooks"],
  ["services", "model server", "model servers"],
  ["builds", "image build", "image builds"],
];

/** What the project runs, by kind, each item named with its state ("digits run #3 (running)"); kinds with
 * nothing running are left out, so an empty list means nothing runs. */
export function runningGroups(work: RunningWork): WorkGroup[] {
  return KINDS.filter(([key]) => work[key].length > 0).map(([key, one, many]) => ({
    kind: `${work[key].length} ${work[key].length === 1 ? one : many}`,
    items: work[key].map((item) => `${item.name} (${item.state})`),
  }));
}
