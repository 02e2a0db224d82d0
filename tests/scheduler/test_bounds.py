"""The bounds no schedule can beat: worked out by hand on small traces, and never beaten by any policy
on random ones (the simulator's figures against them)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from myapp.scheduler.bounds import busy_upper_bound, jct_lower_bound
from myapp.scheduler.policy import POLICIES
from myapp.scheduler.simulate import simulate

from .support import trace


def test_two_jobs_on_one_node_the_bound_is_the_best_order_within_a_step():
    jobs = trace(("a", 0, 8, 100), ("b", 0, 8, 50))
    # best: b then a, (50 + 150) / 2 = 100; counted per 1 s step the bound misses one step of each job
    assert jct_lower_bound(jobs, 8, step=1.0) == pytest.approx(99.0)
    assert simulate(jobs, 8, "sieve")["avg_jct_s"] >= 100


def test_with_room_for_everyone_the_bound_is_the_durations():
    jobs = trace(("a", 0, 1, 100), ("b", 10, 1, 300))
    assert jct_lower_bound(jobs, 16, step=1.0) == pytest.approx(199.0)  # (100 + 300) / 2, less a step each


def test_the_capacity_counts_when_the_cluster_is_overloaded():
    # 4 one-GPU jobs of 100 s at once on 1 GPU: at best 100, 200, 300, 400 -> 250; durations alone say 100
    jobs = trace(*[(f"j{i}", 0, 1, 100) for i in range(4)])
    assert jct_lower_bound(jobs, 1, step=1.0) == pytest.approx(249.0)


def test_busy_bound_counts_only_what_can_run_before_the_last_submission():
    jobs = trace(("a", 0, 4, 100), ("b", 100, 8, 100))
    assert busy_upper_bound(jobs, 8) == 0.5  # a's 400 GPU-s in 800; b starts at the window's end
    jobs = trace(("a", 0, 8, 300), ("b", 0, 8, 300), ("c", 100, 1, 1))
    assert busy_upper_bound(jobs, 8) == 1.0  # backlogged over the whole window


rows = st.lists(st.tuples(st.integers(0, 2000), st.sampled_from([1, 1, 2, 4, 8, 12, 16]),
                          st.integers(0, 5000), st.booleans()), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(rows=rows, nodes=st.integers(1, 3), policy=st.sampled_from(POLICIES))
def test_no_policy_beats_the_bounds(rows, nodes, policy):
    gpus = nodes * 8
    jobs = trace(*[(f"j{i}", s, min(g, gpus), d, c) for i, (s, g, d, c) in enumerate(rows)])
    result = simulate(jobs, gpus, policy)
    assert result["avg_jct_s"] >= jct_lower_bound(jobs, gpus, step=7.0) - 1e-6
    # utilization counts runs thrown away by restarts, and a resumed job's restart too (GPUs held, no progress)
    if not result["lost_gpu_seconds"] and not result["preemptions_per_job"]:
        assert result["utilization"] <= busy_upper_bound(jobs, gpus) + 1e-9


def test_a_resumed_jobs_restart_is_busy_time_the_durations_do_not_hold():
    """The case the property found: a checkpointing job preempted by tiresias resumes after a restart that
    holds its GPUs without progress, so utilization may pass the durations' bound (and the JCT bound holds)."""
    jobs = trace(("j0", 0, 12, 301, True), ("j1", 302, 1, 0, False), ("j2", 0, 1, 0, False))
    result = simulate(jobs, 16, "tiresias")
    assert result["preemptions_per_job"] > 0 and result["lost_gpu_seconds"] == 0
    assert result["avg_jct_s"] >= jct_lower_bound(jobs, 16, step=7.0) - 1e-6
