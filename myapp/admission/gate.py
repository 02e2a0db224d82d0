"""Admission per resource group: the SQL side of the one scheduling decision.

Before the run controller submits an attempt of a task in a resource group, `admit` builds the inputs of
`myapp.scheduler.policy.decide` from SQL (the group's nodes, the attempts running in it and waiting for
it, the run times of earlier attempts of the same tasks, the projects' quotas as a `Ledger`) and
submits the attempt only if the decision starts it: all its replicas at once (a gang) or nothing. A
waiting attempt keeps its reason ("waiting: project quota gpu 8/8") and its place in the queue
(`TaskRun.queue_position`). Borrowers the decision preempts are ended here and requeued by their own
run's controller (a new attempt, not counted as a failure: `TaskRun.preemptions`); their jobs are stopped
after the commit (myapp/pipelines/attempt_cleanup.py: a cancel waits out a job's grace period, which must not
hold the group's and the runs' rows), and until every one of them is stopped the group admits nothing (its
room is not free yet), so the job they made room for starts at its run's next look after the stop.

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
from collections.abc import Callable, Iterable
from typing import Any

import sqlalchemy as sa

from ..backends import Backend
from ..extensions import db
from ..models import (
    Notebook,
    PipelineRun,
    Project,
    ResourceGroup,
    RunState,
    Task,
    TaskRun,
    TaskState,
)
from ..models.states import TASK_ACTIVE
from ..notebooks.lifecycle import render_notebook
from ..scheduler.model import Running, Waiting
from ..scheduler.policy import decide
from ..scheduler.quota import Ledger
from .checkpoints import with_checkpoint_times
from .group_state import Entry, Snapshot, discovered, nodes_of, notebook_job, snapshot
from .usage import requested

RECHECK_MIN, RECHECK_PER_PLACE, RECHECK_MAX = 2.0, 0.5, 60.0  # seconds between looks of a waiting attempt
STOPPING = "waiting: a job preempted in its resource group is stopping to make room"
NO_NODE = "waiting: no schedulable node of the resource group on its cluster (cordoned, not ready or none)"


# ---- admission -------------------------------------------------------------------------------------------
Preempted = Callable[[TaskRun, Task], None]  # a running attempt ended here: its job is stopped after the commit


def admit(attempt: TaskRun, task: Task, now: dt.datetime, backend_for: Callable[[Task], Backend],
          preempted: Preempted = lambda victim, task: None) -> bool:
    """Whether the queued attempt may be submitted now (then it is placed); if not, its reason and
    queue position say why and where. Call with the run's row locked; the group's row stays locked
    until the caller commits (after its submit). Each attempt the decision preempts is handed to
    `preempted`, which stops its job after the commit (it makes no backend call itself)."""
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
    if stopping(group.id):
        if attempt.queue_position is None:  # else it keeps its reason and place (the beneficiary's: preempting)
            attempt.reason, attempt.queue_position = STOPPING, 1
        return False
    if attempt.requests is None and attempt.manifests:
        attempt.requests = requested(attempt.manifests).as_dict()
    db.session.flush()  # this pass's own submits count as running
    snap = snapshot(group, nodes)
    with_checkpoint_times(snap, backend_for(task))
    key = str(attempt.id)
    if key not in snap.entries:  # never so: the controller submits only in running runs
        attempt.reason = "waiting: not in its resource group's queue (its run is not running)"
        return False
    decision = snap.decide(now)
    started = {s.job_id: s.placement for s in decision.starts}
    beneficiary = db.session.get(Project, attempt.project_id)
    stopped = [_preempt(snap, snap.entries[k], now, preempted, beneficiary.name if beneficiary else "")
               for k in decision.preempt]
    if key in started and not stopped:
        attempt.placement = started[key]
        attempt.queue_position = None
        return True
    _wake((snap.entries[k].run_id for k in started if k != key), now)  # their own passes start them
    reason = next((r for r in decision.reasons if r.job_id == key), None)
    if reason is None:  # started, once the borrowers it needs are stopped (after this commit) or their passes let go
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
    if stopping(group.id):
        return STOPPING
    now = now or dt.datetime.now(dt.UTC)
    snap = snapshot(group, nodes)
    key = f"notebook:{nb.id}"
    running = [r for r in snap.running if r.job.id != key]
    job = notebook_job(nb, requested(render_notebook(nb)), asked=now)
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


def stopping(group_id: int) -> bool:
    """Is a job the group preempted still being stopped (its cleanup marked: attempt_cleanup)? Its room is not
    free until it is."""
    return db.session.scalar(sa.select(TaskRun.id).join(Task, Task.id == TaskRun.task_id).where(
        TaskRun.cleanup_at.is_not(None), TaskRun.preempted_at.is_not(None),
        Task.resource_group_id == group_id).limit(1)) is not None


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


def _preempt(snap: Snapshot, entry: Entry, now: dt.datetime, preempted: Preempted, beneficiary: str = "") -> bool:
    """End a running attempt the decision preempts, and have its run start the task again (a new attempt,
    `preemptions` one more, not a failure); `preempted` stops its job after the commit, and then says where
    the task resumes (checkpoints.resumes_after_stop: its save at the stop counts). True if it ended it here;
    False if it ended meanwhile, or its run is held by a pass right now (next time)."""
    locked = db.session.scalar(sa.select(PipelineRun.id).where(PipelineRun.id == entry.run_id)
                               .with_for_update(skip_locked=True))
    if locked is None:
        return False
    victim = db.session.get(TaskRun, entry.attempt_id, populate_existing=True)
    run = db.session.get(PipelineRun, entry.run_id)
    if victim is None or victim.state not in TASK_ACTIVE or run is None:
        return False  # it ended meanwhile: its room is free anyway
    task = db.session.get(Task, victim.task_id)
    count = victim.preemptions + 1
    borrowed = snap.ledger is not None and snap.ledger.borrowing(str(entry.project_id))
    why = "its project's quota was borrowed and its owner took it back" if borrowed else \
        f"the {snap.group.policy} policy gave its room to another job"
    whose = f" for project {beneficiary}'s quota" if borrowed and beneficiary else ""
    victim.transition(TaskState.CANCELLED, f"preempted in resource group {snap.group.name}{whose}: {why} "
                                           f"(preemption {count} of at most {snap.group.max_preemptions})",
                      now)
    victim.preempted_at = now
    run.next_reconcile_at = now
    preempted(victim, task)
    return True
