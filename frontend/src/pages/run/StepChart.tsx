// A small SVG line chart of reported metrics: steps on x, one line per series (a metric, or a run).
import { formatNumber, linearScale, linePath, valueAxis } from "./chart";
import type { NamedSeries } from "./stepSeries";

const W = 520;
const H = 200;
const PAD = { left: 64, right: 12, top: 10, bottom: 26 };

interface Props {
  series: NamedSeries[];
  label: string;
  colorOf: (name: string) => string;
}

export function StepChart({ series, label, colorOf }: Props) {
  const points = series.flatMap((s) => s.points);
  const [s0, s1] = [Math.min(...points.map((p) => p.t)), Math.max(...points.map((p) => p.t))];
  const low = Math.min(0, ...points.map((p) => p.v));
  const axis = valueAxis(Math.max(...points.map((p) => p.v)) - low, 4, false, 1e-9);
  const x = linearScale(s0, s1, PAD.left, W - PAD.right);
  const y = linearScale(low, low + axis.max, H - PAD.bottom, PAD.top);
  const steps = s1 > s0 ? [s0, Math.round((s0 + s1) / 2), s1] : [s0];
  return (
    <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={label} className="line-chart">
      {axis.ticks.map((v) => (
        <g key={`y${v}`}>
          <line x1={PAD.left} x2={W - PAD.right} y1={y(low + v)} y2={y(low + v)} className="grid" />
          <text x={PAD.left - 6} y={y(low + v)} dy="0.32em" textAnchor="end">{formatNumber(low + v)}</text>
        </g>
      ))}
      {steps.map((t, i) => (
        <text key={`x${t}`} x={x(t)} y={H - 8}
          textAnchor={steps.length > 1 && i === steps.length - 1 ? "end" : i === 0 && steps.length > 1 ? "start" : "middle"}>
          {`step ${t}`}
        </text>
      ))}
      <line x1={PAD.left} x2={W - PAD.right} y1={H - PAD.bottom} y2={H - PAD.bottom} className="axis" />
      {series.map((s) => (
        <g key={s.name} style={{ color: colorOf(s.name) }}>
          <path d={linePath(s.points, x, y)} className="series" />
          {s.points.length === 1 && <circle cx={x(s.points[0].t)} cy={y(s.points[0].v)} r={3} fill="currentColor" />}
          <title>{s.name}</title>
        </g>
      ))}
    </svg>
  );
}
