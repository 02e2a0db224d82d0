// The graph on React Flow. The draft is the source of truth; this builds React Flow's node and edge
// objects from it, reusing each object while its task looks the same (so React Flow and the memoized
// nodes skip unchanged tasks), and turns React Flow's changes back into draft operations.
import { memo, useCallback, useMemo, useRef, useState, type DragEvent } from "react";
import {
  Background, Controls, MarkerType, MiniMap, ReactFlow, useReactFlow, type Connection, type Edge as FlowEdge, type EdgeChange,
  type NodeChange,
} from "@xyflow/react";
import "@xyflow/react/dist/style.css";
import { NODE_HEIGHT, NODE_WIDTH } from "../../lib/layout";
import type { JobTemplate } from "../../types";
import { edgeId, type DraftEdge, type DraftTask, type Point } from "./model";
import { NODE_TYPES, type TaskNodeType } from "./TaskNode";
import { TEMPLATE_MIME } from "./Palette";

export interface Selection {
  nodes: ReadonlySet<string>;
  edges: ReadonlySet<string>;
}

interface CanvasProps {
  tasks: DraftTask[];
  edges: DraftEdge[];
  templates: Map<number, JobTemplate>;
  invalidKeys: ReadonlySet<string>;
  selection: Selection;
  readOnly: boolean;
  onSelectionChange: (change: (selection: Selection) => Selection) => void;
  onMove: (positions: Map<string, Point>) => void;
  onConnect: (upstream: string, downstream: string) => void;
  onDelete: (taskKeys: string[], edgeIds: string[]) => void;
  onDropTemplate: (templateId: number, position: Point) => void;
}

type Size = { width: number; height: number };

function toggled(set: ReadonlySet<string>, changes: { id: string; selected: boolean }[]): ReadonlySet<string> {
  if (changes.every((c) => set.has(c.id) === c.selected)) return set;
  const next = new Set(set);
  for (const c of changes) {
    if (c.selected) next.add(c.id);
    else next.delete(c.id);
  }
  return next;
}

const DELETE_KEYS = ["Delete", "Backspace"];
// An arrowhead at the downstream end: which task runs after which reads off the canvas (as in the run view).
const DEFAULT_EDGE = { type: "smoothstep", markerEnd: { type: MarkerType.ArrowClosed, width: 18, height: 18 } };
const FIT_VIEW_OPTIONS = { padding: 0.15, maxZoom: 1.2 };

