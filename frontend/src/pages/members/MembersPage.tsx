// The selected project's members and their roles (/api/v1/project/{id}/members): owners and admins add a
// user by username, change roles and remove members; viewers and developers see the list read-only, with
// the reason. The server decides (a project keeps its last owner: 409 naming `role`, shown on that row).
import { useState, type FormEvent, type ReactNode } from "react";
import { api, ApiError, describeError } from "../../api/client";
import { ConfirmDialog } from "../../components/Dialog";
import { Field, UnplacedError, useSubmit } from "../../components/Field";
import { ResourceTable, type Column } from "../../components/ResourceTable";
import { ErrorBanner, PageHeader } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import { useProject, useSession } from "../../session";
import type { Member, MemberBody, MemberList, MemberRoleBody, ProjectRole } from "../../types";
import { isLastOwner, memberControls, ROLES, sortMembers, usernameProblem } from "./logic";
import "./members.css";

export default function MembersPage() {
  const project = useProject();
  // Another project starts from a clean page (form, errors, dialogs).
  return <MemberTable key={project.id} projectId={project.id} projectName={project.name} role={project.role} />;
}

/** Ids joined for aria-describedby, skipping the absent ones. */
function ids(...parts: (string | undefined | null | false)[]): string | undefined {
  const joined = parts.filter(Boolean).join(" ");
  return joined || undefined;
}

const READONLY_NOTE = "members-readonly-reason";

function withoutKey<T>(record: Record<number, T>, key: number): Record<number, T> {
  const copy = { ...record };
  delete copy[key];
  return copy;
}

