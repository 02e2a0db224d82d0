"""A replay's schedule as run intervals, one per run of a job, for `myapp simulate --schedule-out FILE`:
from it and the trace anyone can recompute every figure the simulator prints (JCT from the finished
intervals, utilization from GPUs x time, partial gangs from intervals holding fewer GPUs than asked).

CSV columns: job_id,start,end,gpus,nodes,ended — `nodes` is `name:GPUs` pairs joined by spaces;
`ended` is finished, preempted or failed (the simulator models no failures, so it writes none).
"""
from __future__ import annotations

import csv
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TextIO

from .simulate import Event

COLUMNS = ("job_id", "start", "end", "gpus", "nodes", "ended")
_ENDED = {"end": "finished", "preempt": "preempted", "fail": "failed"}


@dataclass(frozen=True)
class Interval:
    job_id: str
    start: float
    end: float
    placement: dict[str, int]
    ended: str  # finished, preempted or failed

    @property
    def gpus(self) -> int:
        return sum(self.placement.values())


def intervals(log: Iterable[Event]) -> list[Interval]:
    """The run intervals of an event log (`simulate(..., log=...)`), in the order they end."""
    started: dict[str, Event] = {}
    out: list[Interval] = []
    for e in log:
        if e.kind == "start":
            if e.job_id in started:
                raise ValueError(f"{e.job_id} started at {e.time} while running")
            started[e.job_id] = e
            continue
        begin = started.pop(e.job_id, None)
        if begin is None:
            raise ValueError(f"{e.job_id} {e.kind} at {e.time} without a start")
        out.append(Interval(e.job_id, begin.time, e.time, begin.placement, _ENDED[e.kind]))
    if started:
        raise ValueError(f"{len(started)} runs never end, e.g. {next(iter(started))}")
    return out


def write_csv(rows: Iterable[Interval], out: TextIO) -> None:
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for r in rows:
        nodes = " ".join(f"{name}:{held}" for name, held in sorted(r.placement.items()))
        writer.writerow([r.job_id, repr(r.start), repr(r.end), r.gpus, nodes, r.ended])
