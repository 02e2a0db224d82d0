"""`decide` on hand-made instants: placements, waiting reasons with positions, EASY's reservation,
Tiresias' review time, and the ordering of ours."""
from __future__ import annotations

import pytest

from myapp.errors import FieldError
from myapp.scheduler.model import History, Job, Node, Running, Waiting
from myapp.scheduler.policy import decide

TWO = [Node("n0", 8), Node("n1", 8)]


def job(job_id: str, gpus: int, submitted: float = 0.0, group: str = "g", **kw) -> Job:
    return Job(job_id, group, gpus, submitted, **kw)


def wait(*jobs: Job) -> list[Waiting]:
    return [Waiting(j) for j in jobs]


def test_gangs_are_placed_whole_and_every_waiting_job_says_why_with_its_position():
    running = [Running(job("r", 6), {"n0": 6}, started=0)]
    waiting = wait(job("a", 4, 1), job("b", 8, 2), job("c", 16, 3), job("d", 1, 4), job("e", 24, 5))
    d = decide("gang-fifo", 10, TWO, running, waiting)
    assert [(s.job_id, s.placement) for s in d.starts] == [("a", {"n1": 4}), ("d", {"n0": 1})]  # best fit
    assert [(r.job_id, r.position, r.text) for r in d.reasons] == [
        ("b", 1, "waiting: no node with 8 free GPUs"),
        ("c", 2, "waiting: needs 2 whole free nodes for 16 GPUs, 0 free"),
        ("e", 3, "waiting: needs 24 GPUs, the cluster has 16"),
    ]
    assert d.preempt == [] and d.review_at is None


def test_a_big_gang_takes_whole_nodes_and_cpu_and_memory_count():
    nodes = [Node("n0", 8, cpu=16, memory=64), Node("n1", 8, cpu=16, memory=64), Node("n2", 8, cpu=16, memory=64)]
    running = [Running(job("r", 0, cpu=2), {"n2": 0}, started=0)]  # a CPU-only job keeps n2 from being whole
    d = decide("gang-fifo", 0, nodes, running, wait(job("big", 12), job("fat", 1, 1, cpu=15)))
    assert [(s.job_id, s.placement) for s in d.starts] == [("big", {"n0": 8, "n1": 8})]
    assert d.reasons[0].text == "waiting: no node with 1 free GPUs, 15 CPU and 0 bytes of memory"


def test_easy_backfills_only_what_ends_before_the_reservation():
    history = History()
    for _ in range(3):
        history.add("g", 4, 100)  # 4-GPU jobs of g run 100 s: r is expected to end at 100
    history.add("g", 2, 50)
    running = [Running(job("r", 4), {"n0": 4}, started=0)]
    waiting = wait(job("b", 8, 1), job("c", 4, 2), job("d", 2, 3))
    d = decide("easy-backfill", 10, TWO[:1], running, waiting, history)
    assert [(s.job_id, s.placement) for s in d.starts] == [("d", {"n0": 2})]  # ends at 60, before b's 100
    assert [(r.job_id, r.position, r.text) for r in d.reasons] == [
        ("b", 1, "waiting: no node with 8 free GPUs"),
        ("c", 2, "waiting: its GPUs are held for b, expected to start in 0.0 h"),  # it would end at 110
    ]


def test_easy_without_history_backfills_off_the_reserved_nodes_only():
    running = [Running(job("r", 4), {"n0": 4}, started=0)]
    d = decide("easy-backfill", 10, TWO, running, wait(job("b", 16, 1), job("c", 4, 2), job("e", 4, 3)))
    # b waits for n0 and n1; without history c and e cannot promise to end in time, and both nodes are b's
    assert d.starts == [] and [r.job_id for r in d.reasons] == ["b", "c", "e"]


def test_tiresias_asks_to_be_called_when_a_job_crosses_its_threshold():
    running = [Running(job("r", 8), {"n0": 8}, started=0)]
    d = decide("tiresias", 100, TWO[:1], running, wait(job("w", 1, 50)))
    assert d.review_at == 450  # 3600 GPU-seconds at 8 GPUs, from 0
    assert d.preempt == [] and d.reasons[0].text == "waiting: no node with 1 free GPUs"
    d = decide("tiresias", 500, TWO[:1], running, wait(job("w", 1, 50)))
    assert d.preempt == ["r"] and [s.job_id for s in d.starts] == ["w"]
    assert decide("tiresias", 500, TWO[:1], [Running(job("r", 8), {"n0": 8}, 0, preemptions=1)],
                  wait(job("w", 1, 50))).preempt == []  # the bound


def test_ours_starts_the_job_expected_to_be_shortest():
    history = History()
    history.add("slow", 1, 100_000)
    history.add("quick", 1, 60)
    running = [Running(job("r", 7), {"n0": 7}, started=0)]
    d = decide("sieve", 10, TWO[:1], running, wait(job("x", 1, 0, "slow"), job("y", 1, 5, "quick")), history)
    assert [s.job_id for s in d.starts] == ["y"]
    assert [(r.job_id, r.position) for r in d.reasons] == [("x", 1)]