function MemberTable({ projectId, projectName, role }: { projectId: number; projectName: string; role: ProjectRole }) {
  const { me, refresh } = useSession();
  const { canManage, reason } = memberControls(role, me?.is_admin ?? false);
  const url = `/api/v1/project/${projectId}/members`;
  const { data, error, loading, reload } = useAsync(() => api<MemberList>(url), [url]);
  const [pending, setPending] = useState<{ id: number; role: ProjectRole } | null>(null);
  const [rowErrors, setRowErrors] = useState<Record<number, unknown>>({});
  const [removing, setRemoving] = useState<Member | null>(null);
  const [removeError, setRemoveError] = useState<unknown>(null);
  const [notice, setNotice] = useState<ReactNode>(null);
  const members = data ? sortMembers(data.items) : undefined;

  /** After a change to the signed-in user's own membership their role (or project) changes too. */
  const changed = async (member: Member, text: ReactNode) => {
    setNotice(text);
    setRowErrors({});  // a new state: earlier refusals are history
    reload();
    if (member.user_id === me?.id) await refresh();
  };

  const changeRole = async (member: Member, next: ProjectRole) => {
    setPending({ id: member.id, role: next });
    setRowErrors((errors) => withoutKey(errors, member.id));
    setNotice(null);
    try {
      await api(`${url}/${member.id}`, { method: "PUT", body: { role: next } satisfies MemberRoleBody });
      await changed(member, <><strong>{member.username}</strong> is now {next}.</>);
    } catch (err) {
      setRowErrors((errors) => ({ ...errors, [member.id]: err }));
    } finally {
      setPending(null);
    }
  };

  const remove = async (member: Member) => {
    setRemoveError(null);
    try {
      await api(`${url}/${member.id}`, { method: "DELETE" });
      setRemoving(null);
      await changed(member, <>Removed <strong>{member.username}</strong> from {projectName}.</>);
    } catch (err) {
      setRemoveError(err);
    }
  };

  const columns: Column<Member>[] = [
    {
      header: "User", cell: (m) => (
        <>
          <strong>{m.username}</strong>
          {m.user_id === me?.id && <span className="muted"> (you)</span>}
        </>
      ),
    },
    { header: "Role", cell: (m) => roleCell(m) },
    {
      header: "Actions", hiddenHeader: true, className: "row-actions", cell: (m) => (
        <button type="button" className="danger" aria-label={`Remove ${m.username}`}
          disabled={!canManage} title={reason ?? undefined}
          aria-describedby={ids(!canManage && READONLY_NOTE)}
          onClick={() => { setRemoveError(null); setRemoving(m); }}>
          Remove
        </button>
      ),
    },
  ];

  function roleCell(m: Member) {
    const rowError = rowErrors[m.id];
    const errorId = `member-${m.id}-error`;
    const hintId = `member-${m.id}-hint`;
    const lastOwner = isLastOwner(m, members ?? []);
    const busy = pending?.id === m.id;
    return (
      <>
        <div className="role-cell">
          <select aria-label={`Role of ${m.username}`} value={pending && busy ? pending.role : m.role}
            disabled={!canManage || busy} title={reason ?? undefined}
            aria-invalid={Boolean(rowError)}
            aria-describedby={ids(rowError ? errorId : null, lastOwner && hintId, !canManage && READONLY_NOTE)}
            onChange={(e) => void changeRole(m, e.target.value as ProjectRole)}>
            {ROLES.map((r) => <option key={r.role} value={r.role}>{r.label}</option>)}
          </select>
          {lastOwner && <span id={hintId} className="hint">the last owner</span>}
        </div>
        {rowError !== undefined && (
          <span id={errorId} className="field-error" role="alert">
            {rowError instanceof ApiError ? rowError.reasonFor("role") ?? describeError(rowError)
              : describeError(rowError)}
          </span>
        )}
      </>
    );
  }

  return (
    <section className="members-page" aria-labelledby="members-title">
      <PageHeader title={<span id="members-title">Members <span className="muted">of {projectName}</span></span>} />
      {reason && <p className="notice readonly" id={READONLY_NOTE}>{reason}</p>}
      {notice && <p className="notice" role="status">{notice}</p>}
      <AddMember url={url} canManage={canManage} reason={reason}
        onAdded={(member) => void changed(member, <>Added <strong>{member.username}</strong> as {member.role}.</>)} />
      <ResourceTable list={{ rows: members, error, loading }} columns={columns} rowKey={(m) => m.id}
        className="member-table" rowAttributes={(m) => ({ "data-member": m.username })}
        loadingText="Loading members" empty={<>No members in {projectName}.</>} />
      <dl className="role-legend">
        {ROLES.map((r) => (
          <div key={r.role}><dt>{r.label}</dt><dd>{r.can}</dd></div>
        ))}
      </dl>
      {removing && (
        <ConfirmDialog title={`Remove ${removing.username}?`} confirmLabel="Remove member"
          onClose={() => setRemoving(null)} onConfirm={() => remove(removing)}
          error={<ErrorBanner error={removeError} />}>
          <p>
            <strong>{removing.username}</strong> loses their {removing.role} access to {projectName} at once.
            {removing.user_id === me?.id && " That is you: you will no longer see this project."}
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}

const ADD_FIELDS = ["username", "role"];

function AddMember({ url, canManage, reason, onAdded }: {
  url: string; canManage: boolean; reason: string | null; onAdded: (member: Member) => void;
}) {
  const [username, setUsername] = useState("");
  const [role, setRole] = useState<ProjectRole>("viewer");
  const [checked, setChecked] = useState(false);
  const { busy, error, run, reasonFor } = useSubmit();
  const problem = usernameProblem(username);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setChecked(true);
    if (problem) return;
    void run(async () => {
      const member = await api<Member>(url, {
        method: "POST", body: { username: username.trim(), role } satisfies MemberBody });
      setUsername("");
      setChecked(false);
      onAdded(member);
    });
  };

  return (
    <form className="panel add-member" aria-label="Add a member" onSubmit={submit} noValidate>
      <Field label="Username" error={(checked ? problem : null) ?? reasonFor("username")}>
        {(w) => <input {...w} name="username" autoComplete="off" spellCheck={false} value={username}
          disabled={!canManage} title={reason ?? undefined}
          aria-describedby={ids(w["aria-describedby"], !canManage && READONLY_NOTE)}
          onChange={(e) => setUsername(e.target.value)} />}
      </Field>
      <Field label="Role" error={reasonFor("role")}>
        {(w) => (
          <select {...w} name="role" value={role} disabled={!canManage} title={reason ?? undefined}
            aria-describedby={ids(w["aria-describedby"], !canManage && READONLY_NOTE)}
            onChange={(e) => setRole(e.target.value as ProjectRole)}>
            {ROLES.map((r) => <option key={r.role} value={r.role}>{r.label}</option>)}
          </select>
        )}
      </Field>
      <button type="submit" className="primary" disabled={!canManage || busy} title={reason ?? undefined}>
        {busy ? "Adding…" : "Add member"}
      </button>
      <div className="add-member-error"><UnplacedError error={error} fields={ADD_FIELDS} /></div>
    </form>
  );
}
