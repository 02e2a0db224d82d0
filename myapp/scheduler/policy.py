"""The one scheduling decision: given nodes, running and waiting jobs, what starts where, what is
preempted, and why each other job waits. Pure: plain data in (`model.py`), a `Decision` out; the live
controller and the simulator both call `decide` (see docs/scheduling.md for the policies' reasoning).
"""
from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from itertools import chain, groupby
from operator import itemgetter
from typing import Any

from ..errors import FieldError
from .las import tiresias_las
from .model import Decision, History, Job, Node, Reason, Running, Waiting
from .placement import Plan
from .quota import Ledger
from .reorder import DEMOTED_FROM, Stoppable, demoted, make_room
from .steps import (
    _STARTED,
    _SUBMITTED,
    Context,
    _arrival,
    _classes,
    _next_crossing,
    _preempt_for,
    _reclaim,
    _refused,
    _sizes,
    _take,
)

OURS = "sieve"
REFERENCE = "tiresias-las"  # what ours is compared with (las.py)
POLICIES = ("gang-fifo", "easy-backfill", "tiresias", REFERENCE, OURS)
TIRESIAS_THRESHOLDS = (3600.0,)  # GPU-seconds of attained service: queue 0 below, queue 1 above
DEFAULT_MAX_PREEMPTIONS = 1
SIEVE_UNKNOWN_SECONDS = 3 * 3600.0  # a job with no history: the trace's median run time
SIEVE_STARVE_FACTOR = 10.0  # a job waiting longer than this many times its expected run time ...
SIEVE_STARVE_SECONDS = 30 * 86400.0  # ... plus this goes first and may hold nodes for itself
SIEVE_DEFRAG_RATIO = 8.0  # the head job preempts for GPUs that would idle this many times the work lost


def decide(policy: str, now: float, nodes: Sequence[Node], running: Sequence[Running], waiting: Collection[Waiting],
           history: History | None = None, *, explain: bool = True,
           max_preemptions: int = DEFAULT_MAX_PREEMPTIONS, free: Mapping[str, int] | None = None,
           ledger: Ledger | None = None) -> Decision:
    """Decide for one instant. With explain=False the reasons are left out (the simulator's fast path);
    `free` (GPUs per node) may be given by a caller that tracks it, else it is worked out from `running`;
    so may `waiting` be given as a `WaitingQueue` the caller keeps (the same decision, no sorting of it).
    With a `ledger` (quotas with borrowing, `quota.py`; built from the same `running`), a job starts only
    as its project's quota allows, and a job within its project's share that does not fit preempts
    borrowers of other projects for it, whatever the policy."""
    chosen = _POLICIES.get(policy)
    if chosen is None:
        raise FieldError("policy", f"unknown policy {policy!r}; one of {', '.join(POLICIES)}")
    if max_preemptions < 0:
        raise FieldError("max_preemptions", "must be >= 0")
    borrowing = frozenset() if ledger is None else frozenset(
        p for p in {r.job.project for r in running} if ledger.borrowing(p))
    ctx = Context(now, Plan(nodes, running, free), running, waiting, history or History(), explain, max_preemptions,
                  ledger, borrowing_before=borrowing)
    return chosen(ctx)


def _queue(attained: float, thresholds: Sequence[float]) -> int:
    for i, limit in enumerate(thresholds):
        if attained < limit:
            return i
    return len(thresholds)


