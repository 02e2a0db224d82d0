"""``myapp simulate TRACE.csv --gpus N [--policy NAME] [--checkpoints] [--json] [--schedule-out FILE]``:
replay a trace through a policy.

A plain click command (no Flask app needed); `myapp/cli.py` attaches it.
"""
from __future__ import annotations

import dataclasses
import json
from typing import TextIO

import click

from ..errors import DomainError
from .policy import DEFAULT_MAX_PREEMPTIONS, OURS, POLICIES
from .schedule import intervals, write_csv
from .simulate import Event, simulate
from .trace import load

_LABELS = {
    "jobs": "jobs", "avg_jct_s": "average JCT", "p50_jct_s": "p50 JCT", "p95_jct_s": "p95 JCT",
    "p99_jct_s": "p99 JCT", "makespan_s": "makespan", "utilization": "utilization", "offered_load": "offered load",
    "partial_gang_seconds": "partial-gang GPU-seconds", "preemptions_per_job": "preemptions per job",
    "max_preemptions_of_a_job": "most preemptions of a job", "lost_gpu_seconds": "GPU-seconds lost to restarts",
    "sim_seconds": "simulated in (CPU s)",
}


def _show(key: str, value: float | str) -> str:
    if key.endswith("_jct_s") or key == "makespan_s":
        return f"{value:,.0f} s ({float(value) / 3600:,.1f} h)"
    if isinstance(value, float):
        return f"{value:,.3f}"
    return str(value)


@click.command("simulate")
@click.argument("trace", type=click.Path(dir_okay=False))
@click.option("--gpus", type=int, required=True, help="GPUs in the cluster, on nodes of 8")
@click.option("--policy", type=click.Choice(POLICIES), default=OURS, show_default=True)
@click.option("--max-preemptions", type=int, default=DEFAULT_MAX_PREEMPTIONS, show_default=True,
              help="how often one job may be preempted")
@click.option("--checkpoints", is_flag=True,
              help="every job checkpoints: a preempted job resumes after a 30 s restart instead of starting over")
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
@click.option("--schedule-out", type=click.File("w", encoding="utf-8", lazy=True),
              help="write the schedule to this CSV file: one row per run (job_id,start,end,gpus,nodes,ended)")
def simulate_command(trace: str, gpus: int, policy: str, max_preemptions: int, checkpoints: bool, as_json: bool,
                     schedule_out: TextIO | None) -> None:
    """Replay TRACE.csv (job_id,group,submit_s,num_gpus,duration_s[,checkpoints]) through a scheduling policy."""
    log: list[Event] | None = [] if schedule_out is not None else None
    try:
        jobs = load(trace, gpus)
        if checkpoints:
            jobs = [dataclasses.replace(tj, job=dataclasses.replace(tj.job, checkpoints=True)) for tj in jobs]
        result = simulate(jobs, gpus, policy, max_preemptions=max_preemptions, log=log)
    except DomainError as exc:
        raise click.ClickException(exc.message) from None
    if schedule_out is not None and log is not None:
        with schedule_out as out:
            write_csv(intervals(log), out)
    if as_json:
        click.echo(json.dumps(result))
        return
    click.echo(f"{result['policy']} on {result['gpus']} GPUs")
    for key, label in _LABELS.items():
        click.echo(f"  {label:<30} {_show(key, result[key])}")
