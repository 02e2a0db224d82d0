// The contract's example answer of GET /api/v1/resource_group/{id}/status (tests and the view's tests).
import type { ResourceGroupStatus } from "../../types";

const GIB = 2 ** 30;

export const STATUS: ResourceGroupStatus = {
  resource_group: { id: 1, name: "default", cluster: "local", policy: "sieve" },
  capacity: {
    gpus: 8, cpu_millicores: 16000, memory_bytes: 64 * GIB,
    nodes: [{ name: "node-0", gpus: 8, cpu_millicores: 16000, memory_bytes: 64 * GIB }],
  },
  discovery: { enabled: false, at: null, error: null, nodes: [] },
  used: { gpus: 6, cpu_millicores: 6000, memory_bytes: 8 * GIB },
  projects: [
    {
      project_id: 2, project: "demo",
      quota: { gpus: 4, cpu_millicores: 8000, memory_bytes: 16 * GIB },
      used: { gpus: 6, cpu_millicores: 6000, memory_bytes: 8 * GIB },
      borrowed: { gpus: 2, cpu_millicores: 0, memory_bytes: 0 },
      waiting: 1,
    },
    {
      project_id: 3, project: "vision", quota: null,
      used: { gpus: 0, cpu_millicores: 0, memory_bytes: 0 },
      borrowed: { gpus: 0, cpu_millicores: 0, memory_bytes: 0 },
      waiting: 0,
    },
  ],
  running: [{
    task_run_id: 11, run_id: 4, project: "demo", pipeline: "digits", task: "train",
    gpus: 2, cpu_millicores: 2000, memory_bytes: 4 * GIB, borrowing: true,
    started_at: "2026-11-24T07:00:00Z", preemptions: 0, nodes: { "node-0": 2 },
  }],
  queue: [{
    task_run_id: 12, run_id: 5, project: "demo", pipeline: "digits", task: "train",
    position: 1, reason: "waiting: project quota gpu 8/8",
    gpus: 2, cpu_millicores: 2000, memory_bytes: 4 * GIB, waiting_since: "2026-11-24T07:01:00Z",
  }],
};
