// A user's sign-in limits (admins; myapp/login_limits.py): the addresses waiting after failed passwords,
// the attempts left from new addresses, the addresses they signed in from (never limited by the latter).
// Clearing lets every address try again now; known addresses stay.
import { useState } from "react";
import { api } from "../../api/client";
import { Dialog } from "../../components/Dialog";
import { ErrorBanner, formatTime, Loading } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import type { LoginLimits, User } from "../../types";
import { waitText } from "./logic";

export function LoginLimitsDialog({ user, onClose, onCleared }: {
  user: User; onClose: () => void; onCleared: () => void;
}) {
  const url = `/api/v1/user/${user.id}/login_limits`;
  const loaded = useAsync(() => api<LoginLimits>(url), [url]);
  const [cleared, setCleared] = useState<LoginLimits | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const limits = cleared ?? loaded.data;

  const clear = async () => {
    setBusy(true);
    setError(null);
    try {
      setCleared(await api<LoginLimits>(url, { method: "DELETE" }));
      onCleared();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog title={`Sign-in limits of ${user.username}`} onClose={onClose} wide>
      <ErrorBanner error={loaded.error} />
      {!limits ? <Loading what="Loading sign-in limits" /> : (
        <div className="login-limits">
          <h3>Addresses after failed passwords</h3>
          {limits.addresses.length === 0 ? <p className="muted">None.</p> : (
            <table aria-label="Addresses after failed passwords">
              <thead><tr><th>Address</th><th>Failures in a row</th><th>May try again</th></tr></thead>
              <tbody>
                {limits.addresses.map((a) => (
                  <tr key={a.address}><td><code>{a.address}</code></td><td>{a.failures}</td><td>{waitText(a.retry_after)}</td></tr>
                ))}
              </tbody>
            </table>
          )}
          <h3>New addresses</h3>
          <p>
            {limits.new_addresses.attempts_left} attempts left from addresses {user.username} never signed in
            from; {waitText(limits.new_addresses.retry_after) === "now" ? "the next one may come now"
              : `the next one ${waitText(limits.new_addresses.retry_after)}`}.
          </p>
          <h3>Known addresses</h3>
          {limits.known_addresses.length === 0 ? <p className="muted">None: no sign-in within the period kept.</p> : (
            <table aria-label="Known addresses">
              <thead><tr><th>Address</th><th>Last sign-in</th><th>Known until</th></tr></thead>
              <tbody>
                {limits.known_addresses.map((k) => (
                  <tr key={k.address}>
                    <td><code>{k.address}</code></td><td>{formatTime(k.last_login_at)}</td><td>{formatTime(k.expires_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <p className="muted">Known addresses are never held back by the limit on new ones. Wrong passwords never
            sign {user.username} out.</p>
          {cleared && <p className="notice" role="status">Cleared: every address may try again now.</p>}
        </div>
      )}
      <ErrorBanner error={error} />
      <div className="dialog-actions">
        <button type="button" onClick={onClose}>Close</button>
        <button type="button" className="primary" disabled={busy || !limits}
          onClick={() => void clear()}>
          {busy ? "Clearing…" : "Clear limits"}
        </button>
      </div>
    </Dialog>
  );
}
