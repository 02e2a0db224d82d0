"""The supervisor's metrics sampling (a mixin of ``Supervisor``): every so often one row per replica with
live processes is appended to ``metrics.jsonl``, the CPU and memory of the replica's whole process tree
(each descendant found by its replica leader or session; the sandbox's own bwrap processes left out) and,
with NVML, its GPUs' utilization and memory.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import psutil

from .gpu import GpuSampler
from .replicas import Replica


class ReplicaMetrics:
    """Sample the replicas' processes; Supervisor holds the state these read and write."""
    meta: Path
    settings: dict[str, Any]
    sandbox: dict[str, Any] | None
    replicas: list[Replica]
    by_leader: dict[int, Replica]
    gpu_sampler: GpuSampler | None
    sampled_at: float  # when sample_metrics last ran
    cpu_seen: dict[tuple[int, float], float]

    def sample_metrics(self, now: float) -> int:
        """Append one row per replica with live processes to metrics.jsonl; return how many."""
        trees: dict[str, list[psutil.Process]] = {}
        try:
            me = psutil.Process()
            for proc in me.children(recursive=True):
                replica = self._owner_of(proc, me.pid)
                if replica is not None and not self._is_wrapper(proc, replica):
                    trees.setdefault(replica.name, []).append(proc)
        except psutil.Error:
            return 0
        # CPU rates are per second of the time since the previous sample (retries come sooner).
        window = max(now - self.sampled_at, 1e-3) if self.sampled_at else self.settings["metrics_interval"]
        self.sampled_at = now
        seen: dict[tuple[int, float], float] = {}
        rows = []
        for replica in self.replicas:
            procs = trees.get(replica.name)
            if not procs:
                continue
            cpu, memory = 0.0, 0
            for proc in procs:
                try:
                    with proc.oneshot():
                        times = proc.cpu_times()
                        total = times.user + times.system
                        created = proc.create_time()
                        memory += proc.memory_info().rss
                except psutil.Error:
                    continue
                key = (proc.pid, created)
                seen[key] = total
                if key in self.cpu_seen:
                    cpu += (total - self.cpu_seen[key]) / window
                else:  # new since the last sample: its average rate over its life (or the window)
                    cpu += total / max(min(now - created, window), 1e-3)
            gpu_util = gpu_memory = None
            if self.gpu_sampler is not None and replica.gpus:
                gpu_util, gpu_memory = self.gpu_sampler.sample(replica.gpus, {p.pid for p in procs})
            rows.append({"timestamp": now, "replica": replica.name, "cpu_cores": round(max(cpu, 0.0), 4),
                         "memory_bytes": memory, "gpu_utilization": gpu_util, "gpu_memory_bytes": gpu_memory})
        self.cpu_seen = seen
        if rows:
            with open(self.meta / "metrics.jsonl", "a", encoding="utf-8") as fh:
                fh.write("".join(json.dumps(row) + "\n" for row in rows))
        return len(rows)

    def _is_wrapper(self, proc: psutil.Process, replica: Replica) -> bool:
        """bwrap outside the sandbox (the replica's leader) and bwrap as its PID 1: not the job's
        own use of CPU and memory."""
        if self.sandbox is None or replica.ident is None:
            return False
        try:
            return proc.pid == replica.ident.pid or proc.ppid() == replica.ident.pid
        except psutil.Error:
            return True

    def _owner_of(self, proc: psutil.Process, me: int) -> Replica | None:
        """The replica a descendant belongs to: the replica leader among its ancestors, else its
        session (a process orphaned to us keeps the session of the replica that started it)."""
        try:
            current = proc
            while True:
                if current.pid in self.by_leader:
                    return self.by_leader[current.pid]
                parent = current.ppid()
                if parent == me or parent <= 1:
                    break
                current = psutil.Process(parent)
            return self.by_leader.get(os.getsid(proc.pid))
        except (psutil.Error, OSError):
            return None
