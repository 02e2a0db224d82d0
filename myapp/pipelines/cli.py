"""`myapp pipeline apply|export|run|logs` and `myapp run list|cancel|rerun`: pipelines as code from the shell.

After `myapp login URL` (myapp/client.py keeps URL and token in the user's config) every command
talks to that platform's REST API and needs nothing else. Without a login they work in-process on the
platform's database (as `airflow dags test` does): with no platform running, `pipeline run --wait`
drives the run itself on the embedded default. `--json` prints what the API answered.
"""
from __future__ import annotations

import functools
import json
import sys
import time
import uuid
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
import sqlalchemy as sa
from flask.cli import ScriptInfo

from ..client import Client, ClientError
from ..errors import DomainError
from ..extensions import db
from ..models import Pipeline, PipelineRun, Project, RunTrigger, TaskRun
from .macros import check_run_params


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


def _remote() -> Client | None:
    return Client.from_saved()


def _call(action: Callable[[], Any]) -> Any:
    try:
        return action()
    except ClientError as exc:
        click.secho(f"error: {exc}", fg="red", err=True)
        sys.exit(2)


def _print(value: Any, as_json: bool, text: str) -> None:
    click.echo(json.dumps(value, indent=2, default=str) if as_json else text)


@contextmanager
def _in_process():
    """The platform's app, from this machine's configuration (no login: the in-process mode)."""
    app = click.get_current_context().ensure_object(ScriptInfo).load_app()
    with app.app_context():
        yield


