"""The simulator on hand traces whose answers can be worked out, and the `myapp simulate` command."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from myapp.cli import main
from myapp.errors import DomainError, FieldError
from myapp.scheduler.policy import POLICIES
from myapp.scheduler.simulate import Event, simulate

from .support import trace


def ends(log: list[Event]) -> dict[str, float]:
    return {e.job_id: e.time for e in log if e.kind == "end"}


@pytest.mark.parametrize("policy", POLICIES)
def test_two_full_node_jobs_run_one_after_the_other(policy):
    log: list[Event] = []
    result = simulate(trace(("a", 0, 8, 100), ("b", 0, 8, 50)), 8, policy, log=log)
    assert ends(log) == {"a": 100, "b": 150}
    assert result["jobs"] == 2 and result["avg_jct_s"] == 125 and result["makespan_s"] == 150
    assert result["p50_jct_s"] == 100 and result["p99_jct_s"] == 150
    assert result["partial_gang_seconds"] == 0 and result["preemptions_per_job"] == 0


def test_utilization_counts_busy_gpus_between_first_and_last_submission():
    result = simulate(trace(("a", 0, 4, 100), ("b", 100, 8, 100)), 8, "gang-fifo")
    assert result["utilization"] == 0.5  # 4 of 8 GPUs busy over [0, 100]; b's run is after the window
    assert result["offered_load"] == (4 * 100 + 8 * 100) / (8 * 100)
    assert result["makespan_s"] == 200


def test_gang_fifo_skips_a_gang_that_does_not_fit_and_keeps_it_whole():
    log: list[Event] = []
    simulate(trace(("a", 0, 4, 100), ("b", 0, 8, 10), ("c", 0, 4, 10)), 8, "gang-fifo", log=log)
    assert ends(log) == {"a": 100, "c": 10, "b": 110}  # c passes b, which never holds 4 of its 8 alone
    starts = {e.job_id: (e.time, e.placement) for e in log if e.kind == "start"}
    assert starts["b"] == (100, {"n000": 8})


def test_a_gang_larger_than_a_node_takes_whole_nodes():
    log: list[Event] = []
    simulate(trace(("a", 0, 4, 100), ("b", 0, 12, 10), ("c", 0, 2, 10)), 24, "gang-fifo", log=log)
    starts = {e.job_id: e.placement for e in log if e.kind == "start"}
    assert starts["a"] == {"n000": 4}
    assert starts["b"] == {"n001": 8, "n002": 8}  # 12 GPUs on two whole nodes
    assert starts["c"] == {"n000": 2}  # best fit: beside a, not on a free node


def test_tiresias_preempts_a_demoted_job_which_starts_over():
    log: list[Event] = []
    # a crosses 3600 GPU-seconds at t=450 (queue 1); b arrives in queue 0 at 500 and preempts it.
    result = simulate(trace(("a", 0, 8, 1000), ("b", 500, 1, 10)), 8, "tiresias", log=log)
    assert [(e.time, e.kind, e.job_id) for e in log] == [
        (0, "start", "a"), (500, "preempt", "a"), (500, "start", "b"), (510, "end", "b"), (510, "start", "a"),
        (1510, "end", "a")]
    assert result["lost_gpu_seconds"] == 8 * 500
    assert result["preemptions_per_job"] == 0.5 and result["max_preemptions_of_a_job"] == 1


def test_a_checkpointing_job_resumes_where_it_was_after_the_restart():
    log: list[Event] = []
    result = simulate(trace(("a", 0, 8, 1000, True), ("b", 500, 1, 10)), 8, "tiresias", log=log)
    assert ends(log) == {"b": 510, "a": 510 + 30 + 500}
    assert result["lost_gpu_seconds"] == 0
    log.clear()
    simulate(trace(("a", 0, 8, 1000, True), ("b", 500, 1, 10)), 8, "tiresias", log=log, restart_seconds=0)
    assert ends(log) == {"b": 510, "a": 1010}


def test_the_preemption_bound_holds():
    log: list[Event] = []
    rows = [("a", 0, 8, 1000), ("b", 500, 1, 10), ("c", 1000, 1, 10)]
    simulate(trace(*rows), 8, "tiresias", max_preemptions=1, log=log)
    assert [e.job_id for e in log if e.kind == "preempt"] == ["a"]  # c waits: a was preempted once already
    assert ends(log) == {"b": 510, "a": 1510, "c": 1520}
    log.clear()
    simulate(trace(*rows), 8, "tiresias", max_preemptions=0, log=log)
    assert not [e for e in log if e.kind == "preempt"]


def test_bad_cluster_sizes():
    with pytest.raises(FieldError, match="gpus: must be a positive multiple of 8"):
        simulate(trace(("a", 0, 1, 1)), 12, "gang-fifo")
    with pytest.raises(FieldError) as caught:
        simulate(trace(("a", 0, 1, 1), ("b", 0, 16, 1)), 8, "gang-fifo")
    assert caught.value.message == "trace:3: job b needs 16 GPUs, the cluster has 8"
    with pytest.raises(FieldError, match="unknown policy 'lottery'"):
        simulate(trace(("a", 0, 1, 1)), 8, "lottery")
    assert issubclass(FieldError, DomainError)


def write(tmp_path, text: str):
    path = tmp_path / "t.csv"
    path.write_text(text)
    return str(path)


def test_cli_json_prints_one_object_with_the_fields(tmp_path):
    path = write(tmp_path, "job_id,group,submit_s,num_gpus,duration_s\na,g,0,8,100\nb,g,0,8,50\n")
    done = CliRunner().invoke(main, ["simulate", path, "--gpus", "8", "--policy", "gang-fifo", "--json"])
    assert done.exit_code == 0, done.output
    out = json.loads(done.output)
    assert {"jobs", "avg_jct_s", "p50_jct_s", "p95_jct_s", "p99_jct_s", "makespan_s", "utilization",
            "partial_gang_seconds", "preemptions_per_job", "sim_seconds"} <= out.keys()
    assert (out["jobs"], out["avg_jct_s"], out["makespan_s"], out["policy"]) == (2, 125, 150, "gang-fifo")


def test_cli_names_the_bad_line_and_the_oversized_job(tmp_path):
    path = write(tmp_path, "job_id,group,submit_s,num_gpus,duration_s\na,g,0,8,100\nb,g,0,8\n")
    done = CliRunner().invoke(main, ["simulate", path, "--gpus", "8"])
    assert done.exit_code == 1
    assert "t.csv:3: 4 fields, expected 5" in done.output
    path = write(tmp_path, "job_id,group,submit_s,num_gpus,duration_s\na,g,0,16,100\n")
    done = CliRunner().invoke(main, ["simulate", path, "--gpus", "8"])
    assert done.exit_code == 1 and "t.csv:2: job a needs 16 GPUs, more than the cluster's 8" in done.output


def test_cli_table(tmp_path):
    path = write(tmp_path, "job_id,group,submit_s,num_gpus,duration_s\na,g,0,8,100\n")
    done = CliRunner().invoke(main, ["simulate", path, "--gpus", "8"])
    assert done.exit_code == 0, done.output
    assert "sieve on 8 GPUs" in done.output and "average JCT" in done.output and "100 s" in done.output