export const Canvas = memo(function Canvas(props: CanvasProps) {
  const { tasks, edges, templates, invalidKeys, selection, readOnly } = props;
  const { onSelectionChange, onMove, onConnect, onDelete, onDropTemplate } = props;
  const { screenToFlowPosition } = useReactFlow();
  // Fit the view to the graph it opens with, and never later: on an empty canvas React Flow would keep
  // the fit queued and jump to the first dropped node, which then no longer sits where it was dropped.
  const [fitOnOpen] = useState(tasks.length > 0);
  // Sizes React Flow measured (it needs them back on every node object) and positions mid-drag.
  const [sizes, setSizes] = useState<ReadonlyMap<string, Size>>(new Map());
  const [dragging, setDragging] = useState<ReadonlyMap<string, Point>>(new Map());
  const nodeCache = useRef(new Map<string, TaskNodeType>());
  const edgeCache = useRef(new Map<string, FlowEdge>());

  const nodes = useMemo(() => {
    const cache = nodeCache.current;
    const next = new Map<string, TaskNodeType>();
    const list = tasks.map((t) => {
      const position = dragging.get(t.key) ?? t.position;
      const selected = selection.nodes.has(t.key);
      const invalid = invalidKeys.has(t.key);
      const template = templates.get(t.templateId);
      const templateName = template ? template.name : `template #${t.templateId}`;
      const measured = sizes.get(t.key);
      const old = cache.get(t.key);
      const node = old && old.position.x === position.x && old.position.y === position.y && old.selected === selected
        && old.measured === measured && old.data.name === t.name && old.data.templateName === templateName
        && old.data.invalid === invalid
        ? old
        : { id: t.key, type: "task" as const, position, selected, measured, data: { name: t.name, templateName, invalid } };
      next.set(t.key, node);
      return node;
    });
    nodeCache.current = next;
    return list;
  }, [tasks, dragging, selection.nodes, invalidKeys, templates, sizes]);

  const flowEdges = useMemo(() => {
    const cache = edgeCache.current;
    const next = new Map<string, FlowEdge>();
    const list = edges.map((e) => {
      const id = edgeId(e);
      const selected = selection.edges.has(id);
      const old = cache.get(id);
      const edge = old && old.selected === selected ? old : { id, source: e.upstream, target: e.downstream, selected };
      next.set(id, edge);
      return edge;
    });
    edgeCache.current = next;
    return list;
  }, [edges, selection.edges]);

  const onNodesChange = useCallback((changes: NodeChange<TaskNodeType>[]) => {
    const resized = new Map<string, Size>();
    const live = new Map<string, Point>();
    const done = new Map<string, Point>();
    const selects: { id: string; selected: boolean }[] = [];
    for (const change of changes) {
      if (change.type === "dimensions" && change.dimensions) {
        resized.set(change.id, change.dimensions);
      } else if (change.type === "position" && change.position) {
        (change.dragging ? live : done).set(change.id, change.position);
      } else if (change.type === "select") {
        selects.push({ id: change.id, selected: change.selected });
      }
    }
    if (resized.size) setSizes((old) => new Map([...old, ...resized]));
    if (live.size) setDragging((old) => new Map([...old, ...live]));
    if (done.size) {
      onMove(done);
      setDragging((old) => {
        if (![...done.keys()].some((k) => old.has(k))) return old;
        const rest = new Map(old);
        for (const key of done.keys()) rest.delete(key);
        return rest;
      });
    }
    if (selects.length) onSelectionChange((s) => ({ ...s, nodes: toggled(s.nodes, selects) }));
  }, [onMove, onSelectionChange]);

  const onEdgesChange = useCallback((changes: EdgeChange[]) => {
    const selects = changes.flatMap((c) => (c.type === "select" ? [{ id: c.id, selected: c.selected }] : []));
    if (selects.length) onSelectionChange((s) => ({ ...s, edges: toggled(s.edges, selects) }));
  }, [onSelectionChange]);

  const handleConnect = useCallback((c: Connection) => onConnect(c.source, c.target), [onConnect]);

  const handleDelete = useCallback(({ nodes: gone, edges: cut }: { nodes: TaskNodeType[]; edges: FlowEdge[] }) => {
    onDelete(gone.map((n) => n.id), cut.map((e) => e.id));
  }, [onDelete]);

  const onDragOver = useCallback((event: DragEvent) => {
    if (readOnly || !event.dataTransfer.types.includes(TEMPLATE_MIME)) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = "copy";
  }, [readOnly]);

  const onDrop = useCallback((event: DragEvent) => {
    const id = Number(event.dataTransfer.getData(TEMPLATE_MIME));
    if (readOnly || !id) return;
    event.preventDefault();
    const point = screenToFlowPosition({ x: event.clientX, y: event.clientY });
    onDropTemplate(id, { x: point.x - NODE_WIDTH / 2, y: point.y - NODE_HEIGHT / 2 }); // centred on the cursor
  }, [readOnly, screenToFlowPosition, onDropTemplate]);

  return (
    <div className="editor-canvas" onDragOver={onDragOver} onDrop={onDrop}>
      <ReactFlow<TaskNodeType>
        nodes={nodes}
        edges={flowEdges}
        nodeTypes={NODE_TYPES}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        onConnect={handleConnect}
        onDelete={handleDelete}
        nodesDraggable={!readOnly}
        nodesConnectable={!readOnly}
        edgesReconnectable={false}
        deleteKeyCode={readOnly ? null : DELETE_KEYS}
        fitView={fitOnOpen}
        fitViewOptions={FIT_VIEW_OPTIONS}
        minZoom={0.05}
        defaultEdgeOptions={DEFAULT_EDGE}
        aria-label="Pipeline graph"
      >
        <Background gap={16} />
        <Controls showInteractive={false} />
        <MiniMap pannable zoomable ariaLabel="Overview of the graph" />
      </ReactFlow>
    </div>
  );
});