def test_bad_arguments():
    with pytest.raises(FieldError, match="unknown policy 'sjf'"):
        decide("sjf", 0, TWO, [], [])
    with pytest.raises(FieldError, match="max_preemptions: must be >= 0"):
        decide("tiresias", 0, TWO, [], [], max_preemptions=-1)


def test_ours_orders_equal_expectations_by_submission_and_puts_the_starving_first():
    history = History()
    for group in ("g", "h"):
        history.add(group, 1, 100)
    history.add("slow", 1, 10_000)
    full = [Running(job("r", 8), {"n0": 8}, started=0)]
    waiting = wait(job("z", 1, 0, "slow"), job("x", 1, 5, "h"), job("y", 1, 3, "g"), job("w", 1, -10**7, "g"))
    d = decide("sieve", 10, TWO[:1], full, waiting, history)
    assert [(r.job_id, r.position) for r in d.reasons] == [("w", 1), ("y", 2), ("x", 3), ("z", 4)]


def test_ours_holds_the_nodes_that_free_first_for_a_starving_gang():
    history = History()
    history.add("g", 1, 100)
    history.add("slow", 1, 10**6)
    running = [Running(job("r1", 1), {"n0": 1}, started=0), Running(job("r2", 1, group="slow"), {"n1": 1}, 0)]
    waiting = wait(job("big", 8, -10**7, "new"), job("q", 1, 5, "slow"))
    d = decide("sieve", 10, TWO, running, waiting, history, max_preemptions=0)  # the reservation alone
    assert [(s.job_id, s.placement) for s in d.starts] == [("q", {"n1": 1})]  # not on n0, held for big
    assert [(r.job_id, r.position, r.text) for r in d.reasons] == [("big", 1, "waiting: no node with 8 free GPUs")]


def test_ours_holds_nodes_for_the_first_job_in_its_order_that_does_not_fit():
    """Not only a starving one: else 1-GPU jobs keep every node fragmented and an 8-GPU job never fits."""
    history = History()
    history.add("g", 4, 100)  # r ends in about 100 s
    history.add("b", 8, 10)  # b: 80 GPU-seconds expected, first in the order
    history.add("s", 1, 1000)  # s: 1,000 GPU-seconds, would run past r's end on b's node
    running = [Running(job("r", 4), {"n0": 4}, started=0)]
    d = decide("sieve", 10, TWO[:1], running, wait(job("b", 8, 5, "b"), job("s", 1, 5, "s")), history,
               max_preemptions=0)  # the reservation alone
    assert d.starts == []
    assert [(r.job_id, r.position) for r in d.reasons] == [("b", 1), ("s", 2)]
    assert d.reasons[1].text.startswith("waiting: its GPUs are held for b, expected to start in")


def _pinned(started: float, expected: float, preemptions: int = 0) -> tuple[History, list[Running]]:
    """n0 holds one 1-GPU job of g (g's runs last `expected` s); n1 is full with a job that is never stopped."""
    history = History()
    history.add("g", 1, expected)
    return history, [Running(job("lone", 1), {"n0": 1}, started, preemptions=preemptions),
                     Running(job("full", 8, group="h"), {"n1": 8}, 0, preemptible=False)]


def test_ours_preempts_a_job_that_pins_a_node_when_the_idle_gpus_outweigh_the_work_lost():
    history, running = _pinned(started=990, expected=10_000)  # 10 s run, 7 GPUs idle for ~2.8 h otherwise
    d = decide("sieve", 1000, TWO, running, wait(job("big", 8, 5, "b")), history)
    assert d.preempt == ["lone"] and [(s.job_id, s.placement) for s in d.starts] == [("big", {"n0": 8})]


def test_ours_does_not_preempt_when_the_work_lost_outweighs_the_idle_gpus():
    history, running = _pinned(started=0, expected=6_000)  # 5,000 GPU-s lost for 7 GPUs x 1,000 s
    d = decide("sieve", 5000, TWO, running, wait(job("big", 8, 5, "b")), history)
    assert d.preempt == [] and d.starts == [] and [r.job_id for r in d.reasons] == ["big"]


def test_ours_preempts_for_a_node_no_job_more_than_the_bound():
    history, running = _pinned(started=990, expected=10_000, preemptions=1)
    d = decide("sieve", 1000, TWO, running, wait(job("big", 8, 5, "b")), history)
    assert d.preempt == [] and d.starts == []


def test_ours_assembles_whole_nodes_for_a_multi_node_gang():
    history, running = _pinned(started=990, expected=10_000)
    three = [*TWO, Node("n2", 8)]  # n2 is whole; n0 becomes whole once its lone job is stopped
    d = decide("sieve", 1000, three, running, wait(job("big", 16, 5, "b")), history)
    assert d.preempt == ["lone"] and [(s.job_id, s.placement) for s in d.starts] == [("big", {"n0": 8, "n2": 8})]
    d = decide("easy-backfill", 1000, three, running, wait(job("big", 16, 5, "b")), history)
    assert d.preempt == [] and d.starts == []  # the anchors do not
