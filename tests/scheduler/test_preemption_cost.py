"""A quota's owner takes its room back from the borrower whose preemption costs least: among jobs that
checkpoint, the work since their newest checkpoint plus the restart; jobs that do not checkpoint only as a
last resort, with all their work counted (`Running.lost_at`)."""
from __future__ import annotations

from dataclasses import replace

from myapp.scheduler.model import RESTART_SECONDS, Job, Node, Running, Waiting
from myapp.scheduler.policy import decide
from myapp.scheduler.quota import Ledger, Share

NODES = [Node("n0", 4), Node("n1", 4)]
SHARES = {"a": Share("a", gpus=4), "b": Share("b", gpus=4)}


def borrower(id, node, started, checkpoints=True, checkpointed=None):
    return Running(Job(id, "g", 4, started, checkpoints=checkpoints, project="b"), {node: 4}, started,
                   checkpointed=checkpointed)


def reclaimed(runs, now=1000.0):
    book = Ledger((8, 0.0, 0.0), SHARES, runs)
    return decide("gang-fifo", now, NODES, runs, [Waiting(Job("a1", "g", 4, now - 1, project="a"))],
                  ledger=book).preempt


def test_the_borrower_that_checkpointed_last_is_stopped_though_it_started_first():
    fresh = borrower("b1", "n0", started=0.0, checkpointed=990.0)  # 10 s since its checkpoint
    stale = borrower("b2", "n1", started=500.0, checkpointed=600.0)  # 400 s since its checkpoint
    assert reclaimed([fresh, stale]) == ["b1"]
    assert fresh.lost_at(1000.0, RESTART_SECONDS) == 4 * (10 + RESTART_SECONDS)
    # Without a checkpoint yet, its whole run is what it would lose.
    assert reclaimed([replace(fresh, checkpointed=None), stale]) == ["b2"]


def test_a_job_that_does_not_checkpoint_is_the_last_resort():
    plain = borrower("b1", "n0", started=999.0, checkpoints=False)  # 1 s of work, but all of it lost for good
    costly = borrower("b2", "n1", started=0.0, checkpointed=10.0)  # 990 s since its checkpoint
    assert reclaimed([plain, costly]) == ["b2"]
    assert plain.lost_at(1000.0, RESTART_SECONDS) == 4 * 1.0
    # A checkpoint older than this run (it resumed from it) does not make the run's own work free.
    resumed = borrower("b3", "n1", started=900.0, checkpointed=100.0)
    assert resumed.lost_at(1000.0) == 4 * 100.0
