// A modal on the native <dialog>: focus trapping, Escape and the backdrop come from the browser.
import { useEffect, useId, useRef, type ReactNode } from "react";

interface DialogProps {
  title: string;
  onClose: () => void;
  children: ReactNode;
  className?: string;
}

export function Dialog({ title, onClose, children, className }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog ref={ref} className={`editor-dialog ${className ?? ""}`} aria-labelledby={titleId}
      onClose={onClose} onCancel={(e) => { e.preventDefault(); onClose(); }}>
      <header className="editor-dialog-header">
        <h2 id={titleId}>{title}</h2>
        <button type="button" className="icon-button" aria-label="Close" onClick={onClose}>×</button>
      </header>
      {children}
    </dialog>
  );
}
