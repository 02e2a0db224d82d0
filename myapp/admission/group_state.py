"""A resource group as admission reads it from SQL: its nodes (discovered, listed, its totals or this
machine), the attempts running in it and waiting for it with what each requests, the notebooks started
in it, the run times of earlier attempts of the same tasks, and the projects' quotas as a `Ledger`:
the inputs of `myapp.scheduler.policy.decide`, gathered in one `Snapshot`.
"""
from __future__ import annotations

import datetime as dt
import functools
import os
from dataclasses import dataclass, field

import sqlalchemy as sa

from ..backends.local.gpu import nvml_devices
from ..extensions import db
from ..models import (
    ClusterKind,
    InferenceService,
    JobTemplate,
    Notebook,
    PipelineRun,
    Project,
    Quota,
    ResourceGroup,
    RunState,
    Task,
    TaskRun,
    TaskState,
)
from ..models.states import TASK_ACTIVE
from ..notebooks.lifecycle import ACTIVE, render_notebook
from ..outputs.checkpoints import SWITCH_ARG as CHECKPOINT_SWITCH
from ..scheduler.model import Decision, History, Job, Node, Running, Waiting
from ..scheduler.placement import Plan
from ..scheduler.policy import decide
from ..scheduler.quota import Ledger, Share
from .usage import Amount, requested, serving

HISTORY_ROWS = 200  # finished attempts of the group read for the run-time history
MACHINE = "local"  # the node name of a local cluster's machine


@dataclass
class Entry:
    """One attempt of the group as admission sees it."""

    attempt_id: int
    run_id: int
    project_id: int
    task_id: int
    state: TaskState
    amount: Amount
    created_at: dt.datetime
    started_at: dt.datetime | None
    placement: dict[str, int] | None
    preemptions: int
    checkpoints: bool = False
    task_name: str = ""
    namespace: str = ""
    checkpointed: float | None = None  # when its newest complete checkpoint was saved (gate.py reads it)

    @property
    def key(self) -> str:
        return str(self.attempt_id)


@dataclass
class Snapshot:
    group: ResourceGroup
    nodes: list[Node]
    running: list[Running] = field(default_factory=list)
    waiting: list[Waiting] = field(default_factory=list)
    entries: dict[str, Entry] = field(default_factory=dict)
    history: History = field(default_factory=History)
    ledger: Ledger | None = None

    def decide(self, now: dt.datetime) -> Decision:
        # A fresh ledger: the policy changes it as it plans.
        ledger = None if self.ledger is None else Ledger(self.ledger.capacity, self.ledger.shares, self.running)
        return decide(self.group.policy, now.timestamp(), self.nodes, self.running, self.waiting, self.history,
                      max_preemptions=self.group.max_preemptions, ledger=ledger)


def aware(value: dt.datetime) -> dt.datetime:
    """SQLite hands back naive datetimes; everything stored is UTC."""
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


# ---- capacity --------------------------------------------------------------------------------------------
@functools.cache
def machine_node() -> Node:
    """This machine as one node: its CPUs, memory and (NVML) GPUs; asked once per process."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return Node(MACHINE, len(nvml_devices()), cpu=float(os.cpu_count() or 1), memory=float(memory))


def discovered(group: ResourceGroup) -> bool:
    """Whether the group's nodes come from its cluster (`discover_nodes`) and have been listed once: then
    they alone are its capacity, even when none is schedulable (everything waits)."""
    return group.discover_nodes and group.discovered_at is not None


def nodes_of(group: ResourceGroup) -> list[Node]:
    """The group's nodes: the schedulable ones discovered on its cluster, else as listed, else one node of
    its totals, else (a local cluster) the machine's; [] when its capacity is unknown (not gated, unless
    `discovered`: then no node is schedulable). Until its first discovery a discovering group has its
    definition's nodes."""
    if discovered(group):
        return [Node(n["name"], int(n.get("gpus", 0)), cpu=n.get("cpu_millicores", 0) / 1000,
                     memory=float(n.get("memory_bytes", 0))) for n in group.discovered_nodes if n.get("schedulable")]
    if group.nodes:
        return [Node(n["name"], int(n.get("gpus", 0)), cpu=n.get("cpu_millicores", 0) / 1000,
                     memory=float(n.get("memory_bytes", 0))) for n in group.nodes]
    if group.gpus or group.cpu_millicores or group.memory_bytes:
        return [Node(group.name, group.gpus, cpu=group.cpu_millicores / 1000, memory=float(group.memory_bytes))]
    if group.cluster.kind == ClusterKind.LOCAL:
        return [machine_node()]
    return []


