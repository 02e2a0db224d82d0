import { useLayoutEffect, useRef, type RefObject } from "react";

/** A ref holding the latest committed value, for callbacks that run later (events, timers, streams)
 * and must not be re-created when the value changes. Read it in those callbacks, never during render. */
export function useLatest<T>(value: T): Readonly<RefObject<T>> {
  const ref = useRef(value);
  useLayoutEffect(() => {
    ref.current = value;
  });
  return ref;
}
