"""`tiresias-las`, the reference ours is compared with (myapp/scheduler/las.py), on hand traces whose
schedule follows from its rules: queues at 1, 10 and 100 GPU-hours of attained service, the node that
needs the fewest GPUs evicted, lowest queue then latest submitted, no preemption bound, a 30 s restart."""
from __future__ import annotations

from myapp.scheduler.las import las_order, level
from myapp.scheduler.model import Job, Node, Running, Waiting, WaitingQueue
from myapp.scheduler.policy import decide
from myapp.scheduler.simulate import Event, simulate

from .support import trace


def test_queues_split_at_1_10_and_100_gpu_hours():
    assert [level(s) for s in (0, 3599, 3600, 35_999, 36_000, 359_999, 360_000, 1e9)] == [0, 0, 1, 1, 2, 2, 3, 3]


def test_waiting_jobs_go_by_queue_then_submission_from_a_list_or_a_kept_queue():
    jobs = [Waiting(Job("late-new", "g", 1, 50.0)), Waiting(Job("served", "g", 1, 0.0), attained=5000.0),
            Waiting(Job("barely", "g", 1, 30.0), attained=100.0), Waiting(Job("new", "g", 1, 10.0)),
            Waiting(Job("long", "g", 1, 1.0), attained=400_000.0)]
    queue = WaitingQueue()
    for w in jobs:
        queue.add(w)
    want = ["new", "barely", "late-new", "served", "long"]
    assert [w.job.id for w in las_order(jobs)] == want
    assert [w.job.id for w in las_order(queue)] == want
    queue.remove("barely")
    assert [w.job.id for w in las_order(queue)] == ["new", "late-new", "served", "long"]


def test_a_new_job_evicts_on_the_node_needing_the_fewest_gpus_the_latest_submitted_first():
    log: list[Event] = []
    # a and b (4 GPUs each) share n000 by best fit, c holds n001. At 5000 a and b are in queue 1, c in
    # queue 2: d evicts on n000 (4 GPUs) rather than c (8), and there b, submitted after a.
    rows = [("a", 0, 4, 100_000, True), ("b", 1, 4, 100_000, True), ("c", 2, 8, 100_000, True), ("d", 5000, 4, 100)]
    simulate(trace(*rows), 16, "tiresias-las", log=log)
    assert [(e.time, e.kind, e.job_id, e.placement) for e in log[:7]] == [
        (0, "start", "a", {"n000": 4}), (1, "start", "b", {"n000": 4}), (2, "start", "c", {"n001": 8}),
        (5000, "preempt", "b", {"n000": 4}), (5000, "start", "d", {"n000": 4}), (5100, "end", "d", {"n000": 4}),
        (5100, "start", "b", {"n000": 4})]
    b_end = next(e.time for e in log if e.kind == "end" and e.job_id == "b")
    assert b_end == 5100 + 30 + (100_000 - 4999)  # resumed where it was, after the 30 s restart


def test_no_preemption_bound_and_the_restart_is_paid_each_time():
    log: list[Event] = []
    rows = [("a", 0, 8, 5000, True), ("b", 1000, 1, 10), ("c", 2000, 1, 10)]
    result = simulate(trace(*rows), 8, "tiresias-las", max_preemptions=1, log=log)
    assert [(e.time, e.job_id) for e in log if e.kind == "preempt"] == [(1000, "a"), (2000, "a")]
    # a: 1000 s, then 990 s of which 30 restarting, then the rest after another restart
    assert {e.job_id: e.time for e in log if e.kind == "end"} == {"b": 1010, "c": 2010, "a": 2010 + 30 + 3040}
    assert result["max_preemptions_of_a_job"] == 2 and result["lost_gpu_seconds"] == 0


def test_a_gang_larger_than_a_node_evicts_where_fewest_gpus_go():
    nodes = [Node(f"n{i}", 8) for i in range(4)]
    served = 10 * 3600.0  # well into queue 1 by now
    running = [Running(Job("r0", "g", 2, 0.0), {"n0": 2}, 0.0, attained=served),
               Running(Job("r1", "g", 8, 0.0), {"n1": 8}, 0.0, attained=served),
               Running(Job("young", "g", 6, 0.0), {"n2": 6}, 99.0)]
    decision = decide("tiresias-las", 100.0, nodes, running, [Waiting(Job("big", "g", 16, 50.0))])
    assert decision.preempt == ["r0"]  # n3 is free, n0 costs 2 GPUs, n1 8; n2's job is in queue 0
    assert [(s.job_id, s.placement) for s in decision.starts] == [("big", {"n0": 8, "n3": 8})]
