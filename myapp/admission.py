"""Admission per resource group: the SQL side of the one scheduling decision.

Before the run controller submits an attempt of a task in a resource group, `admit` builds the inputs of
`myapp.scheduler.policy.decide` from SQL (the group's nodes, the attempts running in it and waiting for
it, the run times of earlier attempts of the same tasks, the projects' quotas as a `Ledger`) and
submits the attempt only if the decision starts it: all its replicas at once (a gang) or nothing. A
waiting attempt keeps its reason ("waiting: project quota gpu 8/8") and its place in the queue
(`TaskRun.queue_position`). Borrowers the decision preempts are stopped here and requeued by their own
run's controller (a new attempt, not counted as a failure: `TaskRun.preemptions`).

Consistency: `admit` locks the group's row (SELECT ... FOR UPDATE on PostgreSQL; on SQLite the pass
already holds the one write lock) and the controller keeps it until the pass commits, after the submit:
two workers never admit past capacity. A pass waits for the first group it locks only (`lock_group`), and
another run's rows are only ever taken with SKIP LOCKED, so a pass holding a group never waits for a pass
that waits for it.

Notebooks take part too: a started notebook counts as running in its group and project (never
preempted), and `admit_notebook` starts one only while it fits what is free and its project's quota.

Tasks without a resource group, and groups whose capacity is unknown (a Kubernetes group with no
capacity given), are not gated.
"""
from __future__ import annotations

import datetime as dt
import functools
import os
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import sqlalchemy as sa

from .backends import Backend, BackendError, JobRef, LogArchive
from .backends.local.gpu import nvml_devices
from .extensions import db
from .models import (
    ClusterKind,
    JobTemplate,
    Notebook,
    Pipeline,
    PipelineRun,
    Project,
    Quota,
    ResourceGroup,
    RunState,
    Task,
    TaskRun,
    TaskState,
)
from .models.states import TASK_ACTIVE
from .notebooks.lifecycle import ACTIVE, render_notebook
from .scheduler.model import Decision, History, Job, Node, Running, Waiting
from .scheduler.placement import Plan
from .scheduler.policy import decide
from .scheduler.quota import Ledger, Share
from .usage import Amount, requested

RECHECK_MIN, RECHECK_PER_PLACE, RECHECK_MAX = 2.0, 0.5, 60.0  # seconds between looks of a waiting attempt
HISTORY_ROWS = 200  # finished attempts of the group read for the run-time history
MAX_SAMPLES = 720  # metrics samples kept of a preempted attempt (as the controller keeps of any)
MACHINE = "local"  # the node name of a local cluster's machine
NO_NODE = "waiting: no schedulable node of the resource group on its cluster (cordoned, not ready or none)"


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


def _aware(value: dt.datetime) -> dt.datetime:
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
    return Job(entry.key, f"task:{entry.task_id}", entry.amount.gpus, _aware(entry.created_at).timestamp(),
               cpu=entry.amount.cpu_millicores / 1000, memory=float(entry.amount.memory_bytes),
               checkpoints=entry.checkpoints, project=str(entry.project_id))


