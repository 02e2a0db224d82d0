// One admin resource: its table, a create/edit dialog, and delete behind a confirmation.
import { useState, type ReactNode } from "react";
import { api, listAll } from "../../api/client";
import { ErrorBanner, Loading } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import { ConfirmDialog } from "../../components/Dialog";

export interface Column<T> {
  header: string;
  cell: (item: T) => ReactNode;
}

export interface FormProps<T> {
  /** The row being edited, or null to create one. */
  item: T | null;
  onClose: () => void;
  onSaved: () => void;
}

interface Props<T extends { id: number }> {
  resource: string;
  /** "cluster", "resource group": used in buttons and titles. */
  noun: string;
  columns: Column<T>[];
  rowName: (item: T) => string;
  renderForm: (props: FormProps<T>) => ReactNode;
  empty: ReactNode;
  /** What else goes when a row is deleted, said in the confirmation. */
  deleteNote?: string;
  /** Set when the data the table or the form needs cannot be created yet (e.g. no cluster). */
  createBlocked?: ReactNode;
}

export function ResourceTab<T extends { id: number }>(props: Props<T>) {
  const { resource, noun, columns, rowName, renderForm, empty, deleteNote, createBlocked } = props;
  const { data, error, loading, reload } = useAsync(() => listAll<T>(resource, { order: "id" }), [resource]);
  const [editing, setEditing] = useState<T | null | undefined>(undefined);
  const [deleting, setDeleting] = useState<T | null>(null);
  const [deleteError, setDeleteError] = useState<unknown>(null);

  const closeDelete = () => {
    setDeleting(null);
    setDeleteError(null);
  };
  const remove = async (item: T) => {
    setDeleteError(null);
    try {
      await api(`/api/v1/${resource}/${item.id}`, { method: "DELETE" });
      closeDelete();
      reload();
    } catch (err) {
      setDeleteError(err);
    }
  };

  return (
    <div className="resource-tab">
      <div className="tab-actions">
        {createBlocked ?? (
          <button type="button" className="primary" onClick={() => setEditing(null)}>New {noun}</button>
        )}
      </div>
      <ErrorBanner error={error} />
      {!data ? (loading && <Loading />) : data.length === 0 ? <div className="panel muted">{empty}</div> : (
        <table className="data">
          <thead>
            <tr>
              {columns.map((c) => <th key={c.header} scope="col">{c.header}</th>)}
              <th scope="col"><span className="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {data.map((item) => (
              <tr key={item.id} data-row={rowName(item)}>
                {columns.map((c) => <td key={c.header}>{c.cell(item)}</td>)}
                <td className="row-actions">
                  <button type="button" aria-label={`Edit ${noun} ${rowName(item)}`} onClick={() => setEditing(item)}>
                    Edit
                  </button>
                  <button type="button" className="danger" aria-label={`Delete ${noun} ${rowName(item)}`}
                    onClick={() => setDeleting(item)}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {editing !== undefined && (
        renderForm({ item: editing, onClose: () => setEditing(undefined),
          onSaved: () => { setEditing(undefined); reload(); } })
      )}
      {deleting && (
        <ConfirmDialog title={`Delete ${noun} ${rowName(deleting)}?`} confirmLabel={`Delete ${noun}`}
          onClose={closeDelete} onConfirm={() => remove(deleting)} error={<ErrorBanner error={deleteError} />}>
          <p>This deletes the {noun} <strong>{rowName(deleting)}</strong>.{deleteNote && ` ${deleteNote}`}</p>
        </ConfirmDialog>
      )}
    </div>
  );
}

/** Trimmed text, or null when blank (the API's way of saying "not set"). */
export function orNull(text: string): string | null {
  return text.trim() === "" ? null : text.trim();
}
