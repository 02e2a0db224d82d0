// Modal dialogs on the native <dialog>: the browser traps focus, Escape closes, the page behind is inert.
// Shared with the admin pages (they load later, so this stays in the first bundle either way).
import { useEffect, useId, useRef, useState, type ReactNode } from "react";
import "./dialog.css";

interface DialogProps {
  title: ReactNode;
  /** Called on Escape or Cancel; the parent unmounts the dialog. */
  onClose: () => void;
  children: ReactNode;
  wide?: boolean;
}

export function Dialog({ title, onClose, children, wide }: DialogProps) {
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
    <dialog ref={ref} className={wide ? "dialog wide" : "dialog"} aria-labelledby={titleId}
      onCancel={(e) => { e.preventDefault(); onClose(); }}>
      <h2 id={titleId}>{title}</h2>
      {children}
    </dialog>
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
