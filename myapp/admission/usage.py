"""Capacity against use: what running attempts request, per resource group and project.

Use is read from the manifests each attempt submitted (the same numbers the scheduler
sees): every container's requests, times the replicas of the pod template it is in.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from flask import current_app

from ..extensions import db
from ..models import (
    LOCAL_DEFAULT_GROUP,
    Cluster,
    ClusterKind,
    InferenceService,
    JobTemplate,
    Notebook,
    Project,
    Quota,
    ResourceGroup,
    ServiceState,
    Task,
    TaskRun,
)
from ..models.states import TASK_ACTIVE
from ..notebooks.lifecycle import ACTIVE, render_notebook
from ..rendering.quantity import parse_quantity

SERVING_TEMPLATE = "deploy-service"  # the catalog template model servers render from (serving/manifests.py)

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


def local_default_group() -> int | None:
    """The resource group where work naming none counts: `myapp init`'s default group of this machine, when
    the platform's default backend is local (it runs such work here); None otherwise."""
    if current_app.config.get("MYAPP_BACKEND", "local") != "local":
        return None
    return db.session.scalar(
        sa.select(ResourceGroup.id).join(Cluster, Cluster.id == ResourceGroup.cluster_id)
        .where(Cluster.kind == ClusterKind.LOCAL, ResourceGroup.name == LOCAL_DEFAULT_GROUP)
        .order_by(ResourceGroup.id).limit(1))


def amount_of(resources: dict[str, Any] | None) -> Amount:
    """A resources mapping as the API takes it ({cpu, memory, gpu}) as an Amount."""
    given = resources or {}
    cpu, memory = given.get("cpu"), given.get("memory")
    return Amount(int(parse_quantity(cpu) * 1000) if cpu is not None else 0,
                  int(parse_quantity(memory)) if memory is not None else 0, int(given.get("gpu") or 0))


@dataclass
class Use:
    """What one project runs in one group: the resources, and how many of each kind."""

    amount: Amount = field(default_factory=Amount)
    tasks: int = 0
    notebooks: int = 0
    services: int = 0

    def as_dict(self) -> dict[str, int]:
        return {"tasks": self.tasks, "notebooks": self.notebooks, "services": self.services}


def _running(default_group: int | None) -> dict[tuple[int | None, int], Use]:
    """(group, project) -> what runs there: active attempts (their manifests' requests), started notebooks
    (their rendered pod's) and model servers (each version's server: the service's resources, else the
    serving template's default, times its minimum replicas). Work naming no group counts in `default_group`."""
    uses: dict[tuple[int | None, int], Use] = defaultdict(Use)

    def use(group_id: int | None, project_id: int) -> Use:
        return uses[(group_id if group_id is not None else default_group, project_id)]

    for project_id, group_id, manifests in db.session.execute(
            sa.select(TaskRun.project_id, Task.resource_group_id, TaskRun.manifests)
            .join(Task, Task.id == TaskRun.task_id).where(TaskRun.state.in_(list(TASK_ACTIVE)))):
        entry = use(group_id, project_id)
        entry.amount.add(requested(manifests or []))
        entry.tasks += 1
    for nb in db.session.scalars(sa.select(Notebook).where(Notebook.state.in_(list(ACTIVE)))):
        if (nb.job or {}).get("ref"):  # submitted: it holds what it asked for
            entry = use(nb.resource_group_id, nb.project_id)
            entry.amount.add(requested(render_notebook(nb)))
            entry.notebooks += 1
    for service, amount in serving():
        entry = use(service.resource_group_id, service.project_id)
        entry.amount.add(amount)
        entry.services += 1
    return uses


def serving(where: Any = None) -> list[tuple[InferenceService, Amount]]:
    """The services (`where` narrows them) whose model servers were started, each with what its servers
    hold: the service's resources, else the serving template's default, per server times its minimum
    replicas."""
    server_default = db.session.scalar(sa.select(JobTemplate.default_resources)
                                       .where(JobTemplate.name == SERVING_TEMPLATE).limit(1))
    out = []
    for service in db.session.scalars(sa.select(InferenceService).where(InferenceService.state.in_(
            [ServiceState.PENDING, ServiceState.RUNNING]), *([] if where is None else [where]))
            .order_by(InferenceService.id)):
        servers = [key for key, ref in (service.jobs or {}).items() if key != "router" and "backend" in ref]
        if servers:
            amount = Amount()
            amount.add(amount_of({**(server_default or {}), **(service.resources or {})}),
                       len(servers) * max(service.min_replicas, 1))
            out.append((service, amount))
    return out


def usage_report() -> list[dict[str, Any]]:
    """One entry per resource group (plus work naming none, unless it counts in this machine's default
    group): capacity, use, and per project its quota, use and what runs (attempts, notebooks, model servers)."""
    groups = db.session.scalars(sa.select(ResourceGroup).order_by(ResourceGroup.name)).all()
    projects = dict(db.session.execute(sa.select(Project.id, Project.name)).all())
    by_project = _running(local_default_group())
    used: dict[int | None, Amount] = defaultdict(Amount)
    for (group_id, _), entry in by_project.items():
        used[group_id].add(entry.amount)
    quotas: dict[int, list[Quota]] = defaultdict(list)
    for quota in db.session.scalars(sa.select(Quota)):
        quotas[quota.resource_group_id].append(quota)

    def projects_of(group_id: int | None) -> list[dict[str, Any]]:
        rows = {q.project_id: q for q in quotas.get(group_id, [])} if group_id is not None else {}
        ids = set(rows) | {p for (g, p) in by_project if g == group_id}
        return [{
            "project_id": pid, "project": projects.get(pid, str(pid)),
            "quota": Amount(rows[pid].cpu_millicores, rows[pid].memory_bytes, rows[pid].gpus).as_dict()
            if pid in rows else None,
            "used": by_project.get((group_id, pid), Use()).amount.as_dict(),
            "running": by_project.get((group_id, pid), Use()).as_dict(),
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
