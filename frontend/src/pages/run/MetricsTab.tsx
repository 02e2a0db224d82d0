// An attempt's CPU, memory and GPU use per replica, polled while it runs.
import { useEffect } from "react";
import { api } from "../../api/client";
import { ErrorBanner, Loading } from "../../components/ui";
import { useAsync } from "../../lib/useAsync";
import type { AttemptSummary, TaskMetrics } from "../../types";
import { isActive } from "./attempts";
import { Chart } from "../../components/charts/Chart";
import type { Unit } from "../../components/charts/format";
import { timeOption } from "../../components/charts/options";
import { seriesPerReplica, type MetricKey } from "./chart";
import { useInterval } from "./hooks";

interface ChartSpec {
  metric: MetricKey;
  title: string;
  unit: Unit;
  /** Charts shown only when some sample has the metric (no GPU, no GPU charts). */
  optional?: boolean;
  max?: number;
}

const CHARTS: ChartSpec[] = [
  { metric: "cpu_cores", title: "CPU", unit: "cores" },
  { metric: "memory_bytes", title: "Memory", unit: "bytes" },
  { metric: "gpu_utilization", title: "GPU utilization", unit: "%", optional: true, max: 100 },
  { metric: "gpu_memory_bytes", title: "GPU memory", unit: "bytes", optional: true },
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
  const charts = CHARTS.map((spec) => ({ spec, series: seriesPerReplica(samples, spec.metric) }))
    .filter(({ spec, series }) => !spec.optional || series.length > 0);

  return (
    <div className="metrics-tab">
      <ErrorBanner error={metrics.error} />
      <div className="charts">
        {charts.map(({ spec, series }) => (
          <figure key={spec.metric} className="chart">
            <figcaption>{spec.title}</figcaption>
            {series.length === 0
              ? <p className="muted">No samples of this metric.</p>
              : <Chart label={`${spec.title} per replica`} option={timeOption({ series, window: [t0, t1],
                y: { name: spec.title, unit: spec.unit, fromZero: true, max: spec.max } })} />}
          </figure>
        ))}
      </div>
    </div>
  );
}
