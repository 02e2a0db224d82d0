"""benchmarks/scheduler.py's "without lost runs": a preempted run that checkpoints loses nothing, one that
does not loses its GPU-seconds inside the span (first to last submission)."""
from __future__ import annotations

import sys
from pathlib import Path

from myapp.scheduler.simulate import Event

from .support import trace

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.scheduler import lost_in_span


def test_a_checkpointing_run_loses_nothing_when_preempted():
    jobs = trace(("plain", 0, 2, 100), ("ckpt", 0, 4, 100, True), ("late", 50, 1, 10))
    log = [Event(10, "start", "plain", {"n0": 2}), Event(10, "start", "ckpt", {"n1": 4}),
           Event(30, "preempt", "plain", {"n0": 2}), Event(30, "preempt", "ckpt", {"n1": 4}),
           Event(40, "start", "plain", {"n0": 2}), Event(45, "preempt", "plain", {"n0": 2}),
           Event(60, "start", "plain", {"n0": 2}), Event(90, "preempt", "plain", {"n0": 2})]
    # plain: 2 GPUs x (30-10) + 2 x (45-40) + 2 x (50-60 cut at the last submission: 0); ckpt: nothing.
    assert lost_in_span(jobs, log) == 2 * 20 + 2 * 5