def _schedule(ctx: Context, key: Callable[[Waiting], Any], wait_rank: Callable[[Waiting], float] | None = None,
              run_rank: Callable[[Running], float | None] | None = None) -> Decision:
    """Place the waiting jobs in `key` order, each whole or not at all, skipping those that do not fit
    (as Volcano's allocate does). With ranks (the order must not decrease `wait_rank`), a job that does
    not fit may preempt running jobs under the preemption bound whose `run_rank` is strictly worse
    (larger; None: not preemptible)."""
    plan, decision = ctx.plan, ctx.decision
    candidates: list[tuple[float, Running]] = []
    if wait_rank is not None and run_rank is not None:
        for r in ctx.running:
            if r.preemptible and r.preemptions < ctx.max_preemptions and (victim := run_rank(r)) is not None:
                candidates.append((victim, r))
        candidates.sort(key=lambda c: (-c[0], -c[1].started))
    sizes = _sizes(ctx.waiting)
    if not ctx.explain and not candidates and ctx.ledger is None and not plan.could_fit(sizes):
        return decision  # nothing fits, none to take back (the simulator's common case: skip the sort)
    stop = min(min(sizes, default=0), plan.smallest)  # a failure this small: nothing else fits
    failed_single = failed_multi = math.inf  # a gang this big did not fit: no larger one of a later rank will
    quick = not ctx.explain and ctx.ledger is None  # a job that cannot start is only passed over
    # Without preemption the free GPUs only shrink: a job larger than the freest node will not start
    # (nor one needing whole nodes when none is whole), as if a job that size had failed
    shrinking = quick and not candidates
    pool: Iterable[Waiting] = ctx.waiting
    if shrinking:
        failed_single = max(plan.gpus.values(), default=0) + 1
        pool = chain.from_iterable(  # so the classes that cannot start are not even sorted
            jobs for (_, gpus), jobs in _classes(ctx.waiting).items()
            if (gpus < failed_single if gpus <= plan.largest else failed_single > plan.smallest))
    order = sorted(pool, key=key)
    left: list[tuple[Waiting, str]] = []
    for w in order:
        job = w.job
        plain = not job.cpu and not job.memory and ctx.ledger is None
        single = plan.single_node(job)
        hopeless = plain and (job.gpus >= failed_single if single else
                              (failed_single <= plan.smallest or job.gpus >= failed_multi))
        if quick and hopeless:  # what the loop below does for it, without its work
            if failed_single <= stop:
                break
            continue
        placement = None
        refused = _refused(ctx, job)
        if refused is None and not hopeless:
            placement = plan.fit(job)
            if placement is None and candidates and wait_rank is not None:
                placement = _preempt_for(plan, job, wait_rank(w), candidates, decision, ctx.ledger)
            if placement is None:
                placement = _reclaim(ctx, job)
            if placement is None and plain:
                if single:
                    failed_single = min(failed_single, job.gpus)
                else:
                    failed_multi = min(failed_multi, job.gpus)
        if placement is not None:
            _take(ctx, w, placement)
            if shrinking:
                failed_single = min(failed_single, max(plan.gpus.values()) + 1)
                if failed_single <= stop:
                    break  # nothing more can start
        elif ctx.explain:
            left.append((w, refused or plan.why_not(job)))
        elif failed_single <= stop:
            break  # nothing more can start and nobody asked why
    decision.reasons = [Reason(w.job.id, i, f"waiting: {why}") for i, (w, why) in enumerate(left, 1)]
    return decision


def _fifo(ctx: Context) -> Decision:
    """Volcano's default: gangs in submission order, each that fits starts, no preemption."""
    return _schedule(ctx, _arrival)


def _tiresias(ctx: Context) -> Decision:
    """Tiresias' discretized 2D-LAS: queues by attained GPU-seconds, FIFO within a queue; a job of a
    higher queue preempts jobs of lower ones. It re-decides when a running job crosses a threshold."""
    def wait_rank(w: Waiting) -> float:
        return _queue(w.attained, TIRESIAS_THRESHOLDS)

    def run_rank(r: Running) -> float:
        return _queue(r.attained_at(ctx.now), TIRESIAS_THRESHOLDS)

    decision = _schedule(ctx, lambda w: (wait_rank(w), w.job.submitted, w.job.id), wait_rank, run_rank)
    decision.review_at = _next_crossing(ctx, TIRESIAS_THRESHOLDS, decision)
    return decision


def _estimate(history: History, job: Job, elapsed: float = 0.0) -> float | None:
    """Expected seconds still to run, from the history of the same group and GPU count."""
    return history.expected(job.group, job.gpus, elapsed)


