"""`tiresias-las`: the reference our policy is compared with, a multi-queue variant of Tiresias'
discretized 2D-LAS (NSDI '19) without its starvation knob, specified so that anyone can rebuild it:

- attained service = GPUs x seconds run, over all runs; queues split at 1, 10 and 100 GPU-hours;
- the waiting jobs in queue order, FIFO by submission within a queue; each starts if it fits;
- one that does not fit preempts running jobs of lower queues (lowest queue first, then the latest
  submitted) on the node that needs the fewest GPUs evicted (lowest index on ties); a gang larger than
  a node takes the whole nodes that need the fewest evicted; no bound on preemptions;
- jobs of at most a node's GPUs go on one node by best fit, larger ones on whole free nodes (`Plan.fit`).

The 30 s restart of a preempted job is the simulator's (`simulate.RESTART_SECONDS`), for every policy.
"""
from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Collection, Iterator
from operator import attrgetter

from .model import Decision, Job, Reason, Running, Waiting, WaitingQueue
from .steps import Context, _arrival, _next_crossing, _reclaim, _refused, _sizes, _take

LAS_THRESHOLDS = (3600.0, 36_000.0, 360_000.0)  # GPU-seconds: 1, 10 and 100 GPU-hours, 4 queues
_ATTAINED = attrgetter("attained")
_SERVED = attrgetter("attained", "job.submitted", "job.id")
_VICTIM_ORDER = attrgetter("job.submitted", "job.id")


def level(attained: float) -> int:
    """The queue of a job that has received `attained` GPU-seconds (0 is served first)."""
    return bisect.bisect_right(LAS_THRESHOLDS, attained)


def las_order(waiting: Collection[Waiting]) -> Iterator[Waiting]:
    """The waiting jobs by (queue, submitted, id), lazily: a decision that stops early sorts little."""
    if isinstance(waiting, WaitingQueue):
        fresh, resumed = waiting.fresh(), waiting.resumed()
    else:
        fresh = sorted((w for w in waiting if not w.attained), key=_arrival)
        resumed = sorted((w for w in waiting if w.attained), key=_SERVED)
    low = 0
    for i, limit in enumerate((*LAS_THRESHOLDS, math.inf)):
        high = bisect.bisect_left(resumed, limit, lo=low, key=_ATTAINED)
        part = sorted(resumed[low:high], key=_arrival) if high > low else []
        yield from (heapq.merge(fresh, part, key=_arrival) if i == 0 else part)
        low = high


def _head_level(waiting: Collection[Waiting]) -> int:
    if isinstance(waiting, WaitingQueue):
        if waiting.fresh():
            return 0
        return level(waiting.resumed()[0].attained) if waiting.resumed() else len(LAS_THRESHOLDS)
    return min((level(w.attained) for w in waiting), default=len(LAS_THRESHOLDS))


def tiresias_las(ctx: Context) -> Decision:
    plan, decision = ctx.plan, ctx.decision
    now = ctx.now
    # Every running job by node, the ones to evict first first; -1: never evicted (a notebook)
    levels = [(level(r.attained_at(now)) if r.preemptible else -1, r) for r in ctx.running]
    top = max((q for q, _ in levels), default=-1)
    quick = not ctx.explain and ctx.ledger is None
    sizes = _sizes(ctx.waiting)
    if quick and not plan.could_fit(sizes) and _head_level(ctx.waiting) >= top:
        decision.review_at = _next_crossing(ctx, LAS_THRESHOLDS, decision)
        return decision  # nothing fits and nobody waiting may evict anyone
    on: dict[str, list[tuple[int, Running]]] = {}
    for q, r in sorted(levels, key=lambda x: (x[0], _VICTIM_ORDER(x[1])), reverse=True):
        for name in r.placement:
            on.setdefault(name, []).append((q, r))
    stop = min(min(sizes, default=0), plan.smallest)
    # Failures are monotone in queue order: what one job of queue q could not get (free GPUs plus those
    # of lower queues, per node) no later job, of queue q or lower, gets either.
    failed_single = failed_multi = math.inf
    left: list[tuple[Waiting, str]] = []
    for w in las_order(ctx.waiting):
        job = w.job
        plain = not job.cpu and not job.memory and ctx.ledger is None
        single = plan.single_node(job)
        hopeless = plain and (job.gpus >= failed_single if single else
                              (failed_single <= plan.smallest or job.gpus >= failed_multi))
        if quick and hopeless:
            if failed_single <= stop:
                break
            continue
        placement = None
        refused = _refused(ctx, job)
        if refused is None and not hopeless:
            placement = plan.fit(job)
            if placement is None and top > level(w.attained):
                placement = _evict(ctx, job, level(w.attained), on)
            if placement is None:
                placement = _reclaim(ctx, job)
            if placement is None and plain:
                if single:
                    failed_single = min(failed_single, job.gpus)
                else:
                    failed_multi = min(failed_multi, job.gpus)
        if placement is not None:
            _take(ctx, w, placement)
        elif ctx.explain:
            left.append((w, refused or plan.why_not(job)))
        elif failed_single <= stop:
            break
    decision.reasons = [Reason(w.job.id, i, f"waiting: {why}") for i, (w, why) in enumerate(left, 1)]
    decision.review_at = _next_crossing(ctx, LAS_THRESHOLDS, decision)
    return decision


def _victims(ctx: Context, name: str, queue: int, on: dict[str, list[tuple[int, Running]]],
             need: int) -> tuple[int, list[Running]] | None:
    """The running jobs of queues below `queue` to evict on node `name` until `need` GPUs are free there
    (lowest queue first, then the latest submitted), and the GPUs they hold in all; None if they cannot."""
    plan = ctx.plan
    free = plan.gpus[name]
    gone = ctx.decision.preempt
    chosen: list[Running] = []
    evicted = 0
    for q, r in on.get(name, ()):
        if free >= need:
            break
        if q <= queue:
            break
        if r.job.id in gone:
            continue
        chosen.append(r)
        free += r.placement[name]
        evicted += r.job.gpus
    return (evicted, chosen) if free >= need else None


def _evict(ctx: Context, job: Job, queue: int, on: dict[str, list[tuple[int, Running]]]) -> dict[str, int] | None:
    """Room for `job` by evicting jobs of lower queues where that takes the fewest GPUs; None, with
    nothing evicted, if it cannot be made."""
    plan = ctx.plan
    options: list[tuple[int, int, list[Running]]] = []  # (GPUs evicted, node index, victims)
    single = plan.single_node(job)
    for index, name in enumerate(plan.order):
        need = job.gpus if single else plan.nodes[name].gpus
        option = _victims(ctx, name, queue, on, need)
        if option is not None:
            options.append((option[0], index, option[1]))
    count = 1 if single else plan.whole_nodes_needed(job)
    if len(options) < count:
        return None
    options.sort(key=lambda o: (o[0], o[1]))
    chosen: dict[str, Running] = {}
    for _, _, victims in options[:count]:
        for r in victims:
            chosen[r.job.id] = r
    for r in chosen.values():
        plan.release(r.job, r.placement)
        if ctx.ledger is not None:
            ctx.ledger.release(r.job)
    targets = {plan.order[index] for _, index, _ in options[:count]}
    placement = plan.fit(job, [name for name in plan.order if name not in targets])
    if placement is None:  # CPU or memory still short there: keep them running
        for r in chosen.values():
            plan.take(r.job, r.placement)
            if ctx.ledger is not None:
                ctx.ledger.take(r.job)
        return None
    ctx.decision.preempt += list(chosen)
    return placement