def _job(entry: Entry) -> Job:
    return Job(entry.key, f"task:{entry.task_id}", entry.amount.gpus, aware(entry.created_at).timestamp(),
               cpu=entry.amount.cpu_millicores / 1000, memory=float(entry.amount.memory_bytes),
               checkpoints=entry.checkpoints, project=str(entry.project_id))


def snapshot(group: ResourceGroup, nodes: list[Node], unassigned: bool = False, servers: bool = False) -> Snapshot:
    """The group's running and waiting attempts, quotas and history, as the decision reads them. With
    `unassigned` (the machine's default group, where work naming no group runs) the attempts and notebooks
    naming no group that run count as running here too; with `servers`, the started model servers as well
    (what the group's status shows; admission leaves them out)."""
    snap = Snapshot(group, nodes)
    unfinished = [TaskState.QUEUED, *TASK_ACTIVE]
    mine = Task.resource_group_id == group.id
    if unassigned:
        mine = sa.or_(mine, Task.resource_group_id.is_(None) & TaskRun.state.in_(list(TASK_ACTIVE)))
    rows = db.session.execute(
        sa.select(TaskRun.id, TaskRun.pipeline_run_id, TaskRun.project_id, TaskRun.task_id, TaskRun.state,
                  TaskRun.requests, TaskRun.created_at, TaskRun.submitted_at, TaskRun.placement,
                  TaskRun.preemptions, PipelineRun.state, JobTemplate.checkpoints, Task.name, Task.args,
                  Project.namespace)
        .join(Task, Task.id == TaskRun.task_id).join(PipelineRun, PipelineRun.id == TaskRun.pipeline_run_id)
        .join(Project, Project.id == TaskRun.project_id)
        .join(JobTemplate, JobTemplate.id == Task.template_id)
        .where(mine, TaskRun.state.in_(unfinished))
        .order_by(TaskRun.id)).all()
    first = nodes[0].name
    amounts = _requests({row[0]: row[5] for row in rows})
    for (aid, run_id, project_id, task_id, state, _, created, submitted, placement, preemptions, run,
         checkpoints, task_name, args, namespace) in rows:
        # a task may turn its template's checkpoints off (myapp/outputs/checkpoints.py)
        checkpoints = checkpoints and (args or {}).get(CHECKPOINT_SWITCH, True) is not False
        amount = amounts[aid]
        if state == TaskState.QUEUED and (amount is None or run != RunState.RUNNING):
            continue  # no manifests (yet), or its run is not going
        entry = Entry(aid, run_id, project_id, task_id, state, amount or Amount(), created, submitted,
                      placement, preemptions, checkpoints, task_name, namespace)
        snap.entries[entry.key] = entry
        job = _job(entry)
        if state == TaskState.QUEUED:
            snap.waiting.append(Waiting(job, preemptions=preemptions))
        else:  # admitted before this group had admission, or before its nodes changed: on the first node
            where = placement if placement and set(placement) <= {n.name for n in nodes} else {first: job.gpus}
            snap.running.append(Running(job, where, aware(submitted or created).timestamp(),
                                        preemptions=preemptions))
    finished = db.session.execute(
        sa.select(TaskRun.id, TaskRun.task_id, TaskRun.requests, TaskRun.started_at, TaskRun.finished_at)
        .join(Task, Task.id == TaskRun.task_id)
        .where(Task.resource_group_id == group.id, TaskRun.state == TaskState.SUCCEEDED,
               TaskRun.started_at.is_not(None), TaskRun.finished_at.is_not(None))
        .order_by(TaskRun.id.desc()).limit(HISTORY_ROWS)).all()
    done = _requests({row[0]: row[2] for row in finished})
    for aid, task_id, _, started, ended in reversed(finished):
        seconds = (aware(ended) - aware(started)).total_seconds()
        snap.history.add(f"task:{task_id}", (done[aid] or Amount()).gpus, max(seconds, 0.0))
    snap.running += _notebooks(group.id, nodes, snap.running, unassigned)
    if servers:
        snap.running += _servers(group.id, nodes, unassigned)
    quotas = db.session.scalars(sa.select(Quota).where(Quota.resource_group_id == group.id)).all()
    if quotas:
        capacity = (float(sum(n.gpus for n in nodes)), sum(n.cpu for n in nodes), sum(n.memory for n in nodes))
        shares = {str(q.project_id): Share(str(q.project_id), q.gpus, q.cpu_millicores / 1000, float(q.memory_bytes),
                                           can_borrow=q.can_borrow, can_lend=q.can_lend) for q in quotas}
        snap.ledger = Ledger(capacity, shares, snap.running)
    return snap


