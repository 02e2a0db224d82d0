// An attempt's aggregated logs, live: replica filter, search, follow-tail and download.
import { useEffect, useState } from "react";
import { api, qs } from "../../api/client";
import type { AttemptSummary, LogBatch, LogLine, StreamProblem, TaskLogs } from "../../types";
import { useDebounced, useEventStream } from "./hooks";
import { addReplicas, mergeLines, replicaColor } from "./logBuffer";
import { LogView } from "./LogView";
import { StreamIndicator } from "./StreamIndicator";

interface Props {
  attempt: AttemptSummary;
  taskName: string;
}

export function LogsTab({ attempt, taskName }: Props) {
  const [replica, setReplica] = useState("");
  const [searchText, setSearchText] = useState("");
  const search = useDebounced(searchText.trim(), 300);
  const [follow, setFollow] = useState(true);
  const [replicas, setReplicas] = useState<string[]>([]);

  // Each filter is a new stream from the tail; lines belong to the stream (url) they came from.
  const url = `/api/v1/task_run/${attempt.id}/log_stream${qs({ replica, search })}`;
  const [buffer, setBuffer] = useState<{ url: string; lines: LogLine[] }>({ url, lines: [] });
  const lines = buffer.url === url ? buffer.lines : [];
  const [ended, setEnded] = useState(0);
  // The server could not read the live log (e.g. the cluster is unreachable); it keeps trying.
  const [problem, setProblem] = useState<{ url: string; message: string } | null>(null);
  const status = useEventStream(url, {
    problem: (data) => setProblem({ url, message: (data as StreamProblem).message }),
    lines: (data) => {
      setProblem(null);
      const batch = data as LogBatch;
      setBuffer((b) => ({ url, lines: mergeLines(b.url === url ? b.lines : [], batch.items) }));
      setReplicas((known) => addReplicas(known, batch.items));
    },
    end: () => setEnded((n) => n + 1),
  });

  // Every replica, also those a filter hides; asked again when the attempt ends (all have started by then).
  useEffect(() => {
    api<TaskLogs>(`/api/v1/task_run/${attempt.id}/logs?limit=1`)
      .then((r) => setReplicas((known) => addReplicas(known, r.replicas.map((name) => ({ replica: name })))))
      .catch(() => undefined); // the stream shows the replicas it sees; this list only completes it
  }, [attempt.id, ended]);

  const filtered = Boolean(replica || search);
  const empty = status === "ended"
    ? (filtered ? "No lines match these filters." : "This attempt wrote no log lines.")
    : (filtered ? "No matching lines yet." : "Waiting for output…");

  return (
    <div className="logs-tab">
      <div className="log-toolbar">
        <label className="inline">
          <span>Replica</span>
          <select value={replica} onChange={(e) => setReplica(e.target.value)}>
            <option value="">all replicas</option>
            {replicas.map((r) => <option key={r} value={r}>{r}</option>)}
          </select>
        </label>
        <label className="inline">
          <span>Search</span>
          <input type="search" value={searchText} onChange={(e) => setSearchText(e.target.value)}
            placeholder="text in the line" />
        </label>
        <label className="inline">
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} />
          <span>Follow tail</span>
        </label>
        <StreamIndicator status={status} />
        <span className="muted log-count">{lines.length.toLocaleString()} lines</span>
        {/* The whole log (these filters applied), streamed by the server as it reads it. */}
        <a className="button" href={`/api/v1/task_run/${attempt.id}/log_download${qs({ replica, search })}`}
          download={`${taskName}-attempt${attempt.attempt}.log`}>Download</a>
      </div>
      {problem?.url === url && <p className="field-error" role="status">{problem.message}; retrying…</p>}
      <LogView lines={lines} follow={follow} onFollowChange={setFollow} empty={empty} colorOf={replicaColor} />
    </div>
  );
}
