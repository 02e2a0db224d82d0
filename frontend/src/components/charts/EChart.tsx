// The one place that touches ECharts: a tree-shaken build (echarts/core plus the charts and components
// the platform draws) mounted on a div. Loaded only through Chart.tsx's lazy import, so the chart library
// is a chunk of its own that pages without charts (and the first page) never fetch.
import { useEffect, useRef } from "react";
import { BarChart, LineChart, ParallelChart } from "echarts/charts";
import { GridComponent, LegendComponent, ParallelComponent, TooltipComponent } from "echarts/components";
import * as echarts from "echarts/core";
import { SVGRenderer } from "echarts/renderers";
import type { ChartOption } from "./options";

// Only what the option builders build (options.ts; bars: an experiment's importances): a new kind of
// chart registers its parts here.
echarts.use([BarChart, LineChart, ParallelChart, GridComponent, TooltipComponent, LegendComponent, ParallelComponent,
  SVGRenderer]);

export interface EChartProps {
  option: ChartOption;
  height: number;
}

export default function EChart({ option, height }: EChartProps) {
  const host = useRef<HTMLDivElement>(null);
  const chart = useRef<echarts.ECharts | null>(null);

  useEffect(() => {
    const el = host.current;
    if (!el) return;
    // SVG: crisp at any zoom, and its text is in the DOM (what the browser tests read).
    const instance = echarts.init(el, null, { renderer: "svg" });
    chart.current = instance;
    const observer = new ResizeObserver(() => instance.resize());
    observer.observe(el);
    return () => {
      observer.disconnect();
      instance.dispose();
      chart.current = null;
    };
  }, []);

  useEffect(() => {
    // notMerge: a series that disappeared (a version no longer served) must leave the chart.
    chart.current?.setOption(option as echarts.EChartsCoreOption, { notMerge: true, lazyUpdate: true });
  }, [option]);

  return <div ref={host} className="echart" style={{ height }} />;
}