def snapshot(group: ResourceGroup, nodes: list[Node]) -> Snapshot:
    """The group's running and waiting attempts, quotas and history, as the decision reads them."""
    snap = Snapshot(group, nodes)
    unfinished = [TaskState.QUEUED, *TASK_ACTIVE]
    rows = db.session.execute(
        sa.select(TaskRun.id, TaskRun.pipeline_run_id, TaskRun.project_id, TaskRun.task_id, TaskRun.state,
                  TaskRun.requests, TaskRun.created_at, TaskRun.submitted_at, TaskRun.placement,
                  TaskRun.preemptions, PipelineRun.state, JobTemplate.checkpoints)
        .join(Task, Task.id == TaskRun.task_id).join(PipelineRun, PipelineRun.id == TaskRun.pipeline_run_id)
        .join(JobTemplate, JobTemplate.id == Task.template_id)
        .where(Task.resource_group_id == group.id, TaskRun.state.in_(unfinished))
        .order_by(TaskRun.id)).all()
    first = nodes[0].name
    amounts = _requests({row[0]: row[5] for row in rows})
    for (aid, run_id, project_id, task_id, state, _, created, submitted, placement, preemptions, run,
         checkpoints) in rows:
        amount = amounts[aid]
        if state == TaskState.QUEUED and (amount is None or run != RunState.RUNNING):
            continue  # no manifests (yet), or its run is not going
        entry = Entry(aid, run_id, project_id, task_id, state, amount or Amount(), created, submitted,
                      placement, preemptions, checkpoints)
        snap.entries[entry.key] = entry
        job = _job(entry)
        if state == TaskState.QUEUED:
            snap.waiting.append(Waiting(job, preemptions=preemptions))
        else:  # admitted before this group had admission, or before its nodes changed: on the first node
            where = placement if placement and set(placement) <= {n.name for n in nodes} else {first: job.gpus}
            snap.running.append(Running(job, where, _aware(submitted or created).timestamp(),
                                        preemptions=preemptions))
    finished = db.session.execute(
        sa.select(TaskRun.id, TaskRun.task_id, TaskRun.requests, TaskRun.started_at, TaskRun.finished_at)
        .join(Task, Task.id == TaskRun.task_id)
        .where(Task.resource_group_id == group.id, TaskRun.state == TaskState.SUCCEEDED,
               TaskRun.started_at.is_not(None), TaskRun.finished_at.is_not(None))
        .order_by(TaskRun.id.desc()).limit(HISTORY_ROWS)).all()
    done = _requests({row[0]: row[2] for row in finished})
    for aid, task_id, _, started, ended in reversed(finished):
        seconds = (_aware(ended) - _aware(started)).total_seconds()
        snap.history.add(f"task:{task_id}", (done[aid] or Amount()).gpus, max(seconds, 0.0))
    snap.running += _notebooks(group.id, nodes, snap.running)
    quotas = db.session.scalars(sa.select(Quota).where(Quota.resource_group_id == group.id)).all()
    if quotas:
        capacity = (float(sum(n.gpus for n in nodes)), sum(n.cpu for n in nodes), sum(n.memory for n in nodes))
        shares = {str(q.project_id): Share(str(q.project_id), q.gpus, q.cpu_millicores / 1000, float(q.memory_bytes),
                                           can_borrow=q.can_borrow, can_lend=q.can_lend) for q in quotas}
        snap.ledger = Ledger(capacity, shares, snap.running)
    return snap


def _notebooks(group_id: int, nodes: list[Node], running: list[Running]) -> list[Running]:
    """The group's started notebooks (submitted, not stopped): running, never preempted, each on the node
    it fits beside the attempts (best fit, as admit_notebook placed it; in start order), else the first."""
    plan = Plan(nodes, running)
    out = []
    for nb in db.session.scalars(sa.select(Notebook).where(Notebook.resource_group_id == group_id,
                                                           Notebook.state.in_(tuple(ACTIVE)))
                                 .order_by(Notebook.started_at, Notebook.id)):
        if (nb.job or {}).get("ref"):
            job = _notebook_job(nb, requested(render_notebook(nb)))
            where = plan.fit(job) or {nodes[0].name: job.gpus}
            plan.take(job, where)
            out.append(Running(job, where, _aware(nb.started_at or nb.created_at).timestamp(), preemptible=False))
    return out