def _reservation(ctx: Context, job: Job) -> tuple[float, set[str]]:
    """When and where `job` is expected to fit: the nodes whose jobs are expected to end first."""
    plan, now, expected = ctx.plan, ctx.now, ctx.history.expected
    frees: list[tuple[float, int, str]] = []  # (expected end, GPUs it frees, node); every end is after now
    for r in ctx.running:  # every running job at every decision with a head: kept to plain local reads
        elapsed = now - r.started
        guess = expected(r.job.group, r.job.gpus, elapsed)
        end = now + (guess if guess is not None else max(elapsed, 3600.0))
        for name, held in r.placement.items():
            frees.append((end, held, name))
    for w in ctx.started:
        guess = _estimate(ctx.history, w.job)
        end = now + (guess if guess is not None else 3600.0)
        for name, held in _placed(ctx, w.job.id).items():
            frees.append((end, held, name))
    frees.sort()
    single = plan.single_node(job)
    count = 1 if single else plan.whole_nodes_needed(job)
    free = dict(plan.gpus)
    need = {name: job.gpus if single else plan.nodes[name].gpus for name in plan.order}
    times = [(now, name) for name in plan.order if free[name] >= need[name]]  # (when it fits, node)
    for end, held, name in frees:  # in time order: each node's `when` is the end that gives it room
        if len(times) >= count and end > times[count - 1][0]:
            break  # the rest fit later than the `count` first (ties at that time are all in)
        if free[name] < need[name]:
            free[name] += held
            if free[name] >= need[name]:
                times.append((end, name))
    times.sort()
    if len(times) < count:
        return math.inf, set(plan.order)
    return times[count - 1][0], {name for _, name in times[:count]}


def _defragment(ctx: Context, job: Job) -> dict[str, int] | None:
    """Room for the head job (the first that does not fit) by preempting the few jobs that keep a node
    from it, where the node's free GPUs would otherwise idle, until those jobs are expected to end, for
    more than SIEVE_DEFRAG_RATIO times the GPU-seconds the preempted runs lose (none if they checkpoint):
    a lone long job pinning a node, or jobs that just started. The best nodes; None, with nothing
    stopped, if there are not enough such nodes."""
    plan = ctx.plan
    single = plan.single_node(job)
    count = 1 if single else plan.whole_nodes_needed(job)
    # Only nodes short of the job's GPUs, and, as no run has started in the future (then no run loses a
    # negative amount of work), only nodes with some GPUs free: a full one would idle nothing (gain 0).
    least = 0 if max(map(_STARTED, ctx.running), default=-math.inf) > ctx.now else 1
    short = {name for name in plan.order if least <= plan.gpus[name] < (job.gpus if single else plan.nodes[name].gpus)}
    on: dict[str, list[Running]] = {}
    gone = set(ctx.decision.preempt)
    for r in ctx.running if short else ():
        if r.job.id not in gone:
            for name in r.placement:
                if name in short:
                    on.setdefault(name, []).append(r)
    options: list[tuple[float, list[Running]]] = []
    for name in plan.order:
        if name not in on:  # enough free, or held only by jobs started in this decision: left alone
            continue
        need = job.gpus if single else plan.nodes[name].gpus
        free = idle = plan.gpus[name]
        stop: list[Running] = []
        lost = blocked = 0.0
        for r in sorted(on[name], key=_STARTED, reverse=True):  # the youngest lose least
            if free >= need or len(r.placement) > 1 or not r.preemptible or r.preemptions >= ctx.max_preemptions:
                break
            elapsed = ctx.now - r.started
            stop.append(r)
            free += r.job.gpus
            lost += 0.0 if r.job.checkpoints else r.job.gpus * elapsed
            guess = _estimate(ctx.history, r.job, elapsed)
            blocked = max(blocked, guess if guess is not None else max(elapsed, 3600.0))
        gain = idle * blocked
        if free >= need and gain > SIEVE_DEFRAG_RATIO * lost:
            options.append((lost - gain, stop))
    whole = 0 if single else len(plan.whole_nodes())
    if len(options) + whole < count:
        return None
    options.sort(key=itemgetter(0))
    chosen = [r for _, stop in options[:count - whole] for r in stop]
    for r in chosen:
        plan.release(r.job, r.placement)
    placement = plan.fit(job)
    if placement is None:  # CPU or memory still short: keep them running
        for r in chosen:
            plan.take(r.job, r.placement)
        return None
    ctx.decision.preempt += [r.job.id for r in chosen]
    return placement


def _placed(ctx: Context, job_id: str) -> dict[str, int]:
    return next(s.placement for s in ctx.decision.starts if s.job_id == job_id)


