"""`myapp pipeline apply|export|run`: pipelines as code from the shell.

These commands work in-process on the platform's database (as `airflow dags test` does): with no
platform running, `run --wait` drives the run itself on the embedded default.
"""
from __future__ import annotations

import sys
import time
import uuid
from pathlib import Path

import click
import sqlalchemy as sa
from flask.cli import with_appcontext

from ..errors import DomainError
from ..extensions import db
from ..models import Pipeline, PipelineRun, Project, RunTrigger, TaskRun


def _fail(exc: DomainError) -> None:
    click.secho(f"error: {exc.message}", fg="red", err=True)
    sys.exit(2)


def _pipeline(name: str, project: str) -> Pipeline:
    pipeline = db.session.scalar(sa.select(Pipeline).join(Project, Project.id == Pipeline.project_id)
                                 .where(Pipeline.name == name, Project.name == project))
    if pipeline is None:
        raise click.ClickException(f"no pipeline {name!r} in project {project!r}")
    return pipeline


@click.group("pipeline")
def pipeline_group() -> None:
    """Pipelines as code: apply YAML, export it, run and follow."""


@pipeline_group.command("apply")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@with_appcontext
def apply_command(file: Path) -> None:
    """Create or update the pipeline described in FILE."""
    from .spec import apply, find_project, parse

    try:
        spec = parse(file.read_text(encoding="utf-8"))
        project = find_project(spec["project"])
        pipeline = apply(spec, project, None)
        db.session.commit()
    except DomainError as exc:
        db.session.rollback()
        _fail(exc)
    click.echo(f"pipeline {project.name}/{pipeline.name} applied ({len(spec['tasks'])} tasks)")


@pipeline_group.command("export")
@click.argument("name")
@click.option("--project", default="demo", show_default=True)
@with_appcontext
def export_command(name: str, project: str) -> None:
    """Print the pipeline as YAML."""
    from .spec import export

    click.echo(export(_pipeline(name, project)), nl=False)


@pipeline_group.command("run")
@click.argument("name")
@click.option("--project", default="demo", show_default=True)
@click.option("--wait/--no-wait", default=False, help="Drive the run here and follow its logs until it ends.")
@click.option("--poll", default=0.5, show_default=True, help="Seconds between reconcile passes.")
@with_appcontext
def run_command(name: str, project: str, wait: bool, poll: float) -> None:
    """Start a run of NAME; with --wait, exit 0 only when it succeeded."""
    pipeline = _pipeline(name, project)
    run = PipelineRun(project_id=pipeline.project_id, pipeline_id=pipeline.id,
                      run_key=f"cli-{uuid.uuid4().hex}", trigger=RunTrigger.MANUAL)
    db.session.add(run)
    db.session.commit()
    click.echo(f"run {run.id} of {project}/{name} queued")
    if not wait:
        return
    state = follow(run.id, poll)
    click.echo(f"run {run.id} {state}")
    sys.exit(0 if state == "succeeded" else 1)


def follow(run_id: int, poll: float) -> str:
    """Reconcile in-process and print every attempt's aggregated log lines as they come."""
    from ..backends.registry import backend_for, log_archive
    from ..models import Task
    from ..observation import LogTail
    from .controller import RunController

    controller = RunController(backend_for, archive=log_archive())
    tails: dict[int, LogTail] = {}
    while True:
        state = controller.reconcile(run_id)
        for attempt in db.session.scalars(sa.select(TaskRun).filter_by(pipeline_run_id=run_id)):
            lines = tails.setdefault(attempt.id, LogTail()).read(attempt)
            if lines:
                task = db.session.get(Task, attempt.task_id)
                for line in lines:
                    click.echo(f"[{task.name}/{line.replica}] {line.line}")
        db.session.commit()
        if state is None or state.value in ("succeeded", "failed", "cancelled"):
            return state.value if state else "missing"
        time.sleep(poll)
