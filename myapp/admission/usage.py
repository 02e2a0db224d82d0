"""Capacity against use: what running attempts request, per resource group and project.

Use is read from the manifests each attempt submitted (the same numbers the scheduler
sees): every container's requests, times the replicas of the pod template it is in.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import sqlalchemy as sa

from ..extensions import db
from ..models import Project, Quota, ResourceGroup, Task, TaskRun
from ..models.states import TASK_ACTIVE
from ..rendering.quantity import parse_quantity

GPU_KEYS = ("nvidia.com/gpu", "amd.com/gpu")


@dataclass
class Amount:
    cpu_millicores: int = 0
    memory_bytes: int = 0
    gpus: int = 0

    def add(self, other: Amount, times: int = 1) -> None:
        self.cpu_millicores += other.cpu_millicores * times
        self.memory_bytes += other.memory_bytes * times
        self.gpus += other.gpus * times

    def as_dict(self) -> dict[str, int]:
        return {"cpu_millicores": self.cpu_millicores, "memory_bytes": self.memory_bytes, "gpus": self.gpus}


def container_request(container: dict[str, Any]) -> Amount:
    resources = container.get("resources") or {}
    requests, limits = resources.get("requests") or {}, resources.get("limits") or {}

    def quantity(name: str) -> Decimal:
        value = requests.get(name, limits.get(name))
        return parse_quantity(value) if value is not None else Decimal(0)

    return Amount(int(quantity("cpu") * 1000), int(quantity("memory")),
                  int(sum(quantity(k) for k in GPU_KEYS)))


def requested(manifests: Any, times: int = 1) -> Amount:
    """Sum of container requests in manifests; a node with `replicas` and `template` multiplies."""
    total = Amount()
    if isinstance(manifests, list):
        for item in manifests:
            total.add(requested(item, times))
    elif isinstance(manifests, dict):
        containers = manifests.get("containers")
        if isinstance(containers, list):
            for container in containers:
                if isinstance(container, dict):
                    total.add(container_request(container), times)
            return total
        replicas = manifests.get("replicas")
        if "template" in manifests and isinstance(replicas, int) and not isinstance(replicas, bool):
            times *= max(replicas, 0)
        for value in manifests.values():
            if isinstance(value, (dict, list)):
                total.add(requested(value, times))
    return total


def usage_report() -> list[dict[str, Any]]:
    """One entry per resource group (plus tasks without one): capacity, use, and per-project quota and use."""
    groups = db.session.scalars(sa.select(ResourceGroup).order_by(ResourceGroup.name)).all()
    projects = dict(db.session.execute(sa.select(Project.id, Project.name)).all())
    used: dict[int | None, Amount] = defaultdict(Amount)
    used_by_project: dict[tuple[int | None, int], Amount] = defaultdict(Amount)
    active = db.session.execute(
        sa.select(TaskRun.project_id, Task.resource_group_id, TaskRun.manifests)
        .join(Task, Task.id == TaskRun.task_id)
        .where(TaskRun.state.in_(list(TASK_ACTIVE)))
    ).all()
    for project_id, group_id, manifests in active:
        amount = requested(manifests or [])
        used[group_id].add(amount)
        used_by_project[(group_id, project_id)].add(amount)
    quotas: dict[int, list[Quota]] = defaultdict(list)
    for quota in db.session.scalars(sa.select(Quota)):
        quotas[quota.resource_group_id].append(quota)

    def projects_of(group_id: int | None) -> list[dict[str, Any]]:
        rows = {q.project_id: q for q in quotas.get(group_id, [])} if group_id is not None else {}
        ids = set(rows) | {p for (g, p) in used_by_project if g == group_id}
        return [{
            "project_id": pid, "project": projects.get(pid, str(pid)),
            "quota": Amount(rows[pid].cpu_millicores, rows[pid].memory_bytes, rows[pid].gpus).as_dict()
            if pid in rows else None,
            "used": used_by_project.get((group_id, pid), Amount()).as_dict(),
        } for pid in sorted(ids, key=lambda i: projects.get(i, ""))]

    report = [{
        "resource_group_id": g.id, "name": g.name, "cluster_id": g.cluster_id, "gpu_type": g.gpu_type,
        "capacity": Amount(g.cpu_millicores, g.memory_bytes, g.gpus).as_dict(),
        "used": used.get(g.id, Amount()).as_dict(), "projects": projects_of(g.id),
    } for g in groups]
    if None in used:
        report.append({"resource_group_id": None, "name": "(no resource group)", "cluster_id": None,
                       "gpu_type": None, "capacity": None, "used": used[None].as_dict(),
                       "projects": projects_of(None)})
    return report
