import type { StreamStatus } from "./hooks";

const TEXT: Record<Exclude<StreamStatus, "ended">, string> = {
  connecting: "connecting",
  live: "live",
  reconnecting: "reconnecting",
  waiting: "waiting to reconnect",
};

/** Whether what is on screen is live; nothing once the stream has ended (nothing more will change). */
export function StreamIndicator({ status }: { status: StreamStatus }) {
  if (status === "ended") return null;
  return <span className={`stream stream-${status}`} role="status">{TEXT[status]}</span>;
}
