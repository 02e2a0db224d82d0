// The selected task's upstream tasks, editable without a mouse (canvas handles need one).
import { useState } from "react";
import type { DraftEdge, DraftTask } from "./model";

interface DependenciesProps {
  task: DraftTask;
  tasks: DraftTask[];
  edges: DraftEdge[];
  readOnly: boolean;
  onConnect: (upstream: string, downstream: string) => void;
  onRemove: (upstream: string, downstream: string) => void;
}

export function Dependencies({ task, tasks, edges, readOnly, onConnect, onRemove }: DependenciesProps) {
  const [choice, setChoice] = useState("");
  const names = new Map(tasks.map((t) => [t.key, t.name]));
  const upstream = edges.filter((e) => e.downstream === task.key).map((e) => e.upstream);
  const candidates = tasks.filter((t) => t.key !== task.key && !upstream.includes(t.key));
  const selectId = `upstream-${task.key}`;
  return (
    <section className="dependencies" aria-label="Runs after">
      <h3>Runs after</h3>
      {upstream.length === 0 ? <p className="muted">No upstream task: starts when the run starts.</p> : (
        <ul>
          {upstream.map((key) => (
            <li key={key}>
              <span>{names.get(key)}</span>
              {!readOnly && (
                <button type="button" className="link-button" aria-label={`Remove dependency on ${names.get(key)}`}
                  onClick={() => onRemove(key, task.key)}>Remove</button>
              )}
            </li>
          ))}
        </ul>
      )}
      {!readOnly && candidates.length > 0 && (
        <div className="dependency-add">
          <label htmlFor={selectId} className="visually-hidden">Add upstream task</label>
          <select id={selectId} value={choice} onChange={(e) => setChoice(e.target.value)}>
            <option value="">Add upstream task…</option>
            {candidates.map((t) => <option key={t.key} value={t.key}>{t.name}</option>)}
          </select>
          <button type="button" disabled={!choice} onClick={() => { onConnect(choice, task.key); setChoice(""); }}>Add</button>
        </div>
      )}
    </section>
  );
}
