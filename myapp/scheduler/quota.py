"""Quotas with borrowing, pure: a project's quota in a resource group is its guaranteed share; beyond it
the project may borrow capacity the others leave idle, and a project that needs its share back takes it
from the borrowers by preemption (Kueue's cohorts: a resource group is one cohort).

`policy.decide(..., ledger=Ledger(...))` asks the ledger before it places a job (`refuses`) and, when
a job within its share does not fit, preempts borrowers for it (`steps._reclaim`). Units are those of
`model.py`: GPUs, CPU cores, memory bytes.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .model import Job, Running
from .placement import show_memory

RESOURCES = ("gpus", "cpu", "memory")
_LABELS = ("gpu", "cpu", "memory")


@dataclass(frozen=True)
class Share:
    """A project's guaranteed share of the group. can_borrow: it may use idle capacity beyond its share;
    can_lend: its own idle share may be borrowed by others meanwhile (else it is kept free for it)."""

    project: str
    gpus: float = 0
    cpu: float = 0.0
    memory: float = 0.0
    can_borrow: bool = True
    can_lend: bool = True

    def amount(self) -> tuple[float, float, float]:
        return (self.gpus, self.cpu, self.memory)


def need(job: Job) -> tuple[float, float, float]:
    return (job.gpus, job.cpu, job.memory)


def _show(index: int, value: float) -> str:
    return show_memory(value) if index == 2 else f"{value:g}"


class Ledger:
    """Use per project against the shares and the group's capacity, changed as a policy plans.

    A project without a share has a share of nothing: it may only borrow; so is a resource a share gives
    0 of (all its use is borrowed, as a nominal quota of 0 in Kueue). Capacity nobody's share covers is
    idle capacity anyone may borrow. A resource the group's capacity gives 0 of is not tracked (as on a
    Node): quotas say nothing about it."""

    def __init__(self, capacity: tuple[float, float, float], shares: Mapping[str, Share],
                 running: Iterable[Running] = ()) -> None:
        self.capacity = capacity
        self.tracked = tuple(i for i in range(3) if capacity[i] > 0)
        self.shares = dict(shares)
        self.used: dict[str, list[float]] = {}
        self.total = [0.0, 0.0, 0.0]
        for r in running:
            self.take(r.job)

    def share(self, project: str) -> Share:
        return self.shares.get(project) or Share(project)

    def use(self, project: str) -> tuple[float, float, float]:
        used = self.used.get(project, [0.0, 0.0, 0.0])
        return (used[0], used[1], used[2])

    def take(self, job: Job, sign: float = 1.0) -> None:
        used = self.used.setdefault(job.project, [0.0, 0.0, 0.0])
        for i, amount in enumerate(need(job)):
            used[i] += sign * amount
            self.total[i] += sign * amount

    def release(self, job: Job) -> None:
        self.take(job, -1.0)

    def borrowed(self, project: str) -> tuple[float, float, float]:
        """What the project uses beyond its share, per resource."""
        nominal, used = self.share(project).amount(), self.use(project)
        b = [max(0.0, used[i] - nominal[i]) if i in self.tracked else 0.0 for i in range(3)]
        return (b[0], b[1], b[2])

    def borrowing(self, project: str) -> bool:
        return any(self.borrowed(project))

    def within(self, job: Job) -> bool:
        """The job fits in its project's share on top of what the project uses: it may reclaim."""
        nominal, used, wanted = self.share(job.project).amount(), self.use(job.project), need(job)
        return all(used[i] + wanted[i] <= nominal[i] for i in self.tracked if wanted[i])

    def refuses(self, job: Job) -> str | None:
        """Why the quota rules keep the job waiting now, or None (it may start if it fits the nodes)."""
        share = self.share(job.project)
        nominal, used, wanted = share.amount(), self.use(job.project), need(job)
        over = [i for i in self.tracked if wanted[i] and used[i] + wanted[i] > nominal[i]]
        if not over:
            return None
        first = over[0]
        said = (f"project quota {_LABELS[first]} {_show(first, used[first])}/{_show(first, nominal[first])}"
                if job.project in self.shares else "no quota in this resource group")
        if not share.can_borrow:
            return f"{said} (this project does not borrow)"
        for i in over:
            kept = sum(max(0.0, s.amount()[i] - self.use(p)[i])  # idle shares their owners do not lend
                       for p, s in self.shares.items() if p != job.project and not s.can_lend)
            if self.total[i] + wanted[i] + kept > self.capacity[i]:
                return f"{said}, nothing idle to borrow"
        return None
