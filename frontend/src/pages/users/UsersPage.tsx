// Users, for admins (/api/v1/user/; the server refuses everyone else): create, deactivate and reactivate,
// reset a password, the admin flag, see and clear sign-in limits. Generated passwords are shown once; typed
// ones never shown back.
import { useState, type ReactNode } from "react";
import { api } from "../../api/client";
import { ConfirmDialog } from "../../components/Dialog";
import { ResourceTable, type Column } from "../../components/ResourceTable";
import { ErrorBanner, formatTime, PageHeader } from "../../components/ui";
import { useResourceList } from "../../hooks/useResourceList";
import { useRowActions } from "../../hooks/useRowActions";
import { useSession } from "../../session";
import type { User, UserUpdateBody } from "../../types";
import { LoginLimitsDialog } from "./LoginLimitsDialog";
import { displayName, filterUsers, selfLocks } from "./logic";
import { NewUserDialog } from "./NewUserDialog";
import { PasswordDialog } from "./PasswordDialog";
import "./users.css";

const LIMITED_TITLE = "An address waits before its next sign-in attempt (failed passwords), or new addresses are held back";

type Open =
  | { kind: "new" }
  | { kind: "password"; user: User }
  | { kind: "active"; user: User }
  | { kind: "admin"; user: User }
  | { kind: "limits"; user: User };

export default function UsersPage() {
  const { me, refresh } = useSession();
  const users = useResourceList<User>("user", { order: "id" });
  const [query, setQuery] = useState("");
  const rowActions = useRowActions<Open>(users.reload);
  const { open, show, close } = rowActions;
  const [notice, setNotice] = useState<ReactNode>(null);

  const update = async (user: User, body: UserUpdateBody, text: ReactNode) => {
    if (!(await rowActions.run(() => api<User>(`/api/v1/user/${user.id}`, { method: "PUT", body })))) return;
    setNotice(text);
    if (user.id === me?.id) await refresh();
  };

  const columns: Column<User>[] = [
    {
      header: "User", cell: (u) => (
        <>
          <strong>{u.username}</strong>
          {u.id === me?.id && <span className="muted"> (you)</span>}
        </>
      ),
    },
    { header: "Name", cell: displayName },
    { header: "Email", className: "email", cell: (u) => u.email },
    { header: "Role", cell: (u) => (u.is_admin ? <span className="state badge-admin">admin</span> : "user") },
    {
      header: "Status", cell: (u) => (
        <>
          {u.active ? <span className="state state-succeeded">active</span>
            : <span className="state state-cancelled">deactivated</span>}
          {u.sign_in_limited && <span className="state state-failed" title={LIMITED_TITLE}>sign-in limited</span>}
        </>
      ),
    },
    { header: "Last sign-in", className: "muted", cell: (u) => formatTime(u.last_login) },
    { header: "Actions", hiddenHeader: true, className: "row-actions", cell: (u) => rowButtons(u) },
  ];

  function rowButtons(u: User) {
    const locks = selfLocks(u, me?.id);
    const lockId = `user-${u.id}-locks`;
    return (
      <>
        {(locks.deactivate || locks.removeAdmin) && (
          <span id={lockId} className="visually-hidden">{locks.deactivate} {locks.removeAdmin}</span>
        )}
        <button type="button" aria-label={`Sign-in limits of ${u.username}`}
          onClick={() => show({ kind: "limits", user: u })}>
          Sign-in
        </button>
        <button type="button" aria-label={`Reset the password of ${u.username}`}
          onClick={() => show({ kind: "password", user: u })}>
          Password
        </button>
        <button type="button" aria-label={`${u.is_admin ? "Remove admin" : "Make admin"}: ${u.username}`}
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
      </>
    );
  }

  return (
    <section className="users-page" aria-labelledby="users-title">
      <PageHeader title={<span id="users-title">Users</span>}>
        <input type="search" aria-label="Search users" placeholder="Search by name or email" value={query}
          onChange={(e) => setQuery(e.target.value)} />
        <button type="button" className="primary" onClick={() => show({ kind: "new" })}>New user</button>
      </PageHeader>
      {notice && <p className="notice" role="status">{notice}</p>}
      <ResourceTable list={{ ...users, rows: users.rows && filterUsers(users.rows, query) }} columns={columns}
        rowKey={(u) => u.id} className="user-table"
        rowAttributes={(u) => ({ "data-user": u.username, className: u.active ? undefined : "inactive" })}
        loadingText="Loading users" empty={<>No user matches “{query}”.</>} />
      {open?.kind === "new" && (
        <NewUserDialog onClose={close} onCreated={(user) => {
          setNotice(<>Created <strong>{user.username}</strong>.</>);
          users.reload();
        }} />
      )}
      {open?.kind === "password" && (
        <PasswordDialog user={open.user} onClose={close}
          onDone={() => setNotice(<>Changed the password of <strong>{open.user.username}</strong>.</>)} />
      )}
      {open?.kind === "limits" && (
        <LoginLimitsDialog user={open.user} onClose={close} onCleared={() => {
          setNotice(<>Cleared the sign-in limits of <strong>{open.user.username}</strong>.</>);
          users.reload();
        }} />
      )}
      {open?.kind === "active" && (
        <ConfirmDialog title={`${open.user.active ? "Deactivate" : "Reactivate"} ${open.user.username}?`}
          confirmLabel={open.user.active ? "Deactivate" : "Reactivate"} onClose={close}
          error={<ErrorBanner error={rowActions.error} />}
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
          confirmLabel={open.user.is_admin ? "Remove admin" : "Make admin"} onClose={close}
          error={<ErrorBanner error={rowActions.error} />}
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
