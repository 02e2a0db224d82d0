"""The simulator's fast path decides as the explained path does: `decide(..., explain=False)` with the
queue kept as a `WaitingQueue` (and the free GPUs tracked by the caller) starts and preempts exactly what
`decide(..., explain=True)` on plain lists does, on random instants of every policy."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myapp.scheduler.model import History, Job, Node, Running, Start, Waiting, WaitingQueue
from myapp.scheduler.placement import Plan
from myapp.scheduler.policy import POLICIES, decide

NOW = 4_000_000.0  # late enough that jobs submitted early have starved (sieve puts them first)


@st.composite
def instants(draw):
    tracked = draw(st.booleans())
    nodes = [Node(f"n{i}", draw(st.sampled_from([4, 8])), cpu=8.0 if tracked else 0.0,
                  memory=64.0 if tracked else 0.0) for i in range(draw(st.integers(1, 4)))]
    running = []
    for node in nodes:
        left = node.gpus
        for _ in range(draw(st.integers(0, 3))):
            if not left:
                break
            gpus = draw(st.integers(1, left))
            left -= gpus
            job = Job(f"r{len(running)}", draw(st.sampled_from("ab")), gpus, 0.0,
                      cpu=draw(st.sampled_from([0.0, 2.0])) if tracked else 0.0, checkpoints=draw(st.booleans()))
            running.append(Running(job, {node.name: gpus}, started=draw(st.floats(0.0, NOW)),
                                   preemptions=draw(st.integers(0, 1)), preemptible=draw(st.booleans())))
    waiting = [Waiting(Job(f"w{i}", draw(st.sampled_from("ab")), draw(st.sampled_from([1, 1, 2, 4, 8, 12])),
                           float(draw(st.integers(0, int(NOW)))), cpu=draw(st.sampled_from([0.0, 0.0, 3.0, 7.0]))),
                       attained=draw(st.sampled_from([0.0, 5000.0])))
               for i in range(draw(st.integers(0, 14)))]
    history = History()
    for _ in range(draw(st.integers(0, 8))):
        history.add(draw(st.sampled_from("ab")), draw(st.sampled_from([1, 2, 4, 8])), draw(st.floats(10.0, 9000.0)))
    return nodes, running, waiting, history


def _queue(waiting: list[Waiting]) -> WaitingQueue:
    queue = WaitingQueue()
    for w in waiting:
        queue.add(w)
    return queue


@settings(max_examples=300, deadline=None)
@given(instant=instants(), policy=st.sampled_from(POLICIES), bound=st.integers(0, 2))
def test_the_fast_path_starts_and_preempts_what_the_explained_path_does(instant, policy, bound):
    nodes, running, waiting, history = instant
    want = decide(policy, NOW, nodes, running, waiting, history, max_preemptions=bound)
    free = None
    if not any(n.cpu for n in nodes):  # as the simulator does: it tracks the free GPUs itself
        free = Plan(nodes, running).gpus
    for queue in (waiting, _queue(waiting)):
        for explain in (True, False):
            got = decide(policy, NOW, nodes, running, queue, history, explain=explain, max_preemptions=bound,
                         free=free)
            assert (got.starts, got.preempt, got.review_at) == (want.starts, want.preempt, want.review_at)
            if explain:
                assert got.reasons == want.reasons


def test_a_waiting_queue_keeps_each_class_in_arrival_order():
    a1, a2, b1 = Job("a1", "a", 1, 10.0), Job("a2", "a", 1, 20.0), Job("b1", "b", 2, 15.0)
    queue = _queue([Waiting(a2), Waiting(b1)])
    queue.add(Waiting(a1, attained=50.0))  # preempted and back: before a2, which was submitted later
    assert [w.job.id for w in queue] == ["a2", "b1", "a1"]  # iterates in the order added
    assert {k: [w.job.id for w in v] for k, v in queue.classes().items()} == {("a", 1): ["a1", "a2"], ("b", 2): ["b1"]}
    assert queue.sizes() == {1, 2} and len(queue) == 3 and Waiting(b1) in queue
    assert queue.remove("b1") == Waiting(b1)
    assert queue.sizes() == {1} and ("b", 2) not in queue.classes() and Waiting(b1) not in queue
    with pytest.raises(ValueError, match="a1 is already waiting"):
        queue.add(Waiting(a1))


def test_history_answers_from_the_latest_runs_after_each_add():
    history = History(window=2)
    assert history.expected("g", 1) is None
    history.add("g", 1, 100.0)
    assert history.expected("g", 1) == 100.0
    history.add("g", 1, 300.0)
    history.add("g", 1, 500.0)  # 100 leaves the window
    assert history.expected("g", 1) == 500.0  # the median of 300 and 500, rounded up
    assert history.expected("g", 1, 400.0) == 100.0


def test_plans_on_different_nodes_do_not_mix():
    small, large = [Node("n0", 4)], [Node("n0", 8), Node("n1", 8)]
    for nodes, total in ((small, 4), (large, 16), (small, 4)):
        plan = Plan(nodes, ())
        assert (plan.total, plan.largest, sum(plan.gpus.values())) == (total, nodes[0].gpus, total)


@pytest.mark.parametrize("policy", ["easy-backfill", "sieve"])
def test_a_job_short_of_cpu_does_not_keep_its_class_from_starting(policy):
    nodes = [Node("n0", 8, cpu=8.0), Node("n1", 8, cpu=8.0)]
    running = [Running(Job("r", "r", 8, 0.0), {"n0": 8}, started=NOW - 60)]
    history = History()
    history.add("a", 1, 10.0)
    waiting = [Waiting(Job("big", "b", 12, 0.0)),  # the head: it waits for both nodes
               Waiting(Job("fat", "a", 1, 1.0, cpu=9.0)),  # more CPU than any node has
               Waiting(Job("thin", "a", 1, 2.0))]  # of the same class, it fits before the head may start
    for queue in (waiting, _queue(waiting)):
        for explain in (True, False):
            got = decide(policy, NOW, nodes, running, queue, history, explain=explain)
            assert [s.job_id for s in got.starts] == ["thin"]


def test_the_fast_path_defragments_for_the_head_when_nothing_fits():
    """Found by the random search above: nothing fits without preemption, and sieve's head job makes room by
    preempting a job that checkpoints; the fast path returned at once instead, starting nothing."""
    nodes = [Node("n0", 4, cpu=8.0, memory=64.0), Node("n1", 4, cpu=8.0, memory=64.0)]
    running = [Running(Job("r0", "a", 2, 0.0), {"n0": 2}, started=0.0, preemptible=False),
               Running(Job("r1", "a", 1, 0.0), {"n0": 1}, started=0.0, preemptible=False),
               Running(Job("r2", "a", 3, 0.0, checkpoints=True), {"n1": 3}, started=0.0, preemptible=True)]
    waiting = [Waiting(Job("w0", "a", 2, 0.0), attained=0.0)]
    for explain in (True, False):
        got = decide("sieve", NOW, nodes, running, waiting, History(), explain=explain, max_preemptions=1)
        assert (got.starts, got.preempt) == ([Start("w0", {"n1": 2})], ["r2"]), explain