def _notebooks(group_id: int, nodes: list[Node], running: list[Running], unassigned: bool = False) -> list[Running]:
    """The group's started notebooks (submitted, not stopped; with `unassigned`, those naming no group too):
    running, never preempted, each on the node it fits beside the attempts (best fit, as admit_notebook
    placed it; in start order), else the first."""
    plan = Plan(nodes, running)
    out = []
    group = Notebook.resource_group_id == group_id
    if unassigned:
        group = sa.or_(group, Notebook.resource_group_id.is_(None))
    for nb in db.session.scalars(sa.select(Notebook).where(group, Notebook.state.in_(tuple(ACTIVE)))
                                 .order_by(Notebook.started_at, Notebook.id)):
        if (nb.job or {}).get("ref"):
            job = notebook_job(nb, requested(render_notebook(nb)))
            where = plan.fit(job) or {nodes[0].name: job.gpus}
            plan.take(job, where)
            out.append(Running(job, where, aware(nb.started_at or nb.created_at).timestamp(), preemptible=False))
    return out


def _servers(group_id: int, nodes: list[Node], unassigned: bool) -> list[Running]:
    """The group's model servers (with `unassigned`, those of services naming no group too), each service one
    job holding what its servers hold, running on the first node, never preempted."""
    where = InferenceService.resource_group_id == group_id
    if unassigned:
        where = sa.or_(where, InferenceService.resource_group_id.is_(None))
    return [Running(Job(f"service:{service.id}", "service", amount.gpus,
                        aware(service.created_at).timestamp(), cpu=amount.cpu_millicores / 1000,
                        memory=float(amount.memory_bytes), project=str(service.project_id)),
                    {nodes[0].name: amount.gpus}, aware(service.created_at).timestamp(), preemptible=False)
            for service, amount in serving(where)]


def notebook_job(nb: Notebook, amount: Amount, asked: dt.datetime | None = None) -> Job:
    return Job(f"notebook:{nb.id}", "notebook", amount.gpus, aware(asked or nb.created_at).timestamp(),
               cpu=amount.cpu_millicores / 1000, memory=float(amount.memory_bytes), project=str(nb.project_id))


def _requests(stored: dict[int, dict[str, int] | None]) -> dict[int, Amount | None]:
    """Each attempt's requests: as admission stored them, else read from its manifests (attempts it has
    not seen yet); None for an attempt without manifests."""
    out: dict[int, Amount | None] = {aid: Amount(**value) for aid, value in stored.items() if value}
    missing = [aid for aid in stored if aid not in out]
    for start in range(0, len(missing), 500):
        for aid, manifests in db.session.execute(sa.select(TaskRun.id, TaskRun.manifests)
                                                 .where(TaskRun.id.in_(missing[start:start + 500]))):
            out[aid] = requested(manifests) if manifests else None
    return out
