"""The plain data the scheduling policies read and write: no database, no Flask, no clock.

The live controller builds these from its rows (or Kubernetes nodes) and the simulator from a trace;
both hand them to `myapp.scheduler.policy.decide` and carry out the `Decision` it returns.
"""
from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field

# What restarting a preempted job that checkpoints costs (loading its checkpoint, warming up), in seconds.
RESTART_SECONDS = 30.0


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
    # When its newest complete checkpoint was saved (a job that checkpoints; None: none yet, or not known)
    checkpointed: float | None = None

    def lost_at(self, now: float, restart: float = 0.0) -> float:
        """GPU-seconds (a CPU job counts as one GPU) a preemption at `now` throws away: since its newest
        checkpoint plus the restart for a job that checkpoints, else everything this run did."""
        since = self.checkpointed if self.job.checkpoints and self.checkpointed is not None else self.started
        extra = restart if self.job.checkpoints else 0.0
        return max(self.job.gpus, 1) * (max(now - max(since, self.started), 0.0) + extra)

    def attained_at(self, now: float) -> float:
        """GPU-seconds received over all its runs, up to `now` (the service 2D-LAS ranks by)."""
        return self.attained + self.job.gpus * (now - self.started)


@dataclass(frozen=True, slots=True)
class Waiting:
    job: Job
    attained: float = 0.0  # GPU-seconds from earlier runs (a preempted job keeps its history)
    preemptions: int = 0


def _arrival(w: Waiting) -> tuple[float, str]:
    return (w.job.submitted, w.job.id)


def _served(w: Waiting) -> tuple[float, float, str]:
    return (w.attained, w.job.submitted, w.job.id)


class WaitingQueue:
    """Waiting jobs kept by class (group, GPUs), each class in arrival order, as jobs come and go: a
    caller that decides often on a long queue (the simulator) hands `decide` this instead of a list, so
    a decision reads the classes instead of sorting the whole queue. Iterates in the order jobs were
    added; a job id is in it at most once."""

    def __init__(self) -> None:
        self._jobs: dict[str, Waiting] = {}
        self._classes: dict[tuple[str, int], list[Waiting]] = {}
        # By attained service, for the LAS policies: jobs that never ran in arrival order, the others
        # by (attained, arrival)
        self._fresh: list[Waiting] = []
        self._resumed: list[Waiting] = []

    def add(self, w: Waiting) -> None:
        if w.job.id in self._jobs:
            raise ValueError(f"job {w.job.id} is already waiting")
        self._jobs[w.job.id] = w
        members = self._classes.setdefault((w.job.group, w.job.gpus), [])
        if members and _arrival(members[-1]) > _arrival(w):  # a preempted job goes back in its place
            bisect.insort(members, w, key=_arrival)
        else:
            members.append(w)
        if w.attained:
            bisect.insort(self._resumed, w, key=_served)
        elif self._fresh and _arrival(self._fresh[-1]) > _arrival(w):
            bisect.insort(self._fresh, w, key=_arrival)
        else:
            self._fresh.append(w)

    def remove(self, job_id: str) -> Waiting:
        w = self._jobs.pop(job_id)
        key = (w.job.group, w.job.gpus)
        members = self._classes[key]
        del members[bisect.bisect_left(members, _arrival(w), key=_arrival)]
        if not members:
            del self._classes[key]
        if w.attained:
            del self._resumed[bisect.bisect_left(self._resumed, _served(w), key=_served)]
        else:
            del self._fresh[bisect.bisect_left(self._fresh, _arrival(w), key=_arrival)]
        return w

    def classes(self) -> dict[tuple[str, int], list[Waiting]]:
        """Class -> its waiting jobs in arrival order (submitted, id). Read only."""
        return self._classes

    def fresh(self) -> list[Waiting]:
        """The jobs that have not run yet (attained 0), in arrival order. Read only."""
        return self._fresh

    def resumed(self) -> list[Waiting]:
        """The jobs that ran before, by (attained, submitted, id). Read only."""
        return self._resumed

    def sizes(self) -> set[int]:
        return {gpus for _, gpus in self._classes}

    def __iter__(self) -> Iterator[Waiting]:
        return iter(self._jobs.values())

    def __len__(self) -> int:
        return len(self._jobs)

    def __contains__(self, item: object) -> bool:
        return isinstance(item, Waiting) and self._jobs.get(item.job.id) == item


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
        # expected(group, gpus) at elapsed 0: asked once per waiting job per decision, it changes only on add
        self._fresh: dict[tuple[str, int], float | None] = {}
        self._after: dict[tuple[str, int], dict[float, float | None]] = {}  # the same at elapsed > 0

    def add(self, group: str, gpus: int, seconds: float) -> None:
        runs = self._runs.setdefault((group, gpus), [])
        runs.append(seconds)
        if len(runs) > self.window:
            del runs[0]
        self._sorted.pop((group, gpus), None)
        self._fresh.pop((group, gpus), None)
        self._after.pop((group, gpus), None)

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
        key = (group, gpus)
        if not elapsed and key in self._fresh:
            return self._fresh[key]
        if elapsed and (known := self._after.get(key)) is not None and elapsed in known:
            return known[elapsed]
        ordered = self._sorted.get(key)
        if ordered is None:
            ordered = self.runs(group, gpus)
        if not ordered:
            guess = None
        else:
            first = bisect.bisect_right(ordered, elapsed)
            count = len(ordered)
            guess = max(elapsed, 3600.0) if first == count else ordered[(first + count) // 2] - elapsed
        if not elapsed:
            self._fresh[key] = guess
        else:
            known = self._after.setdefault(key, {})
            if len(known) < 4096:  # the service of waiting jobs, asked at every decision; runs' vary
                known[elapsed] = guess
        return guess
