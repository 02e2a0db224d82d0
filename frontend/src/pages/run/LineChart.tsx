// A small SVG line chart: time on x, one line per replica, a few ticks on both axes.
import { linearScale, linePath, timeTicks, valueAxis, type Series } from "./chart";

const W = 520;
const H = 200;
const PAD = { left: 64, right: 12, top: 10, bottom: 26 };

interface Props {
  series: Series[];
  t0: number;
  t1: number;
  format: (value: number) => string;
  bytes?: boolean;
  floor?: number;
  label: string;
  colorOf: (replica: string) => string;
  /** x ticks and their labels; default: clock times of `t` as Unix seconds (the metric charts). */
  xTicks?: number[];
  formatX?: (t: number) => string;
}

const clock = (t: number) => new Date(t * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit",
  second: "2-digit" });

export function LineChart({ series, t0, t1, format, bytes = false, floor, label, colorOf, xTicks, formatX = clock }: Props) {
  const max = Math.max(...series.flatMap((s) => s.points.map((p) => p.v)));
  const axis = valueAxis(max, 4, bytes, floor);
  const x = linearScale(t0, t1, PAD.left, W - PAD.right);
  const y = linearScale(0, axis.max, H - PAD.bottom, PAD.top);
  return (
    <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={label} className="line-chart">
      {axis.ticks.map((v) => (
        <g key={`y${v}`}>
          <line x1={PAD.left} x2={W - PAD.right} y1={y(v)} y2={y(v)} className="grid" />
          <text x={PAD.left - 6} y={y(v)} dy="0.32em" textAnchor="end">{format(v)}</text>
        </g>
      ))}
      {(xTicks ?? timeTicks(t0, t1)).map((t) => (
        <text key={`x${t}`} x={x(t)} y={H - 8} textAnchor="middle">{formatX(t)}</text>
      ))}
      <line x1={PAD.left} x2={W - PAD.right} y1={H - PAD.bottom} y2={H - PAD.bottom} className="axis" />
      {series.map((s) => (
        <g key={s.replica} style={{ color: colorOf(s.replica) }}>
          <path d={linePath(s.points, x, y)} className="series" />
          {s.points.length === 1 && <circle cx={x(s.points[0].t)} cy={y(s.points[0].v)} r={3} fill="currentColor" />}
          <title>{s.replica}</title>
        </g>
      ))}
    </svg>
  );
}
