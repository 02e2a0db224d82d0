// Modal dialogs on the native <dialog>: the browser traps focus, Escape closes, the page behind is inert.
// The one dialog of the app: pipeline list, editor and admin pages use it.
import { useEffect, useId, useRef, useState, type ReactNode } from "react";
import "./dialog.css";

interface DialogProps {
  title: ReactNode;
  /** Called on Escape or Cancel; the parent unmounts the dialog. */
  onClose: () => void;
  children: ReactNode;
  wide?: boolean;
  className?: string;
}

export function Dialog({ title, onClose, children, wide, className }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  // Where focus was before opening, to give it back when the dialog goes away.
  const [opener] = useState(() => document.activeElement as HTMLElement | null);

  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);
  useEffect(() => () => {
    if (opener?.isConnected) opener.focus();
  }, [opener]);

  return (
    <dialog ref={ref} className={["dialog", wide ? "wide" : "", className ?? ""].filter(Boolean).join(" ")}
      aria-labelledby={titleId} onCancel={(e) => { e.preventDefault(); onClose(); }}>
      <header className="dialog-header">
        <h2 id={titleId}>{title}</h2>
        <button type="button" className="dialog-close" aria-label="Close" onClick={onClose}>×</button>
      </header>
      {children}
    </dialog>
  );
}

interface SubmitActionsProps {
  onCancel: () => void;
  busy: boolean;
  label: string;
  busyLabel: string;
  disabled?: boolean;
}

/** A form dialog's last row: Cancel, and the submit button that says when it is working. */
export function SubmitActions({ onCancel, busy, label, busyLabel, disabled }: SubmitActionsProps) {
  return (
    <div className="dialog-actions">
      <button type="button" onClick={onCancel}>Cancel</button>
      <button type="submit" className="primary" disabled={busy || disabled}>{busy ? busyLabel : label}</button>
    </div>
  );
}

interface ConfirmProps {
  title: string;
  children: ReactNode;
  confirmLabel: string;
  onConfirm: () => Promise<void>;
  onClose: () => void;
  /** Shown under the text when the action fails (e.g. a 409 "still has resource groups"). */
  error?: ReactNode;
}

/** "Are you sure?" for destructive actions; Cancel has focus first so Enter does not destroy. */
export function ConfirmDialog({ title, children, confirmLabel, onConfirm, onClose, error }: ConfirmProps) {
  const [busy, setBusy] = useState(false);
  const confirm = async () => {
    setBusy(true);
    try {
      await onConfirm();
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={title} onClose={onClose}>
      <div>{children}</div>
      {error}
      <div className="dialog-actions">
        <button type="button" onClick={onClose}>Cancel</button>
        <button type="button" className="primary danger-fill" disabled={busy} onClick={() => void confirm()}>
          {busy ? "Working…" : confirmLabel}
        </button>
      </div>
    </Dialog>
  );
}
