// A modal on the native <dialog>: focus trapping, Escape and the backdrop come from the browser.
import { useEffect, useRef, type ReactNode } from "react";

interface DialogProps {
  title: string;
  onClose: () => void;
  children: ReactNode;
  className?: string;
}

export function Dialog({ title, onClose, children, className }: DialogProps) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (dialog && !dialog.open) dialog.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog ref={ref} className={`editor-dialog ${className ?? ""}`} aria-label={title}
      onClose={onClose} onCancel={(e) => { e.preventDefault(); onClose(); }}>
      <header className="editor-dialog-header">
        <h2>{title}</h2>
        <button type="button" className="icon-button" aria-label="Close" onClick={onClose}>×</button>
      </header>
      {children}
    </dialog>
  );
}
