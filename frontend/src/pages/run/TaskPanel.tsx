// The selected task: attempt selector and tabs (logs, metrics, outputs, manifests, details).
import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import { StateBadge } from "../../components/ui";
import type { AttemptSummary, Task } from "../../types";
import { attemptsOf } from "./attempts";
import { DetailsTab } from "./DetailsTab";
import { LogsTab } from "./LogsTab";
import { ManifestsTab } from "./ManifestsTab";
import { MetricsTab } from "./MetricsTab";
import { OutputsTab } from "./OutputsTab";

const TABS = ["logs", "metrics", "outputs", "manifests", "details"] as const;
type Tab = (typeof TABS)[number];
const LABELS: Record<Tab, string> = { logs: "Logs", metrics: "Metrics", outputs: "Outputs", manifests: "Manifests",
  details: "Details" };

interface Props {
  task: Task;
  taskRuns: AttemptSummary[];
  canWrite: boolean;
  now: number;
  onClose: () => void;
}

export function TaskPanel({ task, taskRuns, canWrite, now, onClose }: Props) {
  const attempts = attemptsOf(taskRuns, task.id);
  // null follows the latest attempt, so a retry shows up by itself.
  const [chosenId, setChosenId] = useState<number | null>(null);
  const attempt = attempts.find((a) => a.id === chosenId) ?? attempts[attempts.length - 1];
  const [tab, setTab] = useState<Tab>("logs");
  const tabRefs = useRef<Record<string, HTMLButtonElement | null>>({});
  const panel = useRef<HTMLElement>(null);

  // The panel opens below the graph: bring it into view (once per task; the panel is keyed by task).
  useEffect(() => {
    panel.current?.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }, []);

  // Arrow keys move between tabs (the tablist is one tab stop).
  const onTabKey = (event: KeyboardEvent) => {
    const step = event.key === "ArrowRight" ? 1 : event.key === "ArrowLeft" ? -1 : 0;
    if (!step) return;
    event.preventDefault();
    const next = TABS[(TABS.indexOf(tab) + step + TABS.length) % TABS.length];
    setTab(next);
    tabRefs.current[next]?.focus();
  };

  const select = (id: number) => setChosenId(id === attempts[attempts.length - 1]?.id ? null : id);

  return (
    <section ref={panel} className="task-panel panel" aria-label={`Task ${task.name}`}>
      <header className="task-panel-header">
        <h2>{task.name}</h2>
        <StateBadge state={attempt?.state ?? "not_started"} />
        {attempts.length > 1 && (
          <label className="inline">
            <span>Attempt</span>
            <select value={attempt?.id} onChange={(e) => select(Number(e.target.value))}>
              {attempts.map((a) => (
                <option key={a.id} value={a.id}>{a.attempt} ({a.state.replace("_", " ")})</option>
              ))}
            </select>
          </label>
        )}
        <button type="button" className="close" aria-label="Close task panel" onClick={onClose}>×</button>
      </header>
      <div role="tablist" aria-label="Task views" className="tabs" onKeyDown={onTabKey}>
        {TABS.map((name) => (
          <button key={name} type="button" role="tab" id={`task-tab-${name}`} aria-controls="task-tabpanel"
            aria-selected={tab === name} tabIndex={tab === name ? 0 : -1} onClick={() => setTab(name)}
            ref={(el) => { tabRefs.current[name] = el; }}>
            {LABELS[name]}
          </button>
        ))}
      </div>
      <div role="tabpanel" id="task-tabpanel" aria-labelledby={`task-tab-${tab}`} className="tab-body">
        {tab === "details"
          ? <DetailsTab task={task} attempts={attempts} attempt={attempt} canWrite={canWrite} now={now}
            onSelectAttempt={select} />
          : !attempt
            ? <p className="muted">Not started yet: this task has no attempt in this run.</p>
            : tab === "logs"
              ? <LogsTab key={attempt.id} attempt={attempt} taskName={task.name} />
              : tab === "metrics"
                ? <MetricsTab key={attempt.id} attempt={attempt} />
                : tab === "outputs"
                  ? <OutputsTab key={attempt.id} attempt={attempt} />
                  : <ManifestsTab key={attempt.id} attemptId={attempt.id} />}
      </div>
    </section>
  );
}
