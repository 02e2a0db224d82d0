// The users page's rules, mirroring the server's (myapp/api/users.py): a password of at least 12
// characters (or one the server generates, shown once); an admin cannot deactivate themselves or
// remove their own admin flag (the server refuses with 409 naming `active` / `is_admin`).
import type { User } from "../../types";

export const PASSWORD_MIN_LENGTH = 12;
export const PASSWORD_MAX_LENGTH = 256;

/** The server's password policy, said the way the server says it. */
export function passwordProblem(password: string): string | null {
  if (password === "") return "is required";
  if ([...password].length < PASSWORD_MIN_LENGTH) return `must be at least ${PASSWORD_MIN_LENGTH} characters`;
  if ([...password].length > PASSWORD_MAX_LENGTH) return `must be at most ${PASSWORD_MAX_LENGTH} characters`;
  return null;
}

/** The server's username rule: letters, digits and . _ @ -, starting with a letter or digit. */
export function newUsernameProblem(username: string): string | null {
  if (username === "") return "is required";
  if (username.length > 64) return "must be at most 64 characters";
  if (!/^[A-Za-z0-9][A-Za-z0-9._@-]*$/.test(username)) {
    return "letters, digits and . _ @ - only, starting with a letter or digit";
  }
  return null;
}

/** "Grace Hopper"; users made by the command line have "-" as last name. */
export function displayName(user: Pick<User, "first_name" | "last_name">): string {
  const last = user.last_name === "-" ? "" : user.last_name;
  return [user.first_name, last].filter(Boolean).join(" ");
}

export interface SelfLocks {
  /** Why the deactivate button is disabled, or null. */
  deactivate: string | null;
  /** Why removing the admin flag is disabled, or null. */
  removeAdmin: string | null;
}

/** What an admin may not do to their own account. */
export function selfLocks(user: Pick<User, "id">, myId: number | undefined): SelfLocks {
  if (user.id !== myId) return { deactivate: null, removeAdmin: null };
  return {
    deactivate: "You cannot deactivate yourself.",
    removeAdmin: "You cannot remove your own admin flag.",
  };
}

/** Users whose username, name or email contains the query (case-insensitive), by username. */
export function filterUsers(users: readonly User[], query: string): User[] {
  const q = query.trim().toLowerCase();
  const matching = q === "" ? [...users] : users.filter((u) =>
    [u.username, u.first_name, u.last_name, u.email].some((text) => text.toLowerCase().includes(q)));
  return matching.sort((a, b) => a.username.localeCompare(b.username));
}

/** "now", "in 42 s", "in 3 min": when a limited address may try again (Retry-After seconds). */
export function waitText(seconds: number): string {
  if (seconds <= 0) return "now";
  if (seconds < 120) return `in ${seconds} s`;
  return `in ${Math.ceil(seconds / 60)} min`;
}
