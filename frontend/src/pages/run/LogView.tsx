// A windowed log list: only the rows in view (plus a margin) are in the DOM, so 10,000 lines stay fast.
import { useLayoutEffect, useRef, useState, type UIEvent } from "react";
import type { LogLine } from "../../types";

const ROW = 18; // px; fixed so a row's position is index × ROW (lines do not wrap, the box scrolls sideways)
const HEIGHT = 420;
const MARGIN = 30; // rows rendered above and below the view

interface Props {
  lines: LogLine[];
  follow: boolean;
  onFollowChange: (follow: boolean) => void;
  empty: string;
  colorOf: (replica: string) => string;
}

export function LogView({ lines, follow, onFollowChange, empty, colorOf }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);

  useLayoutEffect(() => {
    const el = box.current;
    if (follow && el) el.scrollTop = el.scrollHeight;
  }, [lines, follow]);

  // Scrolling up stops following; scrolling back to the bottom resumes it.
  const onScroll = (event: UIEvent<HTMLDivElement>) => {
    const el = event.currentTarget;
    setScrollTop(el.scrollTop);
    const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < ROW;
    if (atBottom !== follow) onFollowChange(atBottom);
  };

  const first = Math.max(0, Math.floor(scrollTop / ROW) - MARGIN);
  const shown = lines.slice(first, first + Math.ceil(HEIGHT / ROW) + 2 * MARGIN);

  return (
    <div ref={box} className="log-view" role="log" aria-label="Task logs" tabIndex={0} onScroll={onScroll}
      style={{ height: HEIGHT }}>
      {lines.length === 0
        ? <p className="muted log-empty">{empty}</p>
        : (
          <div className="log-rows" style={{ height: lines.length * ROW }}>
            <div style={{ transform: `translateY(${first * ROW}px)` }}>
              {shown.map((l) => (
                <div key={`${l.replica}\u0000${l.seq}`} className="log-line" style={{ height: ROW, lineHeight: `${ROW}px` }}>
                  <span className="log-replica" style={{ color: colorOf(l.replica) }}>[{l.replica}]</span> {l.line}
                </div>
              ))}
            </div>
          </div>
        )}
    </div>
  );
}
