"""Sieve's service queues (myapp/scheduler/reorder.py): jobs that checkpoint and have had an hour of
GPU service give way to new ones and wait in lower queues; jobs that do not checkpoint are never
stopped for order, so without checkpoints sieve schedules as it did before."""
from __future__ import annotations

from myapp.scheduler.model import History, Job, Node, Running, Waiting
from myapp.scheduler.policy import decide
from myapp.scheduler.quota import Ledger, Share
from myapp.scheduler.reorder import demoted, kept
from myapp.scheduler.simulate import Event, simulate

from .support import trace


def _moves(log: list[Event]) -> list[tuple[float, str, str]]:
    return [(e.time, e.kind, e.job_id) for e in log]


def test_a_served_job_that_checkpoints_gives_way_to_a_new_one_and_resumes():
    log: list[Event] = []
    result = simulate(trace(("a", 0, 8, 100_000, True), ("b", 1000, 1, 10, True)), 8, "sieve", log=log)
    assert _moves(log) == [(0, "start", "a"), (1000, "preempt", "a"), (1000, "start", "b"), (1010, "end", "b"),
                           (1010, "start", "a"), (1010 + 30 + 99_000, "end", "a")]
    assert result["lost_gpu_seconds"] == 0


def test_a_job_that_does_not_checkpoint_is_not_stopped_for_order():
    log: list[Event] = []
    simulate(trace(("a", 0, 8, 100_000), ("b", 1000, 1, 10, True)), 8, "sieve", log=log)
    assert _moves(log) == [(0, "start", "a"), (100_000, "end", "a"), (100_000, "start", "b"),
                           (100_010, "end", "b")]


def test_the_preemption_bound_holds_for_order():
    log: list[Event] = []
    rows = [("a", 0, 8, 100_000, True), ("b", 1000, 1, 10, True), ("c", 2000, 1, 10, True)]
    simulate(trace(*rows), 8, "sieve", max_preemptions=1, log=log)
    assert [e.job_id for e in log if e.kind == "preempt"] == ["a"]  # c waits for a: stopped once already


def test_demoted_jobs_wait_after_new_ones_the_least_served_first():
    served = 10_000.0  # GPU-seconds: queue 1
    waiting = [Waiting(Job("more-served", "g", 1, 0.0, checkpoints=True), attained=2 * served),
               Waiting(Job("less-served", "g", 1, 5.0, checkpoints=True), attained=served),
               Waiting(Job("restarts", "g", 1, 1.0), attained=served),  # starts over: first queue
               Waiting(Job("new", "g", 1, 9.0))]
    assert [w.job.id for w in demoted(waiting)] == ["less-served", "more-served"]
    assert kept(served, waiting[2].job) == 0.0
    nodes = [Node("n0", 8)]
    full = [Running(Job("r", "x", 7, 0.0), {"n0": 7}, 0.0)]  # one GPU free: one job starts
    order: list[str] = []
    for _ in range(4):
        d = decide("sieve", 100.0, nodes, full, [w for w in waiting if w.job.id not in order], History())
        order += [s.job_id for s in d.starts]
    assert order == ["restarts", "new", "less-served", "more-served"]


def test_under_quotas_order_never_takes_another_projects_share():
    nodes = [Node("n0", 4), Node("n1", 4)]
    served = [Running(Job("b1", "g", 4, 0.0, checkpoints=True, project="b"), {"n0": 4}, 0.0, attained=8000.0),
              Running(Job("a1", "g", 4, 0.0, checkpoints=True, project="a"), {"n1": 4}, 0.0, attained=8000.0)]
    new = [Waiting(Job("a2", "g", 4, 5.0, checkpoints=True, project="a"))]
    assert decide("sieve", 10.0, nodes, served, new).preempt == ["b1"]  # no quotas: the lowest node index
    shares = {p: Share(p, gpus=50) for p in "ab"}  # both within their share of a large group
    d = decide("sieve", 10.0, nodes, served, new, ledger=Ledger((100, 0.0, 0.0), shares, served))
    assert d.preempt == ["a1"] and [(s.job_id, s.placement) for s in d.starts] == [("a2", {"n1": 4})]
