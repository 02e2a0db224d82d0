// An attempt's CPU, memory and GPU use per replica, polled while it runs.
import { useEffect } from "react";
import { api } from "../../api/client";
import { ErrorBanner, Loading } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import type { AttemptSummary, TaskMetrics } from "../../types";
import { isActive } from "./attempts";
import { formatBytes, formatNumber, seriesPerReplica, type MetricKey } from "./chart";
import { useInterval } from "./hooks";
import { LineChart } from "./LineChart";
import { replicaColor } from "./logBuffer";

interface ChartSpec {
  metric: MetricKey;
  title: string;
  format: (value: number) => string;
  bytes?: boolean;
  /** Charts shown only when some sample has the metric (no GPU, no GPU charts). */
  optional?: boolean;
  floor?: number;
}

const CHARTS: ChartSpec[] = [
  { metric: "cpu_cores", title: "CPU (cores)", format: formatNumber, floor: 0.1 },
  { metric: "memory_bytes", title: "Memory", format: formatBytes, bytes: true, floor: 1024 * 1024 },
  { metric: "gpu_utilization", title: "GPU utilization (%)", format: (v) => `${formatNumber(v)}%`, optional: true,
    floor: 100 },
  { metric: "gpu_memory_bytes", title: "GPU memory", format: formatBytes, bytes: true, optional: true,
    floor: 1024 * 1024 },
];

export function MetricsTab({ attempt }: { attempt: AttemptSummary }) {
  const active = isActive(attempt.state);
  const metrics = useAsync(() => api<TaskMetrics>(`/api/v1/task_run/${attempt.id}/metrics`),
    [attempt.id]);
  useInterval(metrics.reload, 3000, active);
  // Once the attempt ends its samples are kept with it: load that final set.
  const { reload } = metrics;
  useEffect(() => {
    if (!active) reload();
  }, [active, reload]);

  if (!metrics.data) return metrics.error ? <ErrorBanner error={metrics.error} /> : <Loading what="Loading metrics" />;
  const samples = metrics.data.items;
  if (samples.length === 0) {
    return (
      <>
        <ErrorBanner error={metrics.error} />
        <p className="muted">No samples yet{active ? "; they appear while the attempt runs." : "."}</p>
      </>
    );
  }
  const times = samples.map((s) => s.timestamp);
  const [t0, t1] = [Math.min(...times), Math.max(...times)];
  const replicas = [...new Set(samples.map((s) => s.replica))].sort();
  const charts = CHARTS.map((spec) => ({ spec, series: seriesPerReplica(samples, spec.metric) }))
    .filter(({ spec, series }) => !spec.optional || series.length > 0);

  return (
    <div className="metrics-tab">
      <ErrorBanner error={metrics.error} />
      <ul className="legend" aria-label="Replicas">
        {replicas.map((r) => (
          <li key={r}><span className="swatch" style={{ background: replicaColor(r) }} />{r}</li>
        ))}
      </ul>
      <div className="charts">
        {charts.map(({ spec, series }) => (
          <figure key={spec.metric} className="chart">
            <figcaption>{spec.title}</figcaption>
            {series.length === 0
              ? <p className="muted">No samples of this metric.</p>
              : <LineChart series={series} t0={t0} t1={t1} format={spec.format} bytes={spec.bytes}
                floor={spec.floor} label={`${spec.title} per replica`} colorOf={replicaColor} />}
          </figure>
        ))}
      </div>
    </div>
  );
}
