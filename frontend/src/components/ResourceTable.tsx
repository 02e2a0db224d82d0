// A list page's table: loading, the read's error, the empty state, the rows by columns, and the pager
// of a server-paged list (`hooks/useResourceList.ts` gives everything it shows).
import type { HTMLAttributes, ReactNode } from "react";
import type { ResourceList } from "../hooks/useResourceList";
import { ErrorBanner, Loading } from "./ui";
import "./resourceTable.css";

export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
  /** The cells' class. */
  className?: string;
  /** For screen readers only (an actions column, a check box column). */
  hiddenHeader?: boolean;
}

/** A row's attributes: the data-* the tests and styles find it by, a class, aria-selected. */
export type RowAttributes = HTMLAttributes<HTMLTableRowElement> & { [data: `data-${string}`]: string | number | undefined };

export type TableList<T> = Pick<ResourceList<T>, "rows" | "error" | "loading"> &
  Partial<Pick<ResourceList<T>, "page" | "pages" | "setPage" | "count">>;

interface Props<T> {
  /** The list's state; `rows` may be a filtered view of it. */
  list: TableList<T>;
  columns: readonly (Column<T> | false)[];
  rowKey: (row: T) => string | number;
  rowAttributes?: (row: T) => RowAttributes;
  /** The table's class, beside `data`. */
  className: string;
  /** "Loading builds". */
  loadingText: string;
  /** Shown instead of an empty table. */
  empty: ReactNode;
  /** What the rows are, plural, for the pager ("builds"). */
  noun?: string;
}

export function ResourceTable<T>({ list, columns, rowKey, rowAttributes, className, loadingText, empty, noun }: Props<T>) {
  const { rows, error, loading, page = 0, pages = 1, setPage } = list;
  const shown = columns.filter((c): c is Column<T> => c !== false);
  return (
    <>
      <ErrorBanner error={error} />
      {!rows ? (loading && <Loading what={loadingText} />) : rows.length === 0 ? (
        <div className="panel muted list-empty">{empty}</div>
      ) : (
        <table className={`data ${className}`}>
          <thead>
            <tr>
              {shown.map((c) => (
                <th key={c.header} scope="col">
                  {c.hiddenHeader ? <span className="visually-hidden">{c.header}</span> : c.header}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={rowKey(row)} {...rowAttributes?.(row)}>
                {shown.map((c) => <td key={c.header} className={c.className}>{c.cell(row)}</td>)}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {setPage && (pages > 1 || page > 0) && (
        <Pager page={page} pages={pages} setPage={setPage} total={noun && list.count !== undefined ? `${list.count} ${noun}` : undefined} />
      )}
    </>
  );
}

interface PagerProps {
  page: number;
  pages: number;
  setPage: (page: number) => void;
  /** "57 builds". */
  total?: string;
}

/** Previous / "Page 2 of 3" / Next. */
export function Pager({ page, pages, setPage, total }: PagerProps) {
  return (
    <nav className="list-pager" aria-label="Pages">
      <button type="button" disabled={page === 0} onClick={() => setPage(page - 1)}>Previous</button>
      <span>Page {page + 1} of {pages}{total && ` (${total})`}</span>
      <button type="button" disabled={page >= pages - 1} onClick={() => setPage(page + 1)}>Next</button>
    </nav>
  );
}
