// The run's DAG, read-only: each task coloured by its latest attempt's state; a click (or Enter) opens it.
import { useMemo } from "react";
import { Controls, Handle, MarkerType, Position, ReactFlow, type Edge as FlowEdge, type Node, type NodeProps } from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import type { AttemptSummary, Edge, Task } from "../../types";
import { layout } from "../../lib/layout";
import { duration } from "./time";

interface TaskNodeData extends Record<string, unknown> {
  name: string;
  state: string;
  attempt: number;
  took: string;
  dimmed: boolean;
  selected: boolean;
  onSelect: () => void;
}

type TaskNode = Node<TaskNodeData, "task">;

function TaskNodeView({ data }: NodeProps<TaskNode>) {
  return (
    <>
      <Handle type="target" position={Position.Left} isConnectable={false} className="run-node-handle" />
      <button type="button" className={`run-node run-node-${data.state}${data.dimmed ? " dimmed" : ""}`}
        data-task={data.name} data-state={data.state} aria-pressed={data.selected} onClick={data.onSelect}>
        {/* The visible words are the button's name ("train running attempt 2 1m 3s"): spaces between them. */}
        <span className="run-node-name">{data.name}</span>{" "}
        <span className="run-node-meta">
          <span className="run-node-state">{data.state.replace("_", " ")}</span>
          {data.attempt > 1 && <> <span>attempt {data.attempt}</span></>}
          {data.took !== "—" && <> <span>{data.took}</span></>}
        </span>
      </button>
      <Handle type="source" position={Position.Right} isConnectable={false} className="run-node-handle" />
    </>
  );
}

const NODE_TYPES = { task: TaskNodeView };

interface Props {
  tasks: Task[];
  edges: Edge[];
  latest: Map<number, AttemptSummary>;
  onlyTaskId: number | null;
  selectedTaskId: number | null;
  onSelect: (taskId: number) => void;
  now: number;
}

export function RunGraph({ tasks, edges, latest, onlyTaskId, selectedTaskId, onSelect, now }: Props) {
  // Saved editor positions when every task has one, else an automatic layout.
  const positions = useMemo(() => {
    const saved = tasks.every((t) => typeof t.position?.x === "number" && typeof t.position?.y === "number");
    if (saved) return new Map(tasks.map((t) => [String(t.id), { x: t.position.x!, y: t.position.y! }]));
    return layout(tasks.map((t) => ({ id: String(t.id) })),
      edges.map((e) => ({ source: String(e.upstream_task_id), target: String(e.downstream_task_id) })));
  }, [tasks, edges]);

  const nodes: TaskNode[] = tasks.map((task) => {
    const attempt = latest.get(task.id);
    return {
      id: String(task.id),
      type: "task",
      position: positions.get(String(task.id)) ?? { x: 0, y: 0 },
      data: {
        name: task.name,
        state: attempt?.state ?? "not_started",
        attempt: attempt?.attempt ?? 0,
        took: attempt ? duration(attempt.started_at, attempt.finished_at, now) : "—",
        dimmed: onlyTaskId !== null && onlyTaskId !== task.id,
        selected: task.id === selectedTaskId,
        onSelect: () => onSelect(task.id),
      },
    };
  });

  const flowEdges: FlowEdge[] = edges.map((edge) => ({
    id: String(edge.id),
    source: String(edge.upstream_task_id),
    target: String(edge.downstream_task_id),
    animated: latest.get(edge.downstream_task_id)?.state === "running",
    markerEnd: { type: MarkerType.ArrowClosed },
  }));

  return (
    <section className="run-graph panel" aria-label="Pipeline graph">
      <ReactFlow nodes={nodes} edges={flowEdges} nodeTypes={NODE_TYPES} fitView fitViewOptions={{ maxZoom: 1.2 }}
        nodesDraggable={false} nodesConnectable={false} elementsSelectable={false} nodesFocusable={false}
        edgesFocusable={false} minZoom={0.3}>
        <Controls showInteractive={false} />
      </ReactFlow>
    </section>
  );
}