def _params(pairs: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{pair!r} is not k=v", param_hint="--param")
        out[key] = value
    return out


@pipeline_group.command("apply")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the API's answer as JSON.")
def apply_command(file: Path, as_json: bool) -> None:
    """Create or update the pipeline described in FILE."""
    from .spec import apply, find_project, parse

    text = file.read_text(encoding="utf-8")
    client = _remote()
    if client:
        pipeline = _call(lambda: client.apply_pipeline(text))
        _print(pipeline, as_json, f"pipeline {pipeline['name']} applied (id {pipeline['id']})")
        return
    with _in_process():
        try:
            spec = parse(text)
            project = find_project(spec["project"])
            row = apply(spec, project, None)
            db.session.commit()
        except DomainError as exc:
            db.session.rollback()
            _fail(exc)
        _print({"id": row.id, "name": row.name}, as_json,
               f"pipeline {project.name}/{row.name} applied ({len(spec['tasks'])} tasks)")


@pipeline_group.command("export")
@click.argument("name")
@click.option("--project", default="demo", show_default=True)
def export_command(name: str, project: str) -> None:
    """Print the pipeline as YAML."""
    from .spec import export

    client = _remote()
    if client:
        click.echo(_call(lambda: client.export_pipeline(client.pipeline(name, project)["id"])), nl=False)
        return
    with _in_process():
        click.echo(export(_pipeline(name, project)), nl=False)


@pipeline_group.command("run")
@click.argument("name")
@click.option("--project", default="demo", show_default=True)
@click.option("--param", "params", multiple=True, metavar="K=V", help="A run parameter ({{ params.K }}); repeatable.")
@click.option("--wait/--no-wait", default=False, help="Follow the run until it ends (in-process: drive it here).")
@click.option("--poll", default=0.5, show_default=True, help="Seconds between reconcile passes / status reads.")
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON.")
def run_command(name: str, project: str, params: tuple[str, ...], wait: bool, poll: float, as_json: bool) -> None:
    """Start a run of NAME; with --wait, exit 0 only when it succeeded."""
    values = _params(params)
    client = _remote()
    if client:
        run = _call(lambda: client.run_pipeline(client.pipeline(name, project)["id"], values))
        if not as_json:
            click.echo(f"run {run['id']} of {project}/{name} queued")
        if wait:
            run = _call(lambda: client.wait(run["id"], poll=max(poll, 0.2)))
        _print(run, as_json, f"run {run['id']} {run['state']}" if wait else "")
        if wait:
            sys.exit(0 if run["state"] == "succeeded" else 1)
        return
    with _in_process():
        pipeline = _pipeline(name, project)
        try:
            values = check_run_params(pipeline, values)
        except DomainError as exc:
            _fail(exc)
        row = PipelineRun(project_id=pipeline.project_id, pipeline_id=pipeline.id,
                          run_key=f"cli-{uuid.uuid4().hex}", trigger=RunTrigger.MANUAL, parameters=values)
        db.session.add(row)
        db.session.commit()
        click.echo(f"run {row.id} of {project}/{name} queued")
        if not wait:
            return
        state = follow(row.id, poll)
        click.echo(f"run {row.id} {state}")
        sys.exit(0 if state == "succeeded" else 1)


@pipeline_group.command("logs")
@click.argument("run_id", type=int)
@click.option("--json", "as_json", is_flag=True)
def logs_command(run_id: int, as_json: bool) -> None:
    """Print the logs of every task of run RUN_ID."""
    client = _remote()
    if client:
        out: list[dict[str, Any]] = []
        for attempt in _call(lambda: client.task_runs(run_id)):
            task_run_id: int = attempt["id"]
            lines = _call(functools.partial(client.logs, task_run_id))
            out.append({"task_run": task_run_id, "task_id": attempt["task_id"], "lines": lines})
        if as_json:
            _print(out, True, "")
            return
        for entry in out:
            for line in entry["lines"]:
                click.echo(f"[task run {entry['task_run']}/{line.get('replica')}] {line.get('line')}")
        return
    from .observation import read_lines

    with _in_process():
        for attempt in db.session.scalars(sa.select(TaskRun).filter_by(pipeline_run_id=run_id).order_by(TaskRun.id)):
            for line in read_lines(attempt):
                click.echo(f"[task run {attempt.id}/{line.replica}] {line.line}")


@click.group("run")
def run_group() -> None:
    """Runs: list, cancel, rerun."""


@run_group.command("list")
@click.option("--pipeline", "pipeline_name", default=None, help="Only this pipeline's runs.")
@click.option("--project", default="demo", show_default=True)
@click.option("--limit", default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def run_list(pipeline_name: str | None, project: str, limit: int, as_json: bool) -> None:
    """The latest runs, newest first."""
    client = _remote()
    if client:
        pipeline_id = client.pipeline(pipeline_name, project)["id"] if pipeline_name else None
        runs = _call(lambda: client.runs(pipeline_id, limit))
    else:
        with _in_process():
            query = sa.select(PipelineRun).order_by(PipelineRun.id.desc()).limit(limit)
            if pipeline_name:
                query = query.where(PipelineRun.pipeline_id == _pipeline(pipeline_name, project).id)
            runs = [{"id": r.id, "pipeline_id": r.pipeline_id, "state": r.state.value, "parameters": r.parameters,
                     "started_at": r.started_at.isoformat() if r.started_at else None}
                    for r in db.session.scalars(query)]
    _print(runs, as_json, "\n".join(f"{r['id']}\t{r['state']}\tpipeline {r['pipeline_id']}\t{r.get('parameters') or ''}"
                                    for r in runs))


@run_group.command("cancel")
@click.argument("run_id", type=int)
def run_cancel(run_id: int) -> None:
    """Cancel a run (its running jobs are stopped)."""
    client = _remote()
    if client:
        click.echo(_call(lambda: client.cancel_run(run_id)))
        return
    from ..backends.registry import backend_for, log_archive
    from .controller import RunController

    with _in_process():  # here and now, as `pipeline run --wait` drives runs: no worker needed
        if db.session.get(PipelineRun, run_id) is None:
            raise click.ClickException(f"no run {run_id}")
        RunController(backend_for, archive=log_archive()).cancel(run_id)
        click.echo(f"cancelled run {run_id}")


@run_group.command("rerun")
@click.argument("run_id", type=int)
@click.option("--json", "as_json", is_flag=True)
def run_rerun(run_id: int, as_json: bool) -> None:
    """A new run keeping RUN_ID's succeeded tasks (needs `myapp login`)."""
    client = _need_login()
    run = _call(lambda: client.rerun(run_id))
    _print(run, as_json, f"run {run['id']} queued (rerun of {run_id})")


def _need_login() -> Client:
    client = _remote()
    if client is None:
        raise click.ClickException("this command uses the REST API: first `myapp login URL`")
    return client


@click.group("model")
def model_group() -> None:
    """Model versions in the registry."""


@model_group.command("list")
@click.option("--json", "as_json", is_flag=True)
def model_list(as_json: bool) -> None:
    """Every model version you can see (needs `myapp login`)."""
    client = _need_login()
    models = _call(client.models)
    _print(models, as_json, "\n".join(f"{m['id']}\t{m.get('name')}\tv{m.get('version')}\t{m.get('uri', '')}"
                                      for m in models))


@model_group.command("register")
@click.argument("name")
@click.argument("uri")
@click.option("--project", default="demo", show_default=True)
@click.option("--framework", type=click.Choice(["sklearn", "pytorch", "torchscript", "onnx", "tensorflow", "xgboost",
                                                "custom"]), default="sklearn", show_default=True)
@click.option("--metrics", default="{}", help='JSON object, e.g. {"accuracy": 0.97}.')
@click.option("--signature", default="{}", help='JSON, e.g. {"shape": [null, 64], "dtype": "float32"}.')
@click.option("--description", default="")
@click.option("--json", "as_json", is_flag=True)
def model_register(name: str, uri: str, project: str, framework: str, metrics: str, signature: str,
                   description: str, as_json: bool) -> None:
    """Register the model at URI as the next version of NAME (needs `myapp login`)."""
    try:
        values = {"metrics": json.loads(metrics), "signature": json.loads(signature)}
    except ValueError as exc:
        raise click.BadParameter(f"not JSON: {exc}") from None
    client = _need_login()
    version = _call(lambda: client.register_model(client.project(project)["id"], name, uri, framework=framework,
                                                  description=description, **values))
    _print(version, as_json, f"registered {version['name']} version {version['version']} (id {version['id']})")


@click.group("service")
def service_group() -> None:
    """Inference services."""


@service_group.command("deploy")
@click.argument("name")
@click.option("--model-version", "model_version_id", type=int, required=True, help="The model version's id.")
@click.option("--project", default="demo", show_default=True)
@click.option("--json", "as_json", is_flag=True)
def service_deploy(name: str, model_version_id: int, project: str, as_json: bool) -> None:
    """Serve a model version as NAME (needs `myapp login`)."""
    client = _need_login()
    service = _call(lambda: client.deploy_service(client.project(project)["id"], name, model_version_id))
    _print(service, as_json, f"service {service['name']} (id {service['id']}) deploying")


@click.command("login")
@click.argument("url")
@click.option("--username", prompt=True)
@click.option("--password", prompt=True, hide_input=True)
def login_command(url: str, username: str, password: str) -> None:
    """Sign in to the platform at URL; later commands use it (URL and token kept in the user's config, 0600)."""
    from ..client import save_login

    client = _call(lambda: Client.login(url, username, password))
    path = save_login(client.url, client.token)
    click.echo(f"logged in to {client.url} as {username} (saved in {path})")


@contextmanager
def _api_for_jobs():
    """Jobs that call the platform (model-register) need its API: when none answers at the address jobs
    are given (MYAPP_API_URL, else MYAPP_BASE_URL), serve this process's app on a free loopback port
    while the run is driven here, and give jobs that address."""
    import os
    import threading
    import urllib.request

    from flask import current_app
    from werkzeug.serving import make_server

    from ..backends.registry import api_url

    try:
        with urllib.request.urlopen(f"{api_url().rstrip('/')}/health", timeout=2):  # the user's own platform
            yield
            return
    except OSError:
        pass
    server = make_server("127.0.0.1", 0, current_app._get_current_object(), threaded=True)  # type: ignore[attr-defined]
    previous = os.environ.get("MYAPP_API_URL")
    os.environ["MYAPP_API_URL"] = f"http://127.0.0.1:{server.server_port}"
    thread = threading.Thread(target=server.serve_forever, name="myapp-api-for-jobs", daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        thread.join(timeout=10)
        if previous is None:
            os.environ.pop("MYAPP_API_URL", None)
        else:
            os.environ["MYAPP_API_URL"] = previous


# For the other commands that work in-process the same way (myapp/experiments/cli.py).
in_process = _in_process
api_for_jobs = _api_for_jobs
call_api = _call


def follow(run_id: int, poll: float) -> str:
    """Reconcile in-process and print every attempt's aggregated log lines as they come."""
    with _api_for_jobs():
        return _follow(run_id, poll)


def _follow(run_id: int, poll: float) -> str:
    from ..backends.registry import backend_for, log_archive
    from ..models import Task
    from .controller import RunController
    from .observation import LogTail

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
