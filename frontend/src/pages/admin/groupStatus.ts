// What the resource group view shows of GET /api/v1/resource_group/{id}/status, as plain text.
import type { Amount, GroupProjectStatus, GroupRunningAttempt, ResourceGroupStatus } from "../../types";
import { formatMs, parseTime } from "../run/time";
import { formatCores, formatGiB } from "./quantity";

/** How often the view asks again. */
export const POLL_MS = 5_000;

/** "node-0: 2 GPUs, node-1: 8 GPUs" — where a running gang is, nodes in name order (names alone for a job
 * without GPUs). */
export function placement(nodes: GroupRunningAttempt["nodes"]): string {
  const names = Object.keys(nodes).sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  if (!names.length) return "—";
  if (names.every((name) => !nodes[name])) return names.join(", ");
  return names.map((name) => `${name}: ${nodes[name]} ${nodes[name] === 1 ? "GPU" : "GPUs"}`).join(", ");
}

/** "2 GPUs, 4 cores" — what a project holds beyond its quota; "none" when nothing. */
export function borrowedText(borrowed: Amount): string {
  const parts: string[] = [];
  if (borrowed.gpus) parts.push(`${borrowed.gpus} ${borrowed.gpus === 1 ? "GPU" : "GPUs"}`);
  if (borrowed.cpu_millicores) parts.push(formatCores(borrowed.cpu_millicores));
  if (borrowed.memory_bytes) parts.push(formatGiB(borrowed.memory_bytes));
  return parts.length ? parts.join(", ") : "none";
}

/** Does the project hold more than its quota of anything? */
export function isBorrowing(project: GroupProjectStatus): boolean {
  const b = project.borrowed;
  return b.gpus > 0 || b.cpu_millicores > 0 || b.memory_bytes > 0;
}

/** "2 GPUs · 2 cores · 4 GiB": what one attempt asks for. */
export function requestText(item: Amount): string {
  const parts = [];
  if (item.gpus) parts.push(`${item.gpus} ${item.gpus === 1 ? "GPU" : "GPUs"}`);
  parts.push(formatCores(item.cpu_millicores), formatGiB(item.memory_bytes));
  return parts.join(" · ");
}

/** "4m 05s" since an ISO time, as of `now` (ms since the epoch). */
export function since(iso: string, now: number): string {
  return formatMs(now - parseTime(iso));
}

/** One line on a group's discovered nodes: how many the cluster has for it and why the others take no pods. */
export function discoveryText(discovery: ResourceGroupStatus["discovery"]): string {
  if (!discovery.at) return "not discovered yet: capacity from the definition";
  const nodes = discovery.nodes;
  const out = nodes.filter((n) => !n.schedulable);
  const count = `${nodes.length} node${nodes.length === 1 ? "" : "s"}`;
  if (!out.length) return `${count}, all schedulable`;
  return `${count}, ${nodes.length - out.length} schedulable (${out.map((n) => `${n.name}: ${n.why ?? "not schedulable"}`).join(", ")})`;
}
