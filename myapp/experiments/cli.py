"""`myapp experiment apply FILE | run NAME [--wait] | cancel NAME | trials NAME`: experiments from the shell.

After `myapp login URL` every command talks to that platform's REST API; without a login they work
in-process on the platform's database, and `run --wait` drives the experiment here (no worker needed).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click
import sqlalchemy as sa

from ..client import Client
from ..errors import DomainError
from ..extensions import db
from ..models import Experiment, ExperimentState, Project, Trial, utcnow
from ..pipelines.cli import api_for_jobs, call_api, in_process
from . import driver, spec

FINISHED = ("succeeded", "failed", "cancelled")


@click.group("experiment")
def experiment_group() -> None:
    """Hyperparameter search over a pipeline's parameters."""


def _fail(exc: DomainError) -> None:
    db.session.rollback()
    click.secho(f"error: {exc.message}", fg="red", err=True)
    sys.exit(2)


def _remote_experiment(client: Client, name: str, project: str) -> dict[str, Any]:
    project_id = client.project(project)["id"]
    for item in client.pages("/api/v1/experiment/", project_id=project_id, name=name):
        return item
    raise click.ClickException(f"no experiment {name!r} in project {project!r}")


def _experiment(name: str, project: str) -> Experiment:
    row = db.session.scalar(sa.select(Experiment).join(Project, Project.id == Experiment.project_id)
                            .where(Experiment.name == name, Project.name == project))
    if row is None:
        raise click.ClickException(f"no experiment {name!r} in project {project!r}")
    return row


def _summary(experiment: dict[str, Any], trials: list[dict[str, Any]]) -> str:
    lines = [f"experiment {experiment['name']} {experiment['state']}"
             + (f": {experiment['reason']}" if experiment.get("reason") else "")]
    for trial in trials:
        values = ", ".join(f"{v:.6g}" for v in trial.get("values") or [])
        lines.append(f"  trial {trial['number']}\t{trial['state']}\t{trial['parameters']}\t{values}"
                     + (f"\t{trial['reason']}" if trial.get("reason") else ""))
    return "\n".join(lines)


@experiment_group.command("apply")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def apply_command(file: Path) -> None:
    """Create the experiment described in FILE (or replace the settings of one not started yet)."""
    text = file.read_text(encoding="utf-8")
    client = Client.from_saved()
    if client:
        row = call_api(lambda: client.request("POST", "/api/v1/experiment/import", {"yaml": text}))
        click.echo(f"experiment {row['name']} applied (id {row['id']})")
        return
    with in_process():
        try:
            parsed = spec.parse(text)
            from ..pipelines.spec import find_project

            pipeline = spec.find_pipeline(find_project(parsed["project"]), parsed["pipeline"])
            experiment = spec.apply(parsed, pipeline, None)
            db.session.commit()
        except DomainError as exc:
            _fail(exc)
        click.echo(f"experiment {parsed['project']}/{experiment.name} applied (id {experiment.id})")


@experiment_group.command("run")
@click.argument("name")
@click.option("--project", default="demo", show_default=True)
@click.option("--wait/--no-wait", default=False, help="Follow it until it ends (in-process: drive it here).")
@click.option("--poll", default=0.5, show_default=True, help="Seconds between looks.")
def run_command(name: str, project: str, wait: bool, poll: float) -> None:
    """Start experiment NAME; with --wait, exit 0 only when it succeeded."""
    client = Client.from_saved()
    if client:
        row = _remote_experiment(client, name, project)
        if row["state"] == "created":
            row = call_api(lambda: client.request("POST", f"/api/v1/experiment/{row['id']}/start"))
        click.echo(f"experiment {name} {row['state']}")
        path = f"/api/v1/experiment/{row['id']}"
        while wait and row["state"] not in FINISHED:
            time.sleep(max(poll, 0.2))
            row = call_api(lambda: client.request("GET", path))
        trials = list(client.pages("/api/v1/trial/", experiment_id=row["id"]))
        click.echo(_summary(row, sorted(trials, key=lambda t: t["number"])))
        sys.exit(0 if not wait or row["state"] == "succeeded" else 1)
    with in_process():
        experiment = _experiment(name, project)
        if experiment.state == ExperimentState.CREATED:
            driver.start(experiment, utcnow())
            db.session.commit()
        click.echo(f"experiment {name} {experiment.state.value}")
        if not wait:
            return
        state = _drive_here(experiment.id, poll)
        experiment = db.session.get(Experiment, experiment.id)
        trials = db.session.scalars(sa.select(Trial).filter_by(experiment_id=experiment.id).order_by(Trial.number))
        click.echo(_summary({"name": name, "state": state.value if state else "missing", "reason": experiment.reason},
                            [{"number": t.number, "state": t.state.value, "parameters": t.parameters,
                              "values": t.values, "reason": t.reason} for t in trials]))
        sys.exit(0 if state == ExperimentState.SUCCEEDED else 1)


def _drive_here(experiment_id: int, poll: float) -> ExperimentState | None:
    from ..backends.registry import backend_for, log_archive
    from ..pipelines.controller import RunController
    from .inprocess import drive

    def said(outcome: driver.Outcome) -> None:
        for run_id in outcome.started:
            click.echo(f"trial run {run_id} started")

    with api_for_jobs():
        return drive(experiment_id, RunController(backend_for, archive=log_archive()), poll, said)


@experiment_group.command("cancel")
@click.argument("name")
@click.option("--project", default="demo", show_default=True)
def cancel_command(name: str, project: str) -> None:
    """Cancel experiment NAME: every running trial is stopped."""
    client = Client.from_saved()
    if client:
        row = _remote_experiment(client, name, project)
        click.echo(call_api(lambda: client.request("POST", f"/api/v1/experiment/{row['id']}/cancel"))["message"])
        return
    from ..backends.registry import backend_for
    from ..pipelines.controller import RunController

    with in_process():
        runs = driver.cancel(_experiment(name, project).id, "cancelled by user")
        db.session.commit()
        controller = RunController(backend_for)
        for run_id in runs:
            controller.cancel(run_id, f"experiment {name} cancelled")
        click.echo(f"experiment {name} cancelled ({len(runs)} running trials stopped)")
