"""The trace reader: the shared trace's format, and errors that name the line."""
from __future__ import annotations

from pathlib import Path

import pytest

from myapp.errors import DomainError, FieldError
from myapp.scheduler.trace import load, parse

ROOT = Path(__file__).resolve().parents[2]
HEADER = "job_id,group,submit_s,num_gpus,duration_s"


def error(lines: list[str], cluster_gpus: int | None = None) -> FieldError:
    with pytest.raises(FieldError) as caught:
        parse(lines, "t.csv", cluster_gpus)
    return caught.value


def test_reads_the_repository_trace():
    jobs = load(ROOT / "benchmarks" / "traces" / "philly-derived-jobs.csv", 400)
    assert len(jobs) == 15264
    assert jobs[0].job.id == "j00000" and jobs[0].line == 2 and jobs[0].duration == 17465.9
    assert {j.job.gpus for j in jobs} >= {1, 2, 4, 8, 16, 32}
    assert not any(j.job.checkpoints for j in jobs)


def test_checkpoints_column_is_optional():
    jobs = parse([HEADER + ",checkpoints", "a,g,0,1,5,true", "b,g,1,2,5,"])
    assert [(j.job.id, j.job.gpus, j.job.checkpoints) for j in jobs] == [("a", 1, True), ("b", 2, False)]


@pytest.mark.parametrize(("row", "reason"), [
    ("a,g,0,1", "4 fields, expected 5 (job_id,group,submit_s,num_gpus,duration_s)"),
    ("a,g,zero,1,5", "submit_s 'zero' is not a number"),
    ("a,g,0,1.5,5", "num_gpus '1.5' is not a whole number"),
    ("a,g,0,0,5", "num_gpus must be >= 1"),
    ("a,g,0,1,-3", "duration_s '-3' must be a finite number >= 0"),
    ("a,g,0,1,nan", "duration_s 'nan' must be a finite number >= 0"),
    (",g,0,1,5", "job_id and group must not be empty"),
])
def test_a_malformed_line_is_named(row, reason):
    exc = error([HEADER, "ok,g,0,1,5", row])
    assert exc.field == "t.csv:3"
    assert exc.reason == reason
    assert exc.message == f"t.csv:3: {reason}"


def test_a_job_larger_than_the_cluster_is_named():
    exc = error([HEADER, "a,g,0,8,5", "b,g,0,16,5"], cluster_gpus=8)
    assert exc.message == "t.csv:3: job b needs 16 GPUs, more than the cluster's 8"


def test_header_repeats_and_emptiness():
    assert error(["id,group,submit,gpus,duration", "a,g,0,1,5"]).field == "t.csv:1"
    assert error([]).reason.startswith("empty trace")
    assert error([HEADER]).reason == "the trace has no jobs"
    assert error([HEADER, "a,g,0,1,5", "a,g,1,1,5"]).message == "t.csv:3: job_id 'a' repeated"
    assert error([HEADER + ",checkpoints", "a,g,0,1,5,maybe"]).reason == "checkpoints 'maybe' is not true or false"


def test_a_missing_file_is_a_domain_error(tmp_path):
    with pytest.raises(DomainError, match="No such file"):
        load(tmp_path / "none.csv")
