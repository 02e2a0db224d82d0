"""Where a measured phase's CPU went: the server's process tree, the database's backends, the load
generator (this process) and everything else on the machine; and latency percentiles."""
from __future__ import annotations

from typing import Any

import psutil


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (q in 0..100), nearest rank; NaN without values."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))] if ordered else float("nan")


def cpu_seconds(server_pid: int, db_name: str | None) -> dict[str, Any]:
    """CPU seconds so far: the whole machine (busy), this process (the load generator), and per process
    the server's (its process tree) and the database's (PostgreSQL backends serving db_name, which
    their titles name; none for SQLite: it runs in the server). Busy minus ours is other work."""
    t = psutil.cpu_times()
    server = psutil.Process(server_pid)
    procs = [("server", p) for p in (server, *server.children(recursive=True))]
    if db_name:
        for p in psutil.process_iter(["name", "cmdline"]):
            if p.info["name"] in ("postgres", "postmaster") and db_name in " ".join(p.info["cmdline"] or ()):
                procs.append(("db", p))
    per_process = {}
    for group, proc in procs:
        try:
            per_process[proc.pid] = (group, sum(proc.cpu_times()[:2]))
        except psutil.Error:  # a process that ended meanwhile
            pass
    return {"busy": t.user + t.nice + t.system + getattr(t, "irq", 0.0) + getattr(t, "softirq", 0.0),
            "client": sum(psutil.Process().cpu_times()[:2]), "procs": per_process}


def cpu_per_request(before: dict[str, Any], after: dict[str, Any], wall: float, requests: int) -> str:
    """Where the CPU went during a phase: ms per request by each side, and cores used by other work.
    A process counts from its CPU at the start (or from 0 if it started during the phase)."""
    used = {"busy": after["busy"] - before["busy"], "client": after["client"] - before["client"],
            "server": 0.0, "db": 0.0}
    for pid, (group, cpu) in after["procs"].items():
        used[group] += cpu - before["procs"].get(pid, (group, 0.0))[1]
    other = max(0.0, used["busy"] - used["server"] - used["db"] - used["client"]) / wall
    per = {k: used[k] / max(1, requests) * 1000 for k in ("server", "db", "client")}
    return (f"CPU per request: server {per['server']:.2f} ms, database {per['db']:.2f} ms, load generator "
            f"{per['client']:.2f} ms; {used['busy'] / wall:.2f} cores busy, {other:.2f} by other processes")


def connections_per_worker(server_pid: int, port: int) -> list[int]:
    """The clients' connections each gunicorn worker holds: a keep-alive connection stays with the worker
    that accepted it, and one worker serving most of them (its process, one core) shows in the tail."""
    counts = []
    for worker in psutil.Process(server_pid).children():
        try:
            counts.append(sum(1 for c in worker.net_connections("tcp")
                              if c.status == psutil.CONN_ESTABLISHED and c.laddr and c.laddr.port == port))
        except psutil.Error:  # a worker that ended meanwhile
            pass
    return sorted(counts, reverse=True)
