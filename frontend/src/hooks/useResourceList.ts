// One list endpoint (/api/v1/<resource>/) as the rows a page shows: read when its filters change, again
// on a schedule while rows are in a transitional state (`polling.ts`), a page at a time or every row.
// The state lives in a `ListStore`, one per resource and filters: other filters start from page 1.
import { useMemo, useSyncExternalStore } from "react";
import { list, listAll } from "../api/client";
import { ListStore, type ListSnapshot } from "./listStore";
import { pageCount, type PollPolicy } from "./polling";

type Params = Record<string, string | number | boolean | undefined>;

export interface ListOptions<T> {
  /** Rows per page, paged by the server; absent: every row (`listAll`), for small sets. */
  pageSize?: number;
  /** Module-level constant (it is read when the filters change, not on every render). */
  poll?: PollPolicy<T>;
}

export interface ResourceList<T> extends ListSnapshot<T> {
  reload: () => void;
  pages: number;
  setPage: (page: number) => void;
}

export function useResourceList<T>(resource: string, params: Params, options: ListOptions<T> = {}): ResourceList<T> {
  const { pageSize, poll } = options;
  const filters = JSON.stringify([resource, params, pageSize ?? null]);
  const store = useMemo(() => new ListStore<T>(async (page) => {
    if (pageSize === undefined) {
      const rows = await listAll<T>(resource, params);
      return { rows, count: rows.length };
    }
    const answer = await list<T>(resource, { ...params, page, page_size: pageSize });
    return { rows: answer.items, count: answer.count };
  }, poll),
  // `filters` stands for resource, params and pageSize, compared by value.
  // eslint-disable-next-line react-hooks/exhaustive-deps
  [filters]);
  const snapshot = useSyncExternalStore(store.subscribe, store.getSnapshot);
  return {
    ...snapshot,
    reload: store.reload,
    pages: pageSize === undefined ? 1 : pageCount(snapshot.count, pageSize),
    setPage: store.setPage,
  };
}