def _easy(ctx: Context) -> Decision:
    """EASY backfilling: FIFO; the first gang that does not fit gets a reservation on the nodes expected
    to free first, and later gangs start only if they leave those nodes alone or are expected to end
    before the reservation. Durations are expected from the history of the same group and GPU count."""
    return _backfill(ctx, lambda: [(sorted(ctx.waiting, key=_arrival), False)])


# Waiting jobs in a policy's order, and whether all are of one class (None: their own expectations, so
# a class found dead does not kill them)
Run = tuple[Sequence[Waiting], bool | None]


def _alive(runs: Iterable[Run], dead: set[tuple[str, int]]) -> Iterator[Waiting]:
    """The jobs of `runs` in order, less those of a class in `dead` (filled by the consumer as it goes):
    a run of one class is left as soon as its class is dead."""
    for jobs, one_class in runs:
        if one_class is None:
            yield from jobs
        elif one_class:
            key = (jobs[0].job.group, jobs[0].job.gpus)
            for w in jobs:
                if key in dead:
                    break
                yield w
        else:
            for w in jobs:
                if not dead or (w.job.group, w.job.gpus) not in dead:
                    yield w


def _backfill(ctx: Context, order: Callable[[], Iterable[Run]], defrag: bool = False) -> Decision:
    """Place the waiting jobs in the order `order()` gives; the first that does not fit holds the nodes
    expected to free first for itself (one reservation, as EASY), and later jobs use those nodes only if
    expected to end before it starts."""
    plan, decision = ctx.plan, ctx.decision
    sizes = _sizes(ctx.waiting)
    if not defrag and not ctx.explain and ctx.ledger is None and not plan.could_fit(sizes):
        return decision  # (with defrag the head may still make room for itself: the loop finds it)
    stop = min(min(sizes, default=0), plan.smallest)  # a failure this small: nothing else fits
    quick = not ctx.explain and ctx.ledger is None  # a job that cannot start is only passed over
    head: Job | None = None
    # The head's (shadow, reserved), worked out when a later job first needs it: nothing starts after the
    # head before that (a start needs it), so it is what it would have been when the head was found.
    reservation: tuple[float, set[str]] | None = None
    failed_any = failed_restricted = math.inf  # single-node sizes that did not fit (monotone, as in _schedule)
    # After the head (quick only): classes none of whose jobs can start any more. Room only shrinks then,
    # and a class's jobs are all in time or all not, so one GPU-bound failure (a plain job's) is theirs.
    dead: set[tuple[str, int]] = set()
    stoppable = Stoppable(ctx)  # who may be stopped for order (reorder.py), worked out when needed
    evict_single = evict_multi = math.inf  # sizes for which stopping runs of lower queues made no room
    left: list[tuple[Waiting, str]] = []
    for w in _alive(order(), dead):
        job = w.job
        plain = not job.cpu and not job.memory and ctx.ledger is None
        single = plan.single_node(job)
        if quick and head is not None and plain and single and job.gpus >= failed_any:
            # It fails in time or not (failed_restricted <= failed_any): skip the estimate and the fit
            if failed_any <= stop:
                break
            dead.add((job.group, job.gpus))
            continue
        in_time = True
        if head is not None:
            guess = _estimate(ctx.history, job)
            if guess is not None and reservation is None:
                reservation = _reservation(ctx, head)
            in_time = guess is not None and reservation is not None and ctx.now + guess <= reservation[0]
        placement = None
        limit = failed_any if in_time else failed_restricted  # a node short of `limit` GPUs is not whole
        refused = _refused(ctx, job)
        if refused is None and not (plain and (job.gpus >= limit if single else limit <= plan.smallest)):
            if not in_time and reservation is None:
                assert head is not None  # in time whenever there is no head
                reservation = _reservation(ctx, head)
            placement = plan.fit(job, () if reservation is None or in_time else reservation[1])
            if placement is None and in_time:
                placement = _reclaim(ctx, job)
            if placement is None and plain and single:
                if in_time:
                    failed_any = min(failed_any, job.gpus)
                failed_restricted = min(failed_restricted, job.gpus)
        if placement is not None:
            _take(ctx, w, placement)
            if quick and head is not None:  # as in _schedule: nothing frees room after the head
                most = max(plan.gpus.values()) + 1
                failed_any, failed_restricted = min(failed_any, most), min(failed_restricted, most)
                if failed_any <= stop:
                    break
            continue
        if refused is not None:
            if ctx.explain:
                left.append((w, refused))
            continue  # the quota, not the nodes, holds it: it reserves nothing
        if head is None:
            if defrag and plain and not job.checkpoints and (placement := _defragment(ctx, job)) is not None:
                _take(ctx, w, placement)
                continue  # started on what was freed for it: the next job that does not fit is the head
            if defrag and not (plain and (job.gpus >= evict_single if single else
                                          (evict_single <= plan.smallest or job.gpus >= evict_multi))):
                if (placement := make_room(ctx, w, stoppable)) is not None:
                    _take(ctx, w, placement)
                    failed_any = failed_restricted = math.inf  # what it freed beside itself may fit others
                    continue
                if plain:  # no later job, of its queue or a lower one, stops runs for this size either
                    if single:
                        evict_single = min(evict_single, job.gpus)
                    else:
                        evict_multi = min(evict_multi, job.gpus)
            if defrag and job.checkpoints:
                # It gets room as runs fall to lower queues: it holds no nodes, later jobs go on
                if ctx.explain:
                    left.append((w, plan.why_not(job)))
                elif failed_any <= stop and evict_single <= stop:
                    break
                if quick and plain:
                    dead.add((job.group, job.gpus))
                continue
            head = job
            if quick:
                most = max(plan.gpus.values()) + 1
                failed_any, failed_restricted = min(failed_any, most), min(failed_restricted, most)
        if ctx.explain:
            why = plan.why_not(job)
            if head is not job and plan.fit(job) is not None:
                if reservation is None:
                    reservation = _reservation(ctx, head)
                why = (f"its GPUs are held for {head.id}, expected to start in "
                       f"{(reservation[0] - ctx.now) / 3600:.1f} h")
            left.append((w, why))
        elif failed_any <= stop:
            break
        if quick and plain:
            dead.add((job.group, job.gpus))
    decision.reasons = [Reason(w.job.id, i, f"waiting: {why}") for i, (w, why) in enumerate(left, 1)]
    return decision


