"""Event-driven replay of a trace through `policy.decide` on nodes of 8 GPUs.

Events are submissions, completions and the policy's own review times; at each event time the policy
decides once, and the simulator carries the decision out and checks it (a gang placed whole on nodes
that have the GPUs free). A preempted job that does not checkpoint starts over: the GPU-seconds it had
run are lost (counted busy, and reported as `lost_gpu_seconds`).
Opt-in extras for the admin UI's simulator page: time series binned for a chart (`series_points`,
see series.py) and a CPU-time budget (`max_cpu_seconds`) so a replay cannot hold a web worker for long.
"""
from __future__ import annotations

import heapq
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import DomainError, FieldError, Kind
from .model import History, Node, Running, Waiting, WaitingQueue
from .policy import DEFAULT_MAX_PREEMPTIONS, decide
from .series import binned, jct_by_submission
from .trace import TraceJob

NODE_GPUS = 8
RESTART_SECONDS = 30.0  # a preempted job that checkpoints resumes after this long (loading, warming up)


@dataclass(frozen=True)
class Event:
    time: float
    kind: str  # "start", "preempt", "end"
    job_id: str
    placement: dict[str, int]


@dataclass(slots=True)
class _State:
    trace: TraceJob
    remaining: float  # seconds of running still needed, not counting a restart
    restart: float = 0.0  # seconds its next run spends restarting before any progress
    restarting: float = 0.0  # the same, of the current run
    attained: float = 0.0  # GPU-seconds over the runs before the current one
    preemptions: int = 0
    finished: float = -1.0
    run: Running | None = None
    end: float = math.inf