def _notebook_job(nb: Notebook, amount: Amount, asked: dt.datetime | None = None) -> Job:
    return Job(f"notebook:{nb.id}", "notebook", amount.gpus, _aware(asked or nb.created_at).timestamp(),
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


# ---- admission -------------------------------------------------------------------------------------------
def admit(attempt: TaskRun, task: Task, now: dt.datetime, backend_for: Callable[[Task], Backend],
          archive: LogArchive | None = None) -> bool:
    """Whether the queued attempt may be submitted now (then it is placed); if not, its reason and
    queue position say why and where. Call with the run's row locked; the group's row stays locked
    until the caller commits (after its submit)."""
    if task.resource_group_id is None:
        return True
    group = lock_group(task.resource_group_id)
    if group is BUSY:
        if attempt.reason != (busy := "waiting: its resource group is admitting another job"):
            attempt.reason = busy
        return False
    nodes = nodes_of(group) if group is not None else []
    if group is None or not (nodes or discovered(group)):
        return True
    if not nodes:
        attempt.reason, attempt.queue_position = NO_NODE, None
        return False
    if attempt.requests is None and attempt.manifests:
        attempt.requests = requested(attempt.manifests).as_dict()
    db.session.flush()  # this pass's own submits count as running
    snap = snapshot(group, nodes)
    key = str(attempt.id)
    if key not in snap.entries:  # never so: the controller submits only in running runs
        attempt.reason = "waiting: not in its resource group's queue (its run is not running)"
        return False
    decision = snap.decide(now)
    started = {s.job_id: s.placement for s in decision.starts}
    stopped = [_preempt(snap, snap.entries[k], now, backend_for, archive) for k in decision.preempt]
    if key in started and all(stopped):
        attempt.placement = started[key]
        attempt.queue_position = None
        return True
    _wake((snap.entries[k].run_id for k in started if k != key), now)  # their own passes start them
    reason = next((r for r in decision.reasons if r.job_id == key), None)
    if reason is None:  # started, but a borrower it needs could not be stopped yet (its pass holds it)
        text, position = "waiting: preempting a borrower to make room", 1
    else:
        text, position = reason.text, reason.position
    if attempt.reason != text:
        attempt.reason = text
    if attempt.queue_position != position:
        attempt.queue_position = position
    return False


def admit_notebook(nb: Notebook, now: dt.datetime | None = None) -> str | None:
    """Why the notebook may not start now ("waiting: project quota cpu 2/2"), or None: it is placed.

    The notebook joins the group's queue as a job asking now, and the group's policy decides, with its
    quotas (borrowing included) and its reservations, but never preempting for it. It starts only if that
    decision starts it and no attempt queued before it is left waiting for room (those waiting for their
    own project's quota do not count): a stream of notebooks cannot starve a big gang waiting for room.
    Its worker asks again every few seconds. The group stays locked until the caller commits (after its
    submit)."""
    if nb.resource_group_id is None:
        return None
    group = lock_group(nb.resource_group_id)  # the notebook's reconcile locks no other group: never BUSY
    nodes = nodes_of(group) if group is not None else []
    if group is None or not (nodes or discovered(group)):
        return None
    if not nodes:
        return NO_NODE
    now = now or dt.datetime.now(dt.UTC)
    snap = snapshot(group, nodes)
    key = f"notebook:{nb.id}"
    running = [r for r in snap.running if r.job.id != key]
    job = _notebook_job(nb, requested(render_notebook(nb)), asked=now)
    ledger = None if snap.ledger is None else Ledger(snap.ledger.capacity, snap.ledger.shares, running)
    decision = decide(group.policy, now.timestamp(), nodes, running, [*snap.waiting, Waiting(job)], snap.history,
                      max_preemptions=0, ledger=ledger)
    if key not in {s.job_id for s in decision.starts}:
        reason = next(r for r in decision.reasons if r.job_id == key)
        return reason.text
    started = {s.job_id for s in decision.starts}
    queued = {w.job.id: w.job for w in snap.waiting}
    after = None if snap.ledger is None else Ledger(  # the quotas once this decision's starts run
        snap.ledger.capacity, snap.ledger.shares, [*running, *(Running(queued[k], {}, 0.0) for k in started
                                                              if k in queued)])
    ahead = [r for r in decision.reasons if r.job_id in queued
             and (after is None or after.refuses(queued[r.job_id]) is None)]
    if ahead:
        first = snap.entries[ahead[0].job_id]
        return (f"waiting: behind {len(ahead)} job(s) of the group's queue waiting for room "
                f"(first: task run {first.attempt_id})")
    return None


BUSY: Any = object()  # lock_group: another pass holds the group, and this one may not wait for it


def lock_group(group_id: int) -> ResourceGroup | None:
    """The group's row, locked until the transaction ends: admissions to one group go one at a time.

    A transaction waits for the first group it locks only: for any other it takes the lock if free
    (SKIP LOCKED) or gets BUSY (the attempt is admitted at a later pass). A pass waiting for a group
    then holds no other group, so passes admitting to two groups in opposite orders cannot deadlock."""
    held = _held_groups()
    query = sa.select(ResourceGroup).where(ResourceGroup.id == group_id).execution_options(populate_existing=True)
    if not held or group_id in held:
        group = db.session.scalar(query.with_for_update())
    else:
        group = db.session.scalar(query.with_for_update(skip_locked=True))
        if group is None and db.session.get(ResourceGroup, group_id) is not None:
            return BUSY
    if group is not None:
        held.add(group_id)
    return group


def _held_groups() -> set[int]:
    """The groups this transaction has locked (kept in the session, reset with each transaction)."""
    db.session.connection()  # the transaction has begun
    transaction, info = db.session().get_transaction(), db.session.info
    if info.get("admission_transaction") is not transaction:
        info["admission_transaction"], info["admission_groups"] = transaction, set()
    groups: set[int] = info["admission_groups"]
    return groups


def recheck_after(attempt: TaskRun) -> float | None:
    """Seconds until a queued attempt waiting for admission is looked at again (its controller's timer;
    the first in line sooner), or None if it is not waiting for admission."""
    if attempt.state != TaskState.QUEUED or attempt.queue_position is None:
        return None
    return min(RECHECK_MAX, RECHECK_MIN + RECHECK_PER_PLACE * (attempt.queue_position - 1))


def _wake(run_ids: Iterable[int], now: dt.datetime) -> None:
    """Runs whose attempts the decision starts: due now (beat requests them), unless a pass holds them."""
    ids = sorted(set(run_ids))
    if not ids:
        return
    free = list(db.session.scalars(sa.select(PipelineRun.id).where(
        PipelineRun.id.in_(ids), PipelineRun.state == RunState.RUNNING).with_for_update(skip_locked=True)))
    if free:
        db.session.execute(sa.update(PipelineRun).where(PipelineRun.id.in_(free)).values(next_reconcile_at=now)
                           .execution_options(synchronize_session=False))


def _preempt(snap: Snapshot, entry: Entry, now: dt.datetime, backend_for: Callable[[Task], Backend],
             archive: LogArchive | None) -> bool:
    """Stop a running attempt the decision preempts, and have its run start the task again (a new attempt,
    `preemptions` one more, not a failure). False if its run is held by a pass right now (next time)."""
    locked = db.session.scalar(sa.select(PipelineRun.id).where(PipelineRun.id == entry.run_id)
                               .with_for_update(skip_locked=True))
    if locked is None:
        return False
    victim = db.session.get(TaskRun, entry.attempt_id, populate_existing=True)
    run = db.session.get(PipelineRun, entry.run_id)
    if victim is None or victim.state not in TASK_ACTIVE or run is None:
        return True  # it ended meanwhile: its room is free anyway
    task = db.session.get(Task, victim.task_id)
    left = ""
    if victim.backend_ref:
        backend = backend_for(task)
        ref = JobRef.from_dict(victim.backend_ref)
        try:
            backend.cancel(ref)
        except BackendError:
            return False  # still running: tried again at the next admission
        if archive is not None:  # as the controller does with every finished attempt
            try:
                victim.metrics = [asdict(sample) for sample in backend.metrics(ref)][-MAX_SAMPLES:]
                backend.cleanup(ref, archive)
            except BackendError as exc:  # stopped all the same; say what was left behind
                left = f" (cleanup failed: {exc})"
    count = victim.preemptions + 1
    borrowed = snap.ledger is not None and snap.ledger.borrowing(str(entry.project_id))
    why = "its project's quota was borrowed and its owner took it back" if borrowed else \
        f"the {snap.group.policy} policy gave its room to another job"
    victim.transition(TaskState.CANCELLED, f"preempted in resource group {snap.group.name}: {why} "
                                           f"(preemption {count} of at most {snap.group.max_preemptions}); "
                                           f"the task starts again{left}", now)
    victim.preempted_at = now
    run.next_reconcile_at = now
    return True


# ---- status (GET /api/v1/resource_group/{id}/status) ------------------------------------------------------
def _amount(gpus: float, cpu: float, memory: float) -> dict[str, int]:
    return {"gpus": int(gpus), "cpu_millicores": round(cpu * 1000), "memory_bytes": int(memory)}


def _iso(value: dt.datetime | None) -> str | None:
    return None if value is None else _aware(value).astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def status(group: ResourceGroup, now: dt.datetime) -> dict[str, Any]:
    """Capacity, use, each project's quota, use and borrowing, the running attempts and the queue with
    its reasons, as the next decision sees them."""
    nodes = nodes_of(group)
    snap = snapshot(group, nodes) if nodes else Snapshot(group, [])
    decision = snap.decide(now) if nodes else Decision()
    reasons = {r.job_id: r for r in decision.reasons}
    ledger = snap.ledger or Ledger((0.0, 0.0, 0.0), {}, snap.running)
    quotas = {str(q.project_id): q for q in db.session.scalars(
        sa.select(Quota).where(Quota.resource_group_id == group.id))}
    names = _names(snap.entries.values(), [q.project_id for q in quotas.values()])
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
        if entry is None:  # a notebook: counted in the use above, not an attempt
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
