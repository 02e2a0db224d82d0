"""``myapp simulate TRACE.csv --gpus N [--policy NAME] [--json]``: replay a trace through a policy.

A plain click command (no Flask app needed); `myapp/cli.py` attaches it.
"""
from __future__ import annotations

import json

import click

from ..errors import DomainError
from .policy import DEFAULT_MAX_PREEMPTIONS, OURS, POLICIES
from .simulate import simulate
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
@click.option("--json", "as_json", is_flag=True, help="print one JSON object")
def simulate_command(trace: str, gpus: int, policy: str, max_preemptions: int, as_json: bool) -> None:
    """Replay TRACE.csv (job_id,group,submit_s,num_gpus,duration_s) through a scheduling policy."""
    try:
        result = simulate(load(trace, gpus), gpus, policy, max_preemptions=max_preemptions)
    except DomainError as exc:
        raise click.ClickException(exc.message) from None
    if as_json:
        click.echo(json.dumps(result))
        return
    click.echo(f"{result['policy']} on {result['gpus']} GPUs")
    for key, label in _LABELS.items():
        click.echo(f"  {label:<30} {_show(key, result[key])}")
