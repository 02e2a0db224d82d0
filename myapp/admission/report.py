"""What a resource group's status page shows (GET /api/v1/resource_group/{id}/status): capacity, use,
each project's quota, use and borrowing, the running attempts and the queue with its reasons, as the next
decision sees them.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa

from ..extensions import db
from ..models import (
    Pipeline,
    PipelineRun,
    Project,
    Quota,
    ResourceGroup,
    Task,
)
from ..scheduler.model import Decision
from ..scheduler.quota import Ledger
from .group_state import Entry, Snapshot, aware, nodes_of, snapshot
from .usage import local_default_group


def _amount(gpus: float, cpu: float, memory: float) -> dict[str, int]:
    return {"gpus": int(gpus), "cpu_millicores": round(cpu * 1000), "memory_bytes": int(memory)}


def _iso(value: dt.datetime | None) -> str | None:
    return None if value is None else aware(value).astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def status(group: ResourceGroup, now: dt.datetime) -> dict[str, Any]:
    """Capacity, use, each project's quota, use and borrowing, the running attempts and the queue with
    its reasons, as the next decision sees them."""
    nodes = nodes_of(group)
    # Work naming no group runs on this machine's default group (locally): counted there.
    snap = snapshot(group, nodes, unassigned=group.id == local_default_group(), servers=True) if nodes \
        else Snapshot(group, [])
    decision = snap.decide(now) if nodes else Decision()
    reasons = {r.job_id: r for r in decision.reasons}
    ledger = snap.ledger or Ledger((0.0, 0.0, 0.0), {}, snap.running)
    quotas = {str(q.project_id): q for q in db.session.scalars(
        sa.select(Quota).where(Quota.resource_group_id == group.id))}
    names = _names(snap.entries.values(), [q.project_id for q in quotas.values()]
                   + [int(r.job.project) for r in snap.running if r.job.project])
    waiting_by: dict[str, int] = {}
    for w in snap.waiting:
        waiting_by[w.job.project] = waiting_by.get(w.job.project, 0) + 1
    projects = sorted(set(quotas) | set(ledger.used) | set(waiting_by), key=lambda p: names["project"].get(int(p), p))
    used = [sum(r.job.gpus for r in snap.running), sum(r.job.cpu for r in snap.running),
            sum(r.job.memory for r in snap.running)]

    def attempt_fields(entry: Entry) -> dict[str, Any]:
        return {"task_run_id": entry.attempt_id, "run_id": entry.run_id,
                "project": names["project"].get(entry.project_id, str(entry.project_id)),
                "pipeline": names["pipeline"].get(entry.run_id, ""), "task": names["task"].get(entry.task_id, ""),
                "gpus": entry.amount.gpus, "cpu_millicores": entry.amount.cpu_millicores,
                "memory_bytes": entry.amount.memory_bytes}

    running = []
    for r in sorted(snap.running, key=lambda r: (r.started, r.job.id)):
        entry = snap.entries.get(r.job.id)
        if entry is None:  # a notebook or a model server: counted in the use above, not an attempt
            continue
        running.append(attempt_fields(entry) | {
            "borrowing": ledger.borrowing(r.job.project) if snap.ledger is not None else False,
            "started_at": _iso(entry.started_at or entry.created_at), "preemptions": entry.preemptions,
            "nodes": dict(r.placement)})
    queue = []
    for w in sorted(snap.waiting, key=lambda w: (reasons[w.job.id].position if w.job.id in reasons else 0)):
        entry = snap.entries[w.job.id]
        reason = reasons.get(w.job.id)
        queue.append(attempt_fields(entry) | {
            "position": reason.position if reason else 0,
            "reason": reason.text if reason else "admitted at its run's next pass",
            "waiting_since": _iso(entry.created_at)})
    return {
        "resource_group": {"id": group.id, "name": group.name, "cluster": group.cluster.name, "policy": group.policy},
        "discovery": {"enabled": group.discover_nodes, "at": _iso(group.discovered_at),
                      "error": group.discovery_error, "nodes": list(group.discovered_nodes or [])},
        "capacity": {**_amount(sum(n.gpus for n in nodes), sum(n.cpu for n in nodes), sum(n.memory for n in nodes)),
                     "nodes": [{"name": n.name, **_amount(n.gpus, n.cpu, n.memory)} for n in nodes]},
        "used": _amount(*used),
        "projects": [{
            "project_id": int(p), "project": names["project"].get(int(p), p),
            "quota": _amount(q.gpus, q.cpu_millicores / 1000, q.memory_bytes) if (q := quotas.get(p)) else None,
            "used": _amount(*ledger.use(p)),
            "borrowed": _amount(*ledger.borrowed(p)) if snap.ledger is not None else _amount(0, 0, 0),
            "waiting": waiting_by.get(p, 0)} for p in projects],
        "running": running,
        "queue": queue,
    }


def _names(entries: Iterable[Entry], projects: Iterable[int]) -> dict[str, dict[int, str]]:
    entries = list(entries)
    project_ids = {e.project_id for e in entries} | set(projects)
    run_ids = {e.run_id for e in entries}
    task_ids = {e.task_id for e in entries}

    def pairs(query: Any) -> dict[int, str]:
        return {row[0]: row[1] for row in db.session.execute(query)}

    return {
        "project": pairs(sa.select(Project.id, Project.name).where(Project.id.in_(project_ids))),
        "pipeline": pairs(sa.select(PipelineRun.id, Pipeline.name)
                          .join(Pipeline, Pipeline.id == PipelineRun.pipeline_id).where(PipelineRun.id.in_(run_ids))),
        "task": pairs(sa.select(Task.id, Task.name).where(Task.id.in_(task_ids))),
    }
