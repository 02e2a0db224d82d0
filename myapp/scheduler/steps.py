"""The steps every policy takes within one decision: the `Context` a decision carries (the plan of free
room, the running and waiting jobs, the history, the quota ledger, what has started so far), taking a
placement for a job, preempting the worst-ranked running jobs to make room for one, and reclaiming room
from projects borrowing over their share; with the waiting jobs' sizes and classes and the C-level sort
keys the policies share. `policy.py` builds the context and holds the policies that use these steps.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from operator import attrgetter

from .model import RESTART_SECONDS, Decision, History, Job, Running, Start, Waiting, WaitingQueue
from .placement import Plan
from .quota import Ledger


@dataclass
class Context:
    now: float
    plan: Plan
    running: Sequence[Running]
    waiting: Collection[Waiting]  # a list, or a WaitingQueue
    history: History
    explain: bool
    max_preemptions: int
    ledger: Ledger | None = None
    started: list[Waiting] = field(default_factory=list)
    decision: Decision = field(default_factory=Decision)
    # Projects over their share when the decision began: only their running jobs may be reclaimed (a
    # project pushed over by this decision's own starts keeps its running jobs; those starts wait instead).
    borrowing_before: frozenset[str] = frozenset()


def _sizes(waiting: Collection[Waiting]) -> set[int]:
    return waiting.sizes() if isinstance(waiting, WaitingQueue) else set(map(_GPUS, waiting))


def _classes(waiting: Collection[Waiting]) -> Mapping[tuple[str, int], Sequence[Waiting]]:
    """The waiting jobs by class (group, GPUs), each in arrival order (read only)."""
    if isinstance(waiting, WaitingQueue):
        return waiting.classes()
    return {key: list(members) for key, members in groupby(sorted(waiting, key=_CLASS_ARRIVAL), key=_CLASS)}


def _refused(ctx: Context, job: Job) -> str | None:
    return None if ctx.ledger is None else ctx.ledger.refuses(job)


def _take(ctx: Context, w: Waiting, placement: dict[str, int]) -> None:
    ctx.plan.take(w.job, placement)
    if ctx.ledger is not None:
        ctx.ledger.take(w.job)
    ctx.decision.starts.append(Start(w.job.id, placement))
    ctx.started.append(w)


def _reclaim(ctx: Context, job: Job) -> dict[str, int] | None:
    """A job within its project's share that does not fit takes the room back from borrowers: running jobs
    of other projects that use more than their share, under the preemption bound; those that checkpoint
    first, cheapest first (the work since their newest checkpoint plus the restart), the others only as a
    last resort, the least work lost first (the most recently started). None if even all of them would not
    make room (then nothing is stopped)."""
    ledger = ctx.ledger
    if ledger is None or not ledger.within(job):
        return None
    gone = set(ctx.decision.preempt)
    borrowers = sorted((r for r in ctx.running if r.job.project != job.project and r.job.id not in gone
                        and r.preemptible and r.preemptions < ctx.max_preemptions
                        and r.job.project in ctx.borrowing_before and ledger.borrowing(r.job.project)),
                       key=lambda r: (not r.job.checkpoints, r.lost_at(ctx.now, RESTART_SECONDS), -r.started,
                                      r.job.id))
    if not borrowers:
        return None
    return _preempt_for(ctx.plan, job, 0.0, [(1.0, r) for r in borrowers], ctx.decision, ledger,
                        still=lambda r: ledger.borrowing(r.job.project))


def _next_crossing(ctx: Context, thresholds: Sequence[float], decision: Decision) -> float | None:
    """When the next running job moves to a lower queue (a started job has attained 0 more so far)."""
    gone = set(decision.preempt)
    times = []
    for r in ctx.running:
        if r.job.id in gone or not r.job.gpus:
            continue
        attained = r.attained_at(ctx.now)
        limit = next((t for t in thresholds if attained < t), None)
        if limit is not None:
            times.append(ctx.now + (limit - attained) / r.job.gpus)
    for w in ctx.started:
        limit = next((t for t in thresholds if w.attained < t), None)
        if limit is not None and w.job.gpus:
            times.append(ctx.now + (limit - w.attained) / w.job.gpus)
    return min(times, default=None)


def _preempt_for(plan: Plan, job: Job, rank: float, candidates: list[tuple[float, Running]],
                 decision: Decision, ledger: Ledger | None = None,
                 still: Callable[[Running], bool] | None = None) -> dict[str, int] | None:
    """Free room for `job` by stopping the worst-ranked candidates, as few as needed; None if even
    all of the worse-ranked ones would not make room (then nothing is stopped). `still`: whether a
    candidate may still be stopped, given those chosen before it."""
    chosen: list[Running] = []
    placement = None
    gone = set(decision.preempt)
    for victim_rank, victim in candidates:
        if victim_rank <= rank:
            break  # sorted worst first: the rest rank as well as the job or better
        if victim.job.id in gone or (still is not None and not still(victim)):
            continue
        plan.release(victim.job, victim.placement)
        if ledger is not None:
            ledger.release(victim.job)
        chosen.append(victim)
        placement = plan.fit(job)
        if placement is not None:
            break
    if placement is None:
        for victim in chosen:
            plan.take(victim.job, victim.placement)
            if ledger is not None:
                ledger.take(victim.job)
        return None
    for victim in reversed(chosen[:-1]):  # keep running whoever was not needed after all
        plan.take(victim.job, victim.placement)
        if plan.fit(job) is None:
            plan.release(victim.job, victim.placement)
        else:
            chosen.remove(victim)
            if ledger is not None:
                ledger.take(victim.job)
    decision.preempt += [v.job.id for v in chosen]
    return plan.fit(job)


_arrival = attrgetter("job.submitted", "job.id")  # C-level keys: the simulator sorts long queues often
_GPUS = attrgetter("job.gpus")
_SUBMITTED = attrgetter("job.submitted")
_STARTED = attrgetter("started")
_CLASS = attrgetter("job.group", "job.gpus")
_CLASS_ARRIVAL = attrgetter("job.group", "job.gpus", "job.submitted", "job.id")
