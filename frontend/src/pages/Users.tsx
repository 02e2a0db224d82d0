// Users, for admins (/api/v1/user/; the server refuses everyone else): create, deactivate and reactivate,
// reset a password, the admin flag. Generated passwords are shown once; typed ones never shown back.
import { useState, type ReactNode } from "react";
import { api, listAll } from "../api";
import { ConfirmDialog } from "../components/Dialog";
import { ErrorBanner, formatTime, Loading, PageHeader } from "../components/ui";
import { useAsync } from "../lib/useAsync";
import { useSession } from "../session";
import type { User, UserUpdateBody } from "../types";
import { displayName, filterUsers, selfLocks } from "./users/logic";
import { NewUserDialog } from "./users/NewUserDialog";
import { PasswordDialog } from "./users/PasswordDialog";
import "./users/users.css";

type Open =
  | { kind: "new" }
  | { kind: "password"; user: User }
  | { kind: "active"; user: User }
  | { kind: "admin"; user: User }
  | null;

export default function UsersPage() {
  const { me, refresh } = useSession();
  const { data, error, loading, reload } = useAsync(() => listAll<User>("user", { order: "id" }), []);
  const [query, setQuery] = useState("");
  const [open, setOpen] = useState<Open>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const [notice, setNotice] = useState<ReactNode>(null);
  const users = data ? filterUsers(data, query) : null;

  const show = (next: Open) => {
    setActionError(null);
    setOpen(next);
  };
  const update = async (user: User, body: UserUpdateBody, text: ReactNode) => {
    setActionError(null);
    try {
      await api<User>(`/api/v1/user/${user.id}`, { method: "PUT", body });
      setOpen(null);
      setNotice(text);
      reload();
      if (user.id === me?.id) await refresh();
    } catch (err) {
      setActionError(err);
    }
  };

  return (
    <section className="users-page" aria-labelledby="users-title">
      <PageHeader title={<span id="users-title">Users</span>}>
        <input type="search" aria-label="Search users" placeholder="Search by name or email" value={query}
          onChange={(e) => setQuery(e.target.value)} />
        <button type="button" className="primary" onClick={() => show({ kind: "new" })}>New user</button>
      </PageHeader>
      {notice && <p className="notice" role="status">{notice}</p>}
      <ErrorBanner error={error} />
      {!users ? (loading && <Loading what="Loading users" />) : users.length === 0 ? (
        <div className="panel muted">No user matches “{query}”.</div>
      ) : (
        <table className="data user-table">
          <thead>
            <tr>
              <th scope="col">User</th>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              <th scope="col">Last sign-in</th>
              <th scope="col"><span className="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {users.map((u) => {
              const locks = selfLocks(u, me?.id);
              const lockId = `user-${u.id}-locks`;
              return (
                <tr key={u.id} data-user={u.username} className={u.active ? undefined : "inactive"}>
                  <td>
                    <strong>{u.username}</strong>
                    {u.id === me?.id && <span className="muted"> (you)</span>}
                  </td>
                  <td>{displayName(u)}</td>
                  <td className="email">{u.email}</td>
                  <td>{u.is_admin ? <span className="state badge-admin">admin</span> : "user"}</td>
                  <td>
                    {u.active ? <span className="state state-succeeded">active</span>
                      : <span className="state state-cancelled">deactivated</span>}
                  </td>
                  <td className="muted">{formatTime(u.last_login)}</td>
                  <td className="row-actions">
                    {(locks.deactivate || locks.removeAdmin) && (
                      <span id={lockId} className="visually-hidden">{locks.deactivate} {locks.removeAdmin}</span>
                    )}
                    <button type="button" aria-label={`Reset the password of ${u.username}`}
                      onClick={() => show({ kind: "password", user: u })}>
                      Password
                    </button>
                    <button type="button" aria-label={u.is_admin ? `Remove the admin flag of ${u.username}` : `Make ${u.username} an admin`}
                      disabled={u.is_admin && Boolean(locks.removeAdmin)}
                      title={u.is_admin ? locks.removeAdmin ?? undefined : undefined}
                      aria-describedby={u.is_admin && locks.removeAdmin ? lockId : undefined}
                      onClick={() => show({ kind: "admin", user: u })}>
                      {u.is_admin ? "Remove admin" : "Make admin"}
                    </button>
                    <button type="button" className={u.active ? "danger" : undefined}
                      aria-label={`${u.active ? "Deactivate" : "Reactivate"} ${u.username}`}
                      disabled={u.active && Boolean(locks.deactivate)}
                      title={u.active ? locks.deactivate ?? undefined : undefined}
                      aria-describedby={u.active && locks.deactivate ? lockId : undefined}
                      onClick={() => show({ kind: "active", user: u })}>
                      {u.active ? "Deactivate" : "Reactivate"}
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {open?.kind === "new" && (
        <NewUserDialog onClose={() => setOpen(null)} onCreated={(user) => {
          setNotice(<>Created <strong>{user.username}</strong>.</>);
          reload();
        }} />
      )}
      {open?.kind === "password" && (
        <PasswordDialog user={open.user} onClose={() => setOpen(null)}
          onDone={() => setNotice(<>Changed the password of <strong>{open.user.username}</strong>.</>)} />
      )}
      {open?.kind === "active" && (
        <ConfirmDialog title={`${open.user.active ? "Deactivate" : "Reactivate"} ${open.user.username}?`}
          confirmLabel={open.user.active ? "Deactivate" : "Reactivate"} onClose={() => setOpen(null)}
          error={<ErrorBanner error={actionError} />}
          onConfirm={() => update(open.user, { active: !open.user.active },
            <><strong>{open.user.username}</strong> is {open.user.active ? "deactivated" : "active again"}.</>)}>
          {open.user.active
            ? <p><strong>{open.user.username}</strong> is signed out at once and cannot sign in, nor use their API
              tokens, until reactivated. Their project memberships stay.</p>
            : <p><strong>{open.user.username}</strong> can sign in again, with their current password.</p>}
        </ConfirmDialog>
      )}
      {open?.kind === "admin" && (
        <ConfirmDialog
          title={open.user.is_admin ? `Remove the admin flag of ${open.user.username}?` : `Make ${open.user.username} an admin?`}
          confirmLabel={open.user.is_admin ? "Remove admin" : "Make admin"} onClose={() => setOpen(null)}
          error={<ErrorBanner error={actionError} />}
          onConfirm={() => update(open.user, { is_admin: !open.user.is_admin },
            <><strong>{open.user.username}</strong> is {open.user.is_admin ? "no longer an admin" : "an admin"}.</>)}>
          {open.user.is_admin
            ? <p><strong>{open.user.username}</strong> keeps their projects but no longer manages clusters, quotas,
              users or projects they are not a member of.</p>
            : <p>Administrators see and manage every project, clusters, quotas and users.</p>}
        </ConfirmDialog>
      )}
    </section>
  );
}