def nodes_for(gpus: int, node_gpus: int = NODE_GPUS) -> list[Node]:
    if gpus < node_gpus or gpus % node_gpus:
        raise FieldError("gpus", f"must be a positive multiple of {node_gpus} (nodes of {node_gpus} GPUs)")
    return [Node(f"n{i:03d}", node_gpus) for i in range(gpus // node_gpus)]


def _percentile(ordered: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of sorted values."""
    return ordered[max(0, math.ceil(q / 100 * len(ordered)) - 1)]


def simulate(jobs: Sequence[TraceJob], gpus: int, policy: str = "gang-fifo", *,
             max_preemptions: int = DEFAULT_MAX_PREEMPTIONS, node_gpus: int = NODE_GPUS,
             log: list[Event] | None = None, series_points: int | None = None,
             max_cpu_seconds: float | None = None, restart_seconds: float = RESTART_SECONDS) -> dict[str, Any]:
    """Replay `jobs` on `gpus` GPUs; the figures of docs/scheduling.md (`--json` of `myapp simulate`).
    With `log`, every start, preemption and end is appended to it (the tests check them independently).
    With `series_points`, the answer also holds `series` (utilization and waiting jobs over time, JCT by
    submission time) in that many bins. With `max_cpu_seconds`, a replay that has used more CPU time than
    that stops with a DomainError (kind unprocessable). A preempted job that checkpoints resumes after
    `restart_seconds` of its next run; one that does not starts over."""
    started_at = time.process_time()
    nodes = nodes_for(gpus, node_gpus)
    if not jobs:
        raise FieldError("trace", "no jobs")
    for tj in jobs:
        if tj.job.gpus > gpus:
            raise FieldError(f"trace:{tj.line}", f"job {tj.job.id} needs {tj.job.gpus} GPUs, the cluster has {gpus}")
    arrivals = sorted(jobs, key=lambda tj: (tj.job.submitted, tj.line))
    first, last = arrivals[0].job.submitted, arrivals[-1].job.submitted
    states = {tj.job.id: _State(tj, tj.duration) for tj in arrivals}
    free = {n.name: n.gpus for n in nodes}
    history = History()
    running: dict[str, _State] = {}
    runs: dict[str, Running] = {}  # the same jobs, as the policy sees them
    waiting = WaitingQueue()  # kept by class as jobs come and go: no decision sorts the whole queue
    ends: list[tuple[float, int, str]] = []  # (end, sequence, job id); stale entries are skipped
    seq = 0
    busy = 0  # GPUs running a job now
    busy_seconds = lost = 0.0
    preemptions = 0
    review: float | None = None
    samples: list[tuple[float, int, int]] | None = [] if series_points is not None else None
    budget = started_at + max_cpu_seconds if max_cpu_seconds is not None else math.inf
    now = first
    i = steps = 0
    while i < len(arrivals) or running or waiting:
        candidates = [arrivals[i].job.submitted] if i < len(arrivals) else []
        if ends:
            candidates.append(ends[0][0])
        if review is not None and review > now:
            candidates.append(review)
        if not candidates:
            raise DomainError(f"policy {policy} left {len(waiting)} jobs waiting on an idle cluster, e.g. "
                              f"{next(iter(waiting)).job.id}")
        then = min(candidates)
        lo, hi = max(now, first), min(then, last)
        if hi > lo:
            busy_seconds += busy * (hi - lo)
        now = then
        while ends and ends[0][0] <= now:
            end, _, job_id = heapq.heappop(ends)
            st = running.get(job_id)
            if st is None or st.end != end:
                continue  # preempted after this end was scheduled
            del running[job_id], runs[job_id]
            assert st.run is not None
            for name, held in st.run.placement.items():
                free[name] += held
            busy -= st.trace.job.gpus
            if log is not None:
                log.append(Event(end, "end", job_id, st.run.placement))
            st.finished, st.run = end, None
            history.add(st.trace.job.group, st.trace.job.gpus, st.trace.duration)
        while i < len(arrivals) and arrivals[i].job.submitted <= now:
            job = arrivals[i].job
            waiting.add(Waiting(job))
            i += 1
        decision = decide(policy, now, nodes, list(runs.values()), waiting, history,
                          explain=False, max_preemptions=max_preemptions, free=free)
        for job_id in decision.preempt:
            st = running.pop(job_id)
            del runs[job_id]
            run = st.run
            assert run is not None
            ran = now - run.started
            st.attained += run.job.gpus * ran
            if run.job.checkpoints:
                st.remaining -= max(0.0, ran - st.restarting)
                st.restart = restart_seconds
            else:
                lost += run.job.gpus * ran
                st.remaining = st.trace.duration
            st.preemptions += 1
            preemptions += 1
            for name, held in run.placement.items():
                free[name] += held
            busy -= run.job.gpus
            if log is not None:
                log.append(Event(now, "preempt", job_id, run.placement))
            st.run, st.end = None, math.inf
            waiting.add(Waiting(run.job, st.attained, st.preemptions))
        for start in decision.starts:
            w = waiting.remove(start.job_id)
            st = states[start.job_id]
            _check_placement(w.job.gpus, start.placement, free, node_gpus)
            for name, held in start.placement.items():
                free[name] -= held
            busy += w.job.gpus
            if log is not None:
                log.append(Event(now, "start", w.job.id, start.placement))
            st.run = Running(w.job, start.placement, now, st.attained, st.preemptions)
            st.restarting, st.restart = st.restart, 0.0
            st.end = now + st.restarting + st.remaining
            running[start.job_id] = st
            runs[start.job_id] = st.run
            seq += 1
            heapq.heappush(ends, (st.end, seq, start.job_id))
        review = decision.review_at
        if samples is not None:
            samples.append((now, busy, len(waiting)))
        steps += 1
        if budget < math.inf and steps % 256 == 0 and time.process_time() > budget:
            raise DomainError(f"the replay took more than {max_cpu_seconds:g} CPU seconds: use fewer jobs "
                              "or more GPUs", kind=Kind.UNPROCESSABLE)
    jct = sorted(st.finished - st.trace.job.submitted for st in states.values())
    span = last - first
    work = sum(tj.job.gpus * tj.duration for tj in jobs)
    result: dict[str, Any] = {
        "policy": policy,
        "gpus": gpus,
        "jobs": len(jct),
        "avg_jct_s": sum(jct) / len(jct),
        "p50_jct_s": _percentile(jct, 50),
        "p95_jct_s": _percentile(jct, 95),
        "p99_jct_s": _percentile(jct, 99),
        "makespan_s": max(st.finished for st in states.values()) - first,
        "utilization": busy_seconds / (gpus * span) if span else 0.0,
        "offered_load": work / (gpus * span) if span else 0.0,
        "partial_gang_seconds": 0.0,  # every placement is checked whole above: no gang ever holds GPUs idle
        "preemptions_per_job": preemptions / len(jct),
        "max_preemptions_of_a_job": max(st.preemptions for st in states.values()),
        "lost_gpu_seconds": lost,
        "sim_seconds": time.process_time() - started_at,
    }
    if samples is not None and series_points is not None:
        end = max(st.finished for st in states.values())
        result["series"] = {
            "over_time": binned(samples, first, end, gpus, series_points),
            "jct_by_submission": jct_by_submission(
                [(st.trace.job.submitted, st.finished - st.trace.job.submitted) for st in states.values()],
                first, last, series_points),
        }
    return result


def _check_placement(gpus: int, placement: dict[str, int], free: dict[str, int], node_gpus: int) -> None:
    """The simulator's guard on the policy: the whole gang, on free GPUs, one node or whole nodes."""
    if any(name not in free or held > free[name] or held <= 0 for name, held in placement.items()):
        raise DomainError(f"placement {placement} takes GPUs that are not free")
    if sum(placement.values()) < gpus:
        raise DomainError(f"placement {placement} holds part of a {gpus}-GPU gang")
    if gpus <= node_gpus and len(placement) != 1:
        raise DomainError(f"placement {placement} splits a {gpus}-GPU job over nodes")
    if gpus > node_gpus and any(free[name] != node_gpus for name in placement):
        raise DomainError(f"placement {placement} of a {gpus}-GPU job is not on whole free nodes")
