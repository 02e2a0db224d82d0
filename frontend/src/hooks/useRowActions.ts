// What a list page's row buttons open (a confirmation, a password dialog, ...) and the writes they run:
// one dialog at a time, the last write's error kept until the next starts, the list read again after.
import { useState } from "react";

export interface RowActions<Open> {
  open: Open | null;
  /** Opens a dialog, clearing the error the last one left. */
  show: (next: Open) => void;
  close: () => void;
  /** The last write's failure, to show in its dialog or above the list. */
  error: unknown;
  /** Runs a write: on success the dialog closes and it answers true; on failure the error is kept.
   * The list is read again either way (a refused write may mean the row changed). */
  run: (write: () => Promise<unknown>) => Promise<boolean>;
}

export function useRowActions<Open>(reload: () => void): RowActions<Open> {
  const [open, setOpen] = useState<Open | null>(null);
  const [error, setError] = useState<unknown>(null);
  return {
    open,
    error,
    show: (next) => {
      setError(null);
      setOpen(next);
    },
    close: () => setOpen(null),
    run: async (write) => {
      setError(null);
      try {
        await write();
        setOpen(null);
        return true;
      } catch (err) {
        setError(err);
        return false;
      } finally {
        reload();
      }
    },
  };
}
