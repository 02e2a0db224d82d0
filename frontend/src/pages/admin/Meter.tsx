// A bar of use against a limit, exposed to assistive technology as a meter.
import { describeReading, fill, type Reading } from "./usage";

interface Props {
  reading: Reading;
  /** "CPU of gpu-a100", "Memory quota of demo on gpu-a100". */
  label: string;
  /** Word for going over the limit: "capacity" or "quota". */
  limitName: string;
}

export function Meter({ reading, label, limitName }: Props) {
  if (reading.limit === null) return <span className="meter-text">{describeReading(reading)}</span>;
  const { percent, over } = fill(reading.used, reading.limit);
  const text = describeReading(reading);
  const overText = over ? ` — over ${limitName}` : "";
  return (
    <div className={over ? "meter over" : "meter"} data-over={over || undefined}>
      <div role="meter" aria-label={label} aria-valuemin={0} aria-valuemax={reading.limit}
        aria-valuenow={Math.min(reading.used, reading.limit)} aria-valuetext={`${text}${overText}`} className="meter-track">
        <div className="meter-fill" style={{ width: `${percent}%` }} />
      </div>
      <span className="meter-text">{text}{over && <strong> over {limitName}</strong>}</span>
    </div>
  );
}
