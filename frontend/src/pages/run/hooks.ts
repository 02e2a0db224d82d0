// Live data for the run view: server-sent event streams, polling, and a ticking clock.
import { useEffect, useState } from "react";
import { useLatest } from "../../lib/useLatest";

/** live: connected; reconnecting: the server closed the stream (it does every ~30 s) and the browser
 * retries; waiting: the server refused the stream (e.g. 429, too many open streams) and we try again
 * after a backoff; ended: the `end` event came. */
export type StreamStatus = "connecting" | "live" | "reconnecting" | "waiting" | "ended";

type Handlers = Record<string, (data: unknown) => void>;

/** Seconds to wait before reopening a stream the server refused, after `refusals` refusals in a row
 * (the server's Retry-After for a full stream cap is 10 s; EventSource cannot read it). */
export function retryDelaySeconds(refusals: number): number {
  return Math.min(60, 5 * 2 ** Math.max(0, refusals - 1));
}

/** Subscribes to an event stream while `url` is set; `end` closes it so the browser does not reconnect.
 * A stream the server refuses is opened again after a growing delay, never given up. */
export function useEventStream(url: string | null, handlers: Handlers): StreamStatus {
  // The status of the stream of one url: a new url starts out "connecting".
  const [state, setState] = useState<{ url: string | null; status: StreamStatus }>({ url, status: "connecting" });
  const handlersRef = useLatest(handlers);

  useEffect(() => {
    if (!url) return;
    const setStatus = (status: StreamStatus) => setState({ url, status });
    let source: EventSource | null = null;
    let retry: number | undefined;
    let refusals = 0;
    const open = () => {
      const current = new EventSource(url);
      source = current;
      const names = new Set([...Object.keys(handlersRef.current), "end"]);
      for (const name of names) {
        current.addEventListener(name, (event) => {
          const text = (event as MessageEvent<string>).data;
          handlersRef.current[name]?.(text ? JSON.parse(text) : null);
          if (name === "end") {
            current.close();
            setStatus("ended");
          }
        });
      }
      current.onopen = () => {
        refusals = 0;
        setStatus("live");
      };
      // Expected every ~30 s: the browser reconnects by itself, so this is state, not an error to log.
      current.onerror = () => {
        if (current.readyState !== EventSource.CLOSED) {
          setStatus("reconnecting");
          return;
        }
        refusals += 1;
        setStatus("waiting");
        retry = window.setTimeout(open, retryDelaySeconds(refusals) * 1000);
      };
    };
    open();
    return () => {
      window.clearTimeout(retry);
      source?.close();
    };
  }, [url, handlersRef]);

  return state.url === url ? state.status : "connecting";
}

/** Date.now(), refreshed every second while `ticking` (for durations of running things). */
export function useNow(ticking: boolean): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const tick = () => setNow(Date.now());
    // Read the clock at once when ticking starts or stops (a finished run's durations stop here).
    const first = window.setTimeout(tick, 0);
    const timer = ticking ? window.setInterval(tick, 1000) : undefined;
    return () => {
      window.clearTimeout(first);
      window.clearInterval(timer);
    };
  }, [ticking]);
  return now;
}

/** Calls `tick` every `ms` while `active`; the latest `tick` is always used. */
export function useInterval(tick: () => void, ms: number, active: boolean): void {
  const tickRef = useLatest(tick);
  useEffect(() => {
    if (!active) return;
    const timer = window.setInterval(() => tickRef.current(), ms);
    return () => window.clearInterval(timer);
  }, [ms, active, tickRef]);
}

/** `value`, once it has stopped changing for `ms`. */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = window.setTimeout(() => setSettled(value), ms);
    return () => window.clearTimeout(timer);
  }, [value, ms]);
  return settled;
}
