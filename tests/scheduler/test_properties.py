"""Properties every policy keeps on random small traces, checked from the simulator's event log
(independently of the simulator's own guard): never more GPUs than a node has, a gang always whole and
on one node or on whole nodes, completion >= duration, makespan >= work / GPUs, the preemption bound
(but for tiresias-las, which has none)."""
from __future__ import annotations

from collections import Counter, defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from myapp.scheduler.model import Job, Node, Running, Waiting
from myapp.scheduler.placement import Plan
from myapp.scheduler.policy import POLICIES, REFERENCE, decide
from myapp.scheduler.simulate import Event, simulate

from .support import trace

NODE = 8
rows = st.lists(st.tuples(st.integers(0, 2000), st.sampled_from([1, 1, 2, 4, 7, 8, 12, 16]),
                          st.integers(0, 5000), st.booleans()), min_size=1, max_size=14)


@settings(max_examples=60, deadline=None)
@given(rows=rows, nodes=st.integers(2, 3), policy=st.sampled_from(POLICIES), bound=st.integers(0, 2))
def test_every_policy_keeps_the_invariants(rows, nodes, policy, bound):
    jobs = trace(*[(f"j{i}", submit, gpus, duration, ckpt) for i, (submit, gpus, duration, ckpt) in enumerate(rows)])
    gpus = nodes * NODE
    log: list[Event] = []
    result = simulate(jobs, gpus, policy, max_preemptions=bound, log=log)
    by_id = {tj.job.id: tj for tj in jobs}

    used: defaultdict[str, int] = defaultdict(int)
    held: dict[str, dict[str, int]] = {}
    assert [e.time for e in log] == sorted(e.time for e in log)  # the log is in time order
    for e in log:
        need = by_id[e.job_id].job.gpus
        if e.kind == "start":
            assert e.job_id not in held
            assert sum(e.placement.values()) >= need  # the whole gang, never part of it
            if need <= NODE:
                assert len(e.placement) == 1
            else:
                assert all(n == NODE for n in e.placement.values())  # whole nodes
            held[e.job_id] = e.placement
            for node, n in e.placement.items():
                used[node] += n
                assert used[node] <= NODE, f"{node} over-committed at {e.time}"
        else:
            assert held.pop(e.job_id) == e.placement
            for node, n in e.placement.items():
                used[node] -= n
    assert not held

    ends = {e.job_id: e.time for e in log if e.kind == "end"}
    assert ends.keys() == by_id.keys()
    for job_id, end in ends.items():
        assert end - by_id[job_id].job.submitted >= by_id[job_id].duration - 1e-6
    first = min(tj.job.submitted for tj in jobs)
    work = sum(tj.job.gpus * tj.duration for tj in jobs)
    assert result["makespan_s"] >= work / gpus - 1e-6
    preempted = Counter(e.job_id for e in log if e.kind == "preempt")
    if policy != REFERENCE:  # the reference is specified without a bound
        assert max(preempted.values(), default=0) <= bound
    assert result["preemptions_per_job"] == sum(preempted.values()) / len(jobs)
    assert result["partial_gang_seconds"] == 0
    assert 0 <= result["utilization"] <= 1
    assert result["makespan_s"] == max(ends.values()) - first


@settings(max_examples=80, deadline=None)
@given(sizes=st.lists(st.sampled_from([2, 4, 8]), min_size=1, max_size=4),
       wants=st.lists(st.tuples(st.sampled_from([1, 2, 3, 4, 6, 8, 10, 16]), st.integers(0, 3)), max_size=10),
       fill=st.lists(st.integers(0, 8), min_size=4, max_size=4), policy=st.sampled_from(POLICIES))
def test_decide_on_mixed_nodes_places_whole_gangs_on_free_gpus_and_explains_the_rest(sizes, wants, fill, policy):
    nodes = [Node(f"n{i}", g) for i, g in enumerate(sizes)]
    running = [Running(Job(f"r{i}", "g", min(f, n.gpus), 0.0), {n.name: min(f, n.gpus)}, started=0.0)
               for i, (n, f) in enumerate(zip(nodes, fill, strict=False)) if min(f, n.gpus)]
    waiting = [Waiting(Job(f"w{i}", "g", gpus, float(t))) for i, (gpus, t) in enumerate(wants)]
    d = decide(policy, 100.0, nodes, running, waiting)
    free = {n.name: n.gpus for n in nodes}
    for r in running:
        if r.job.id not in d.preempt:
            free[next(iter(r.placement))] -= r.job.gpus
    largest = max(sizes)
    by_id = {w.job.id: w.job for w in waiting}
    for s in d.starts:
        need = by_id[s.job_id].gpus
        assert sum(s.placement.values()) >= need
        if need <= largest:
            assert len(s.placement) == 1
        else:
            capacity = {x.name: x.gpus for x in nodes}
            assert all(free[n] == capacity[n] == s.placement[n] for n in s.placement)  # whole free nodes
        for n, held in s.placement.items():
            free[n] -= held
            assert free[n] >= 0
    assert {r.job_id for r in d.reasons} == by_id.keys() - {s.job_id for s in d.starts}
    assert [r.position for r in d.reasons] == list(range(1, len(d.reasons) + 1))
    if policy == "gang-fifo":  # greedy: nothing left waiting would fit in what is left free
        plan = Plan(nodes, [])
        plan.gpus = dict(free)
        plan.free_gpus = sum(free.values())
        assert all(plan.fit(by_id[r.job_id]) is None for r in d.reasons)
