"""What no schedule of a trace can beat, whatever it knows: the yardstick for the policies' figures.

Both bounds hold for any schedule on `gpus` GPUs, even one that knows every duration, preempts for free
(checkpointing everything) and ignores nodes (no fragmentation); real policies have none of that, so
they can only be worse. `benchmarks/scheduler.py` prints them beside the policies (docs/scheduling.md).
"""
from __future__ import annotations

from collections.abc import Sequence

from .trace import TraceJob


class _SmallestFirst:
    """The jobs that could have finished, by work (GPU-seconds): how many fit a work budget, taking the
    smallest first. A Fenwick tree over the ranks of all jobs' work: counts and sums of prefixes."""

    def __init__(self, work: Sequence[float]) -> None:
        self.work = work
        self.size = len(work)
        self.rank = [0] * self.size
        for r, i in enumerate(sorted(range(self.size), key=lambda i: (work[i], i)), 1):
            self.rank[i] = r
        self.count = [0] * (self.size + 1)
        self.sum = [0.0] * (self.size + 1)
        self.top = 1 << self.size.bit_length()

    def add(self, i: int) -> None:
        k, w = self.rank[i], self.work[i]
        while k <= self.size:
            self.count[k] += 1
            self.sum[k] += w
            k += k & -k

    def most_within(self, budget: float) -> int:
        pos, count, total, step = 0, 0, 0.0, self.top
        while step:
            nxt = pos + step
            if nxt <= self.size and total + self.sum[nxt] <= budget:
                pos, total, count = nxt, total + self.sum[nxt], count + self.count[nxt]
            step >>= 1
        return count


def jct_lower_bound(jobs: Sequence[TraceJob], gpus: int, step: float = 60.0) -> float:
    """A lower bound on the average job completion time (finish - submission) of any schedule.

    Average JCT = the integral over time of the jobs submitted and not finished, ÷ jobs. Over each
    `step` [t, t + step) at least (jobs submitted by t) - (most of them that can be finished by t + step)
    are unfinished. A job can be finished by then only if its submission + duration is, and the finished
    jobs' GPU-seconds cannot exceed the work a fluid server of `gpus` could have done by then (all
    work submitted up to t + step counted from t on): the most such jobs is the smallest ones first."""
    n = len(jobs)
    submit = [tj.job.submitted for tj in jobs]
    done_at = [tj.job.submitted + tj.duration for tj in jobs]
    work = [tj.job.gpus * tj.duration for tj in jobs]
    finishable = _SmallestFirst(work)
    by_submit = sorted(range(n), key=submit.__getitem__)
    by_done = sorted(range(n), key=done_at.__getitem__)
    submitted, reached = [False] * n, [False] * n
    t = submit[by_submit[0]]
    count = next_submit = next_done = next_work = 0
    backlog = capacity_used = area = 0.0
    while True:
        end = t + step
        while next_submit < n and submit[by_submit[next_submit]] <= t:
            i = by_submit[next_submit]
            next_submit += 1
            count += 1
            submitted[i] = True
            if reached[i]:
                finishable.add(i)
        while next_done < n and done_at[by_done[next_done]] <= end:
            i = by_done[next_done]
            next_done += 1
            reached[i] = True
            if submitted[i]:
                finishable.add(i)
        while next_work < n and submit[by_submit[next_work]] <= end:
            backlog += work[by_submit[next_work]]
            next_work += 1
        served = min(backlog, gpus * step)
        backlog -= served
        capacity_used += served
        if next_submit == n and next_done == n and not backlog:
            return area / n  # everything submitted, reached and served: all can be finished by t
        area += step * (count - finishable.most_within(capacity_used))
        t = end


def busy_upper_bound(jobs: Sequence[TraceJob], gpus: int) -> float:
    """An upper bound on `utilization` (busy GPU-seconds between the first and the last submission ÷
    (GPUs x that span)) without work thrown away by restarts: a job can run at most from its submission
    to the last submission, and a fluid server of `gpus` serves what is submitted as it comes."""
    first = min(tj.job.submitted for tj in jobs)
    last = max(tj.job.submitted for tj in jobs)
    if last <= first:
        return 0.0
    backlog = served = 0.0
    t = first
    for submitted, work in sorted((tj.job.submitted, tj.job.gpus * min(tj.duration, last - tj.job.submitted))
                                  for tj in jobs):
        done = min(backlog, gpus * (submitted - t))
        backlog, served, t = backlog - done + work, served + done, submitted
    return served / (gpus * (last - first))
