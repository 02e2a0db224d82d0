"""`myapp simulate --schedule-out FILE`: the figures it prints can be recomputed from the schedule it
writes (one row per run) and the trace alone: average JCT, utilization, partial-gang GPU-seconds and
preemptions, for the reference and for ours, with every job checkpointing."""
from __future__ import annotations

import csv
import json
import random

import pytest
from click.testing import CliRunner

from myapp.cli import main


def _trace(tmp_path) -> tuple[str, dict[str, tuple[float, int, float]]]:
    rng = random.Random(7)
    jobs = {}
    for i in range(40):
        gpus = rng.choice([1, 1, 2, 4, 8, 16])
        jobs[f"j{i:02d}"] = (float(rng.randint(0, 20_000)), gpus, float(rng.choice([60, 900, 4000, 30_000])))
    path = tmp_path / "trace.csv"
    path.write_text("job_id,group,submit_s,num_gpus,duration_s\n" + "".join(
        f"{job_id},g{gpus},{submit},{gpus},{duration}\n" for job_id, (submit, gpus, duration) in jobs.items()))
    return str(path), jobs


@pytest.mark.parametrize("policy", ["tiresias-las", "sieve"])
def test_the_printed_figures_follow_from_the_schedule(tmp_path, policy):
    path, jobs = _trace(tmp_path)
    out = tmp_path / "schedule.csv"
    done = CliRunner().invoke(main, ["simulate", path, "--gpus", "16", "--policy", policy, "--checkpoints",
                                     "--max-preemptions", "3", "--json", "--schedule-out", str(out)])
    assert done.exit_code == 0, done.output
    printed = json.loads(done.output)
    with out.open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["job_id", "start", "end", "gpus", "nodes", "ended"]
    assert {r["ended"] for r in rows} <= {"finished", "preempted", "failed"}
    finished = {r["job_id"]: float(r["end"]) for r in rows if r["ended"] == "finished"}
    assert sorted(finished) == sorted(jobs)
    jct = [finished[j] - submit for j, (submit, _, _) in jobs.items()]
    assert printed["avg_jct_s"] == pytest.approx(sum(jct) / len(jct))
    first, last = min(s for s, _, _ in jobs.values()), max(s for s, _, _ in jobs.values())
    busy = sum(int(r["gpus"]) * max(0.0, min(float(r["end"]), last) - max(float(r["start"]), first)) for r in rows)
    assert printed["utilization"] == pytest.approx(busy / (16 * (last - first)))
    partial = 0.0
    for r in rows:
        held = {name: int(n) for name, n in (pair.split(":") for pair in r["nodes"].split())}
        assert sum(held.values()) == int(r["gpus"])
        gang = jobs[r["job_id"]][1]
        if int(r["gpus"]) < gang or (gang <= 8 and len(held) > 1):
            partial += int(r["gpus"]) * (float(r["end"]) - float(r["start"]))
    assert partial == printed["partial_gang_seconds"] == 0
    preempted = sum(r["ended"] == "preempted" for r in rows)
    assert preempted > 0  # the trace is busy enough that the schedule shows restarts
    assert printed["preemptions_per_job"] == pytest.approx(preempted / len(jobs))
    # Checkpointing loses no work; each resumption costs at most the 30 s restart
    ran: dict[str, float] = {}
    for r in rows:
        ran[r["job_id"]] = ran.get(r["job_id"], 0.0) + float(r["end"]) - float(r["start"])
    restarts = {j: sum(r["ended"] == "preempted" and r["job_id"] == j for r in rows) for j in jobs}
    for j, (_, _, duration) in jobs.items():
        assert duration - 1e-6 <= ran[j] <= duration + 30 * restarts[j] + 1e-6
