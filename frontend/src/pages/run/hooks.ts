// Live data for the run view: server-sent event streams, polling, and a ticking clock.
import { useEffect, useState } from "react";
import { useLatest } from "../../lib/useLatest";

/** live: connected; reconnecting: the server closed the stream (it does every ~30 s) and the browser
 * retries; ended: the `end` event came; failed: the browser gave up (e.g. the server refused). */
export type StreamStatus = "connecting" | "live" | "reconnecting" | "ended" | "failed";

type Handlers = Record<string, (data: unknown) => void>;

/** Subscribes to an event stream while `url` is set; `end` closes it so the browser does not reconnect. */
export function useEventStream(url: string | null, handlers: Handlers): StreamStatus {
  // The status of the stream of one url: a new url starts out "connecting".
  const [state, setState] = useState<{ url: string | null; status: StreamStatus }>({ url, status: "connecting" });
  const handlersRef = useLatest(handlers);

  useEffect(() => {
    if (!url) return;
    const setStatus = (status: StreamStatus) => setState({ url, status });
    const source = new EventSource(url);
    const names = new Set([...Object.keys(handlersRef.current), "end"]);
    for (const name of names) {
      source.addEventListener(name, (event) => {
        const text = (event as MessageEvent<string>).data;
        handlersRef.current[name]?.(text ? JSON.parse(text) : null);
        if (name === "end") {
          source.close();
          setStatus("ended");
        }
      });
    }
    source.onopen = () => setStatus("live");
    // Expected every ~30 s: the browser reconnects by itself, so this is state, not an error to log.
    source.onerror = () => setStatus(source.readyState === EventSource.CLOSED ? "failed" : "reconnecting");
    return () => source.close();
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
