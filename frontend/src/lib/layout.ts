// Automatic layout of a DAG (dagre): the editor's "Auto-layout" and the run view use it.
import dagre from "@dagrejs/dagre";

export interface LayoutNode {
  id: string;
  width?: number;
  height?: number;
}

export interface LayoutEdge {
  source: string;
  target: string;
}

export type Direction = "LR" | "TB";

export const NODE_WIDTH = 200;
export const NODE_HEIGHT = 64;

/** Top-left positions for each node, upstream before downstream along `direction`. */
export function layout(nodes: LayoutNode[], edges: LayoutEdge[], direction: Direction = "LR"):
  Map<string, { x: number; y: number }> {
  const graph = new dagre.graphlib.Graph();
  graph.setGraph({ rankdir: direction, nodesep: 30, ranksep: 70, marginx: 20, marginy: 20 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const node of nodes) {
    graph.setNode(node.id, { width: node.width ?? NODE_WIDTH, height: node.height ?? NODE_HEIGHT });
  }
  for (const edge of edges) {
    if (graph.hasNode(edge.source) && graph.hasNode(edge.target)) graph.setEdge(edge.source, edge.target);
  }
  dagre.layout(graph);
  const positions = new Map<string, { x: number; y: number }>();
  for (const node of nodes) {
    const placed = graph.node(node.id);
    // dagre gives centres; React Flow wants top-left corners.
    positions.set(node.id, {
      x: Math.round(placed.x - (node.width ?? NODE_WIDTH) / 2),
      y: Math.round(placed.y - (node.height ?? NODE_HEIGHT) / 2),
    });
  }
  return positions;
}
