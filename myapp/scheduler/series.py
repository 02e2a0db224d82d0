"""Time series of a simulated replay, binned for a chart: opt-in, so the plain replay stays as fast as it was.

The simulator appends one sample (time, busy GPUs, waiting jobs) per event time; the values hold until the
next sample (a step function). `binned` averages that step function over equal bins between the first
submission and the last finish; `jct_by_submission` averages job completion times by when jobs arrived.
"""
from __future__ import annotations

from collections.abc import Sequence

MAX_POINTS = 500


def _check_points(points: int) -> None:
    if not 1 <= points <= MAX_POINTS:
        raise ValueError(f"points must be between 1 and {MAX_POINTS}")


def binned(samples: Sequence[tuple[float, int, int]], start: float, end: float, gpus: int,
           points: int) -> dict[str, list[float]]:
    """`t` (bin starts, seconds since `start`), `utilization` (busy GPUs ÷ `gpus`, time-averaged over the
    bin) and `waiting` (jobs waiting, time-averaged) of the step function `samples`, in `points` bins."""
    _check_points(points)
    span = max(end - start, 1e-9)
    width = span / points
    busy = [0.0] * points
    waiting = [0.0] * points
    for k, (t0, gpus_busy, jobs_waiting) in enumerate(samples):
        t1 = samples[k + 1][0] if k + 1 < len(samples) else end
        lo, hi = max(t0, start), min(t1, end)
        b = min(int((lo - start) / width), points - 1) if hi > lo else 0
        while hi > lo:
            edge = start + (b + 1) * width if b < points - 1 else hi
            if edge <= lo:  # rounding put lo on this bin's end: the next bin
                b += 1
                continue
            cut = min(hi, edge)
            busy[b] += gpus_busy * (cut - lo)
            waiting[b] += jobs_waiting * (cut - lo)
            lo = cut
    return {
        "t": [b * width for b in range(points)],
        "utilization": [x / (width * gpus) for x in busy],
        "waiting": [x / width for x in waiting],
    }


def jct_by_submission(jobs: Sequence[tuple[float, float]], start: float, end: float,
                      points: int) -> dict[str, list[float | None]]:
    """`t` (bin starts, seconds since `start`), `avg_jct_s` (None where no job arrived) and `jobs` per
    bin of submission time, for (submitted, jct) pairs with `start` <= submitted <= `end`."""
    _check_points(points)
    width = max(end - start, 1e-9) / points
    total = [0.0] * points
    count = [0] * points
    for submitted, jct in jobs:
        b = min(int((submitted - start) / width), points - 1)
        total[b] += jct
        count[b] += 1
    return {
        "t": [b * width for b in range(points)],
        "avg_jct_s": [total[b] / count[b] if count[b] else None for b in range(points)],
        "jobs": [float(n) for n in count],
    }
