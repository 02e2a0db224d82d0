import { useCallback, useEffect, useState, type DependencyList } from "react";

export interface AsyncState<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

interface Settled<T> {
  /** The deps (and reload count) this answer is for. */
  key: readonly unknown[];
  data: T | undefined;
  error: unknown;
}

function sameKey(a: readonly unknown[], b: readonly unknown[]): boolean {
  return a.length === b.length && a.every((value, i) => Object.is(value, b[i]));
}

/** Load data when deps change; stale answers (from older deps) are dropped. While a new load runs,
 * the previous answer's data and error stay. */
export function useAsync<T>(load: () => Promise<T>, deps: DependencyList): AsyncState<T> {
  const [version, setVersion] = useState(0);
  const key = [...deps, version];
  const [settled, setSettled] = useState<Settled<T> | null>(null);

  useEffect(() => {
    let current = true;
    load().then(
      (value) => current && setSettled({ key, data: value, error: null }),
      (err: unknown) => current && setSettled((old) => ({ key, data: old?.data, error: err })),
    );
    return () => {
      current = false;
    };
    // The caller's deps (and the reload count) are the effect's deps, as with useMemo; `key` is made of them.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, version]);

  const reload = useCallback(() => setVersion((v) => v + 1), []);
  const loading = settled === null || !sameKey(settled.key, key);
  return { data: settled?.data, error: settled?.error ?? null, loading, reload };
}
