// The members page's rules, mirroring the server's (myapp/api/projects.py): owners (and admins) manage
// members; a project keeps at least one owner (the server refuses with 409 naming `role`).
import type { Member, ProjectRole } from "../../types";

export const ROLES: readonly { role: ProjectRole; label: string; can: string }[] = [
  { role: "viewer", label: "Viewer", can: "sees the project's pipelines, runs and logs" },
  { role: "developer", label: "Developer", can: "also edits and runs pipelines" },
  { role: "owner", label: "Owner", can: "also manages members and the project's settings" },
];

export interface MemberControls {
  canManage: boolean;
  /** Why the controls are disabled (null when they are not). */
  reason: string | null;
}

/** What the signed-in user may do on the members page of a project where their role is `role`. */
export function memberControls(role: ProjectRole | null | undefined, isAdmin: boolean): MemberControls {
  if (isAdmin || role === "owner") return { canManage: true, reason: null };
  const yours = role ? `your role here is ${role}` : "you are not a member";
  return { canManage: false, reason: `Only owners of this project can add, change or remove members; ${yours}.` };
}

export function ownerCount(members: readonly Member[]): number {
  return members.filter((m) => m.role === "owner").length;
}

/** The one owner left: demoting or removing them is refused by the server. */
export function isLastOwner(member: Member, members: readonly Member[]): boolean {
  return member.role === "owner" && ownerCount(members) === 1;
}

/** A client-side check of the username to add (the server says whether such a user exists). */
export function usernameProblem(username: string): string | null {
  if (username.trim() === "") return "is required";
  if (/\s/.test(username.trim())) return "a username has no spaces";
  return null;
}

/** Members sorted for the table: owners first, then developers, then viewers; by username within a role. */
export function sortMembers(members: readonly Member[]): Member[] {
  const rank = (role: ProjectRole) => ROLES.findIndex((r) => r.role === role);
  return [...members].sort((a, b) => rank(b.role) - rank(a.role) || a.username.localeCompare(b.username));
}
