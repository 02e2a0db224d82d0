// A chart: ECharts options (built by the pure functions of options.ts) drawn by EChart.tsx, which is
// imported lazily so the chart library loads with the first chart a page shows, never before.
import { lazy, Suspense } from "react";
import type { ChartOption } from "./options";
import "./charts.css";

const EChart = lazy(() => import("./EChart"));

interface Props {
  option: ChartOption;
  /** What the chart shows, for screen readers (the chart's own text is drawn). */
  label: string;
  height?: number;
}

export function Chart({ option, label, height = 240 }: Props) {
  return (
    <div className="chart-box" role="img" aria-label={label}>
      <Suspense fallback={<div className="chart-loading" style={{ height }}>Loading chart…</div>}>
        <EChart option={option} height={height} />
      </Suspense>
    </div>
  );
}
