"""The simulator's time series (opt-in): binned utilization and waiting jobs, JCT by submission time."""
from __future__ import annotations

import pytest

from myapp.scheduler.series import MAX_POINTS, binned, jct_by_submission
from myapp.scheduler.simulate import simulate

from .support import trace


def test_a_step_function_is_averaged_over_each_bin():
    # 8 GPUs busy over [0, 50), 4 over [50, 150), 0 from 150 to the end at 200; one job waits over [0, 100)
    out = binned([(0, 8, 1), (50, 4, 1), (100, 4, 0), (150, 0, 0)], 0, 200, 8, 4)
    assert out["t"] == [0, 50, 100, 150]
    assert out["utilization"] == [1.0, 0.5, 0.5, 0.0]
    assert out["waiting"] == [1.0, 1.0, 0.0, 0.0]
    halves = binned([(0, 8, 0), (25, 0, 0)], 0, 100, 8, 2)
    assert halves["utilization"] == [0.5, 0.0]  # a change inside a bin is weighed by its share of the bin


def test_jct_is_averaged_by_submission_bin_and_empty_bins_are_none():
    out = jct_by_submission([(0, 10), (10, 30), (99, 5), (100, 7)], 0, 100, 2)
    assert out["t"] == [0, 50]
    assert out["avg_jct_s"] == [20, 6] and out["jobs"] == [2, 2]  # the last submission falls in the last bin
    assert jct_by_submission([(0, 10)], 0, 100, 3)["avg_jct_s"] == [10, None, None]


@pytest.mark.parametrize("points", [0, MAX_POINTS + 1])
def test_points_are_bounded(points):
    with pytest.raises(ValueError, match="points"):
        binned([(0, 1, 0)], 0, 1, 8, points)


def test_the_replay_records_series_only_when_asked_and_they_agree_with_the_figures():
    jobs = trace(("a", 0, 4, 100), ("b", 0, 8, 100), ("c", 50, 4, 100))
    plain = simulate(jobs, 8, "gang-fifo")
    assert "series" not in plain
    result = simulate(jobs, 8, "gang-fifo", series_points=3)
    assert {k: v for k, v in result.items() if k not in ("series", "sim_seconds")} == {
        k: v for k, v in plain.items() if k != "sim_seconds"}
    over = result["series"]["over_time"]
    # a [0,100) and c [50,150) on 4 GPUs each, then b [150,250) on 8: makespan 250, bins of 250/3 s
    assert len(over["t"]) == 3 and over["t"][1] == pytest.approx(250 / 3)
    busy = sum(u * 8 * (250 / 3) for u in over["utilization"])
    assert busy == pytest.approx(4 * 100 + 4 * 100 + 8 * 100)  # every busy GPU-second, once
    assert over["waiting"][0] == pytest.approx(1.0)  # b waits over the whole first bin
    jct = result["series"]["jct_by_submission"]
    assert jct["jobs"] == [2, 0, 1] and jct["avg_jct_s"] == [(100 + 250) / 2, None, 100]


def test_a_replay_over_its_cpu_budget_stops_with_a_clear_error():
    from myapp.errors import DomainError

    jobs = trace(*((f"j{i}", i, 1, 10_000) for i in range(3000)))
    with pytest.raises(DomainError, match="CPU seconds"):
        simulate(jobs, 8, "sieve", max_cpu_seconds=0.0)


def test_bin_edges_that_do_not_add_up_in_floating_point_end():
    # 0.1 * 3 != 0.3: a step starting on a computed edge must still move on
    out = binned([(0, 1, 0), (0.30000000000000004, 2, 0), (0.7, 0, 0)], 0, 1.0, 2, 10)
    assert sum(out["utilization"]) * 0.1 * 2 == pytest.approx(0.3 * 1 + 0.4 * 2)
