"""The plain data the scheduling policies read and write: no database, no Flask, no clock.

The live controller builds these from its rows (or Kubernetes nodes) and the simulator from a trace;
both hand them to `myapp.scheduler.policy.decide` and carry out the `Decision` it returns.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Node:
    """A node's capacity. cpu in cores, memory in bytes; 0 means "not tracked" for that resource."""

    name: str
    gpus: int
    cpu: float = 0.0
    memory: float = 0.0


@dataclass(frozen=True)
class Job:
    """A job asking for `gpus` at once (a gang). cpu and memory are per job, on its node when it fits one."""

    id: str
    group: str
    gpus: int
    submitted: float
    cpu: float = 0.0
    memory: float = 0.0
    checkpoints: bool = False  # a preempted job resumes where it was instead of starting over
    project: str = ""  # whose quota it counts against (myapp.scheduler.quota), when quotas are given


@dataclass(frozen=True, slots=True)
class Running:
    """A running job: where it is, since when, the GPU-seconds it received in earlier runs (before it was
    preempted), and how many times it has been preempted."""

    job: Job
    placement: dict[str, int]  # node -> GPUs held there
    started: float
    attained: float = 0.0
    preemptions: int = 0
    preemptible: bool = True  # False: never stopped for another job (a notebook)

    def attained_at(self, now: float) -> float:
        """GPU-seconds received over all its runs, up to `now` (the service 2D-LAS ranks by)."""
        return self.attained + self.job.gpus * (now - self.started)


@dataclass(frozen=True, slots=True)
class Waiting:
    job: Job
    attained: float = 0.0  # GPU-seconds from earlier runs (a preempted job keeps its history)
    preemptions: int = 0


@dataclass(frozen=True)
class Start:
    job_id: str
    placement: dict[str, int]


@dataclass(frozen=True)
class Reason:
    job_id: str
    position: int  # 1-based place in the policy's order of the waiting jobs
    text: str  # "waiting: no node with 4 free GPUs"


@dataclass
class Decision:
    starts: list[Start] = field(default_factory=list)
    preempt: list[str] = field(default_factory=list)  # job ids, to be stopped and put back in the queue
    reasons: list[Reason] = field(default_factory=list)  # every job still waiting, in queue order (if asked)
    review_at: float | None = None  # the decision may change at this time even if nothing else happens


class History:
    """Run times of finished jobs per (group, GPUs): what the policies may know about durations.

    Like learning from earlier runs of the same task: no policy ever sees a job's own duration.
    """

    def __init__(self, window: int = 50) -> None:
        self.window = window  # recent runs only: a task's workload drifts
        self._runs: dict[tuple[str, int], list[float]] = {}
        self._sorted: dict[tuple[str, int], list[float]] = {}  # the same, sorted: policies ask often

    def add(self, group: str, gpus: int, seconds: float) -> None:
        runs = self._runs.setdefault((group, gpus), [])
        runs.append(seconds)
        if len(runs) > self.window:
            del runs[0]
        self._sorted.pop((group, gpus), None)

    def runs(self, group: str, gpus: int) -> list[float]:
        """The recent run times, shortest first."""
        key = (group, gpus)
        ordered = self._sorted.get(key)
        if ordered is None:
            ordered = self._sorted[key] = sorted(self._runs.get(key, ()))
        return ordered

    def expected(self, group: str, gpus: int, elapsed: float = 0.0) -> float | None:
        """Seconds still to run for a run that has lasted `elapsed`: the median of the earlier runs that
        lasted longer, minus elapsed; None without history. A run that has outlived every earlier one is
        expected to last as long again (at least an hour)."""
        ordered = self.runs(group, gpus)
        if not ordered:
            return None
        first = bisect.bisect_right(ordered, elapsed)
        if first == len(ordered):
            return max(elapsed, 3600.0)
        return ordered[(first + len(ordered)) // 2] - elapsed
