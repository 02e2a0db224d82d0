"""Small traces written inline, for the scheduler tests."""
from __future__ import annotations

from myapp.scheduler.trace import TraceJob, parse

HEADER = "job_id,group,submit_s,num_gpus,duration_s,checkpoints"


def trace(*rows: tuple) -> list[TraceJob]:
    """trace(("a", 0, 8, 100), ("b", 5, 1, 10, True), ...): job_id, submit_s, num_gpus, duration_s[, checkpoints]."""
    lines = [HEADER] + [f"{r[0]},g,{r[1]},{r[2]},{r[3]},{r[4] if len(r) > 4 else False}" for r in rows]
    return parse(lines)
