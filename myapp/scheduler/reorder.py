"""Sieve's service queues, for jobs that checkpoint: a job that has kept at least 1 GPU-hour of service
(it checkpoints, ran and was preempted) waits in the lower queues (1, 10, 100 GPU-hours, as
`tiresias-las`), after every job of the first queue (which sieve orders by expected GPU-time), the least
served first; a waiting job that does not fit takes the place of running jobs that checkpoint and are in
a lower queue than it, on the node where that stops the fewest GPUs (the lowest queue, then the youngest
run first).

A job that does not checkpoint keeps no service (a preemption starts it over), so it stays in the first
queue and is never stopped for order: with no job checkpointing sieve is what it was without queues.
Each job is stopped at most `max_preemptions` times. With quotas only jobs of the same project or of a
project borrowing beyond its share are stopped, so a project's share is never taken for another's order.
"""
from __future__ import annotations

import bisect
import math
from collections.abc import Collection
from operator import attrgetter

from .las import LAS_THRESHOLDS, level
from .model import Job, Running, Waiting, WaitingQueue
from .steps import Context

Candidates = dict[str, list[tuple[int, Running]]]  # node -> (queue, running job), the first to stop first
DEMOTED_FROM = LAS_THRESHOLDS[0]  # GPU-seconds of kept service: from here a job waits in the lower queues
_ATTAINED = attrgetter("attained")
_SERVED = attrgetter("attained", "job.submitted", "job.id")


def kept(attained: float, job: Job) -> float:
    """The service a job keeps across a preemption: none if it starts over."""
    return attained if job.checkpoints else 0.0


def demoted(waiting: Collection[Waiting]) -> list[Waiting]:
    """The waiting jobs that kept at least the first threshold of service, in the order they wait in
    the lower queues: the least service first (then submission), which also keeps the queues in order."""
    if isinstance(waiting, WaitingQueue):
        resumed = waiting.resumed()  # in that order already
        return [w for w in resumed[bisect.bisect_left(resumed, DEMOTED_FROM, key=_ATTAINED):] if w.job.checkpoints]
    return sorted((w for w in waiting if w.job.checkpoints and w.attained >= DEMOTED_FROM), key=_SERVED)


def _candidates(ctx: Context) -> Candidates:
    """Per node, the running jobs that may be stopped for order, the ones to stop first first: the
    lowest queue, then the youngest run."""
    entries: dict[str, list[tuple[int, float, str, Running]]] = {}
    bound, now = ctx.max_preemptions, ctx.now
    first, second, third = LAS_THRESHOLDS
    for r in ctx.running:  # every running job at most decisions: kept to plain local reads
        job = r.job
        if job.checkpoints and r.preemptions < bound and r.preemptible and r.started <= now:
            attained = r.attained + job.gpus * (now - r.started)
            if attained >= first:
                queue = 1 if attained < second else 2 if attained < third else 3
                for name in r.placement:
                    entries.setdefault(name, []).append((queue, r.started, job.id, r))
    return {name: [(e[0], e[3]) for e in sorted(runs, reverse=True)] for name, runs in entries.items()}


class Stoppable:
    """The running jobs one decision may stop for order, worked out when first asked for."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx
        self._on: Candidates | None = None
        self.lowest = 0  # the lowest queue of any of them (0: none)

    def on(self) -> Candidates:
        if self._on is None:
            self._on = _candidates(self._ctx)
            self.lowest = max((runs[0][0] for runs in self._on.values()), default=0)  # each list starts lowest
        return self._on


def make_room(ctx: Context, w: Waiting, stoppable: Stoppable) -> dict[str, int] | None:
    """A placement for `w` after stopping running jobs of lower queues where that stops the fewest GPUs;
    None, with nothing stopped, if that makes no room."""
    on = stoppable.on()
    job = w.job
    queue = level(kept(w.attained, job))
    if queue >= stoppable.lowest:
        return None  # no running job it may stop is in a lower queue than it
    plan, ledger = ctx.plan, ctx.ledger
    gone = set(ctx.decision.preempt)
    single = plan.single_node(job)
    options: list[tuple[int, int, list[Running]]] = []  # (GPUs stopped, node index, runs)
    best = math.inf  # a single-node job: the fewest GPUs stopped so far (a later node must stop fewer)
    for index, name in enumerate(plan.order):
        want = job.gpus if single else plan.nodes[name].gpus
        free = plan.gpus[name]
        if single and (free >= want or want - free >= best or name not in on):
            continue  # it fits there already (CPU or memory is short), or that node cannot do better
        stopped: list[Running] = []
        evicted = 0
        for victim_queue, r in on.get(name, ()):
            if free >= want or victim_queue <= queue:
                break
            if r.job.id in gone or (ledger is not None and r.job.project != job.project
                                    and not ledger.borrowing(r.job.project)):
                continue
            stopped.append(r)
            free += r.placement[name]
            evicted += r.job.gpus
        if free >= want:
            options.append((evicted, index, stopped))
            if single:
                best = min(best, evicted)
    count = 1 if single else plan.whole_nodes_needed(job)
    if len(options) < count:
        return None
    options.sort(key=lambda o: (o[0], o[1]))
    chosen = {r.job.id: r for _, _, stopped in options[:count] for r in stopped}
    for r in chosen.values():
        plan.release(r.job, r.placement)
        if ledger is not None:
            ledger.release(r.job)
    targets = {plan.order[index] for _, index, _ in options[:count]}
    placement = plan.fit(job, [name for name in plan.order if name not in targets])
    if placement is None:  # CPU or memory still short: keep them running
        for r in chosen.values():
            plan.take(r.job, r.placement)
            if ledger is not None:
                ledger.take(r.job)
        return None
    ctx.decision.preempt += list(chosen)
    return placement