def _sieve(ctx: Context) -> Decision:
    """Ours: shortest expected GPU-time first, expected from the history of the same group and GPU count;
    a job that has waited much longer than it is expected to run goes first; the first job in that order
    that does not fit holds the nodes expected to free first (see docs/scheduling.md)."""
    def order() -> Iterator[Run]:
        # By class (group, GPUs): a Python key per job per decision is too slow for the simulator's
        # queues of thousands. Jobs that kept service wait in the lower queues (reorder.py), after these.
        first: list[Waiting] = []
        classes: list[tuple[float, Sequence[Waiting]]] = []
        by_class = _classes(ctx.waiting)
        lower = demoted(ctx.waiting)
        mixed = {(w.job.group, w.job.gpus) for w in lower} if lower else ()
        for group, gpus in sorted(by_class):
            jobs = by_class[group, gpus]
            if (group, gpus) in mixed:  # less those in the lower queues
                jobs = [w for w in jobs if w.attained < DEMOTED_FROM or not w.job.checkpoints]
                if not jobs:
                    continue
            guess = _estimate(ctx.history, jobs[0].job)
            expected = guess if guess is not None else SIEVE_UNKNOWN_SECONDS
            cutoff = ctx.now - SIEVE_STARVE_FACTOR * expected - SIEVE_STARVE_SECONDS
            late = bisect.bisect_right(jobs, cutoff, key=_SUBMITTED)  # waited too long: these go first
            first += jobs[:late]
            if late < len(jobs):
                classes.append((gpus * expected, jobs[late:]))
        first.sort(key=_arrival)
        classes.sort(key=lambda c: c[0])
        runs: list[Run] = [(first, False)] if first else []
        for _, same in groupby(classes, key=lambda c: c[0]):  # equal expectations: by submission
            lists = [c[1] for c in same]
            runs.append((lists[0], True) if len(lists) == 1 else (sorted(chain(*lists), key=_arrival), False))
        yield from runs
        if lower:
            yield lower, None

    return _backfill(ctx, order, defrag=True)


_POLICIES: dict[str, Callable[[Context], Decision]] = {
    "gang-fifo": _fifo,
    "tiresias": _tiresias,
    "easy-backfill": _easy,
    REFERENCE: tiresias_las,
    OURS: _sieve,
}
