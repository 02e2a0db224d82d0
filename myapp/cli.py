"""The `myapp` command: a FlaskGroup, as Superset and Airflow 2 have."""
from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable

import click
from flask.cli import FlaskGroup, with_appcontext

from .app import create_app
from .errors import DomainError
from .experiments.cli import experiment_group
from .host import platform_user
from .pipelines.cli import login_command, model_group, pipeline_group, run_group, service_group
from .rendering.cli import render_command
from .scheduler.cli import simulate_command


@click.group(cls=FlaskGroup, create_app=create_app, add_default_commands=False, add_version_option=False)
def main() -> None:
    """The ML platform: web app, workers and tools."""


main.add_command(render_command)
main.add_command(pipeline_group)
main.add_command(experiment_group)
# Against a remote platform after `myapp login URL` (myapp/client.py), in-process otherwise.
for _command in (login_command, model_group, service_group):
    main.add_command(_command)
main.add_command(simulate_command)


@main.group()
def db() -> None:
    """Database schema (Alembic)."""


@db.command("upgrade")
@click.argument("revision", default="head")
@with_appcontext
def db_upgrade(revision: str) -> None:
    """Migrate the database to REVISION (default: the newest)."""
    from .models.migrate import upgrade

    upgrade(revision)
    click.echo(f"database at {revision}")


@db.command("revision")
@click.option("-m", "--message", required=True)
@with_appcontext
def db_revision(message: str) -> None:
    """Autogenerate a migration from the models."""
    from .models.migrate import revision

    revision(message)


@main.command()
@with_appcontext
def init() -> None:
    """Migrate, sync roles and permissions, create the first admin, the catalog, the default notebook
    environments and the demo project."""
    from . import setup_data
    from .models import LOCAL_CLUSTER
    from .models.migrate import upgrade
    from .rendering.catalog import load_catalog

    upgrade()
    try:
        username, password = setup_data.ensure_admin()  # first: FAB's role sync then finds a user
    except DomainError as exc:
        raise click.ClickException(f"MYAPP_ADMIN_PASSWORD: {exc.message}") from None
    setup_data.sync_roles()
    count = setup_data.sync_catalog(load_catalog())
    machine = setup_data.ensure_local_cluster()
    click.echo(f"this machine: cluster {LOCAL_CLUSTER!r}, resource group {machine.name!r} of "
               f"{machine.cpu_millicores / 1000:g} CPUs, {machine.memory_bytes / 2**30:.1f} GiB, {machine.gpus} GPUs")
    demo = setup_data.ensure_demo_project(username)
    setup_data.retire_shared_token(demo)
    setup_data.ensure_demo_experiment(setup_data.ensure_demo_pipeline(demo))
    defaults = setup_data.ensure_default_environments()
    click.echo(f"catalog: {count} job templates; example project: demo, pipeline: digits, experiment: digits-search; "
               f"notebook environments: {', '.join(defaults)}")
    if password:
        click.secho(f"Created admin user {username!r} with password: {password}", fg="yellow", bold=True)
        click.echo("  (shown once; set MYAPP_ADMIN_PASSWORD before `myapp init` to choose it)")


@main.command("create-user")
@click.argument("username")
@click.option("--password", prompt=True, hide_input=True, confirmation_prompt=True)
@click.option("--admin", is_flag=True, help="Give the Admin role.")
@with_appcontext
def create_user(username: str, password: str, admin: bool) -> None:
    """Add a user (platform users join projects by invitation of an owner)."""
    from .setup_data import create_user as add

    try:
        add(username, password, admin=admin)
    except DomainError as exc:
        raise click.ClickException(exc.message) from None
    click.echo(f"user {username} created")


@main.command()
@with_appcontext
def openapi() -> None:
    """Print the API's OpenAPI spec (JSON, sorted keys) without a server; the UI's types come from it."""
    from flask import current_app

    from .api.openapi_dump import build_spec, dumps

    click.echo(dumps(build_spec(current_app)), nl=False)


# Task processes per worker (Celery's prefork pool), for `myapp worker` and `myapp run`; benchmarks/controller.py
# measures a worker of this many tasks at once.
WORKER_CONCURRENCY = 2


def _celery_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "celery", "-A", "myapp.worker:celery", *args]


@main.command()
@click.option("--concurrency", default=WORKER_CONCURRENCY, show_default=True)
def worker(concurrency: int) -> None:
    """Run a Celery worker."""
    os.execv(sys.executable, _celery_cmd("worker", "-l", "info", "--concurrency", str(concurrency)))


@main.command()
def beat() -> None:
    """Run the Celery beat scheduler (exactly one per platform)."""
    os.execv(sys.executable, _celery_cmd("beat", "-l", "info"))


def _die_with_parent() -> None:
    """Linux: a child gets SIGTERM if `myapp run` itself is killed, so nothing is orphaned."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def _wait_ready(url: str, procs: list[subprocess.Popen], stopping: Callable[[], bool]) -> bool:
    """True once the web answers `url`; False if a process exits or a stop is asked first. No deadline:
    on a loaded machine the first answer may take minutes, and the URL is the line a person waits for."""
    while not stopping():
        if any(p.poll() is not None for p in procs):
            return False
        try:
            with urllib.request.urlopen(url, timeout=10) as resp:
                if resp.status == 200:
                    return True
        except OSError:
            time.sleep(0.3)
    return False


def _stop_all(procs: list[subprocess.Popen], grace: float = 15) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    deadline = time.monotonic() + grace
    for proc in procs:
        try:
            proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _say_job_isolation() -> None:
    """Say at start whether local jobs run sealed off from the platform; where they cannot, the
    local backend refuses them (unless the admin opted out), so say how to fix it."""
    from .backends.local.sandbox import NONE, UNAVAILABLE, detect

    isolation = detect()
    if isolation.mode == UNAVAILABLE:
        click.secho(f"Local jobs will be refused: {isolation.reason}.", fg="red", bold=True, err=True)
    elif isolation.mode == NONE:
        click.secho(f"WARNING: {isolation.reason}.", fg="red", bold=True, err=True)
    else:
        click.echo(f"{isolation.reason[0].upper()}{isolation.reason[1:]}.")


def _platform_user() -> platform_user.PlatformUser | None:
    """Started as root: web, worker, beat and the notebook proxy run as the platform user, with MYAPP_HOME
    theirs; said in one line. None: not root, the admin keeps root, or this kernel cannot (said, in red)."""
    from .config import instance_path

    try:
        platform = platform_user.prepare(instance_path())
    except (platform_user.PlatformUserError, OSError) as exc:
        click.secho(f"Web, worker and beat run as root: {exc}.", fg="red", bold=True, err=True)
        return None
    if platform is None:
        return None
    tried = subprocess.run(platform.command(["true"], []), capture_output=True, text=True, timeout=60)
    if tried.returncode != 0:
        why = (tried.stderr.strip().splitlines() or [f"exit code {tried.returncode}"])[-1]
        click.secho(f"Web, worker and beat run as root: no user namespace for {platform.name} here ({why}); "
                    f"{platform_user.USER_VAR}=root says that is meant.", fg="red", bold=True, err=True)
        return None
    click.echo(f"Web, worker and beat run as {platform.name} (uid {platform.uid}), not root: in a user namespace "
               "holding only their own and the projects' uids.")
    return platform


@main.group(invoke_without_command=True)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8080, show_default=True)
@click.option("--web-workers", default=2, show_default=True)
@click.option("--web-threads", default=128, show_default=True,
              help="Threads per web worker; each open event stream holds one (an eighth stay for other requests).")
@click.option("--notebook-port", default=None, type=int,
              help="The notebook proxy's port (default: --port + 1; MYAPP_NOTEBOOK_URL says where users reach it).")
@click.pass_context
def run(ctx: click.Context, host: str, port: int, web_workers: int, web_threads: int,
        notebook_port: int | None) -> None:
    """The whole platform in one command: web, Celery worker and beat. Ctrl-C stops all.

    `myapp run list|cancel|rerun` are about pipeline runs instead (myapp/pipelines/cli.py)."""
    if ctx.invoked_subcommand:
        return
    os.umask(0o077)  # what web, worker and beat create in MYAPP_HOME is the platform's alone
    _say_job_isolation()
    # Where jobs that call the platform reach it: the address it actually listens on, whatever the
    # public MYAPP_BASE_URL says (myapp/backends/registry.py passes it to local jobs).
    local_host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    env = dict(os.environ, MYAPP_BASE_URL=os.environ.get("MYAPP_BASE_URL", f"http://{host}:{port}"),
               MYAPP_API_URL=f"http://{local_host}:{port}", MYAPP_WEB_THREADS=str(web_threads))
    # The notebook proxy (myapp/notebooks/proxy.py) beside the web app; it proves itself to the web's
    # authz check with a key made fresh at every start. Notebooks, like jobs, outlive a stop.
    notebook_port = notebook_port or port + 1
    log_level = os.environ.get("MYAPP_LOG_LEVEL", "warning")
    env.setdefault("MYAPP_NOTEBOOK_URL", f"http://{host}:{notebook_port}")
    env["MYAPP_NOTEBOOK_PROXY_KEY"] = secrets.token_urlsafe(32)
    commands = {
        # No banners, and what goes wrong rather than every task or worker boot (MYAPP_LOG_LEVEL=info shows
        # them): the console's first lines stay the platform's own, its URL among them. Requests still log.
        "web": [sys.executable, "-m", "gunicorn", "-c", "python:myapp.web.gunicorn_conf", "--bind", f"{host}:{port}",
                "--workers", str(web_workers), "--log-level", log_level, "myapp.wsgi:app"],
        "worker": _celery_cmd("--quiet", "worker", "-l", log_level, "--concurrency", str(WORKER_CONCURRENCY)),
        "beat": _celery_cmd("--quiet", "beat", "-l", log_level),
        "notebook proxy": [sys.executable, "-m", "myapp.notebooks.proxy", "--web", f"http://{local_host}:{port}",
                           "--host", host, "--port", str(notebook_port)],
    }
    platform = _platform_user()
    if platform is not None:  # each as the platform user, in its own user namespace (myapp/host/launch.py)
        reach = platform_user.reach(platform.home)
        commands = {name: platform.command(cmd, reach) for name, cmd in commands.items()}
        env["MYAPP_HOME"] = str(platform.home)  # the folder handed over, whatever folder they start in
    procs: list[subprocess.Popen] = []
    stopping = False

    def _on_signal(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGTERM, _on_signal)
    try:
        for cmd in commands.values():
            # Own process groups: the terminal's Ctrl-C reaches us once and we stop children in order.
            procs.append(subprocess.Popen(cmd, env=env, start_new_session=True, preexec_fn=_die_with_parent))
        if _wait_ready(f"http://{host}:{port}/health", procs, lambda: stopping):
            click.secho(f"\nThe platform is running at {env['MYAPP_BASE_URL']}/", fg="green", bold=True)
            click.echo("Log in as the admin user printed by `myapp init`. Ctrl-C stops everything.\n")
        while not stopping and all(p.poll() is None for p in procs):
            time.sleep(0.5)
        failed = [name for name, p in zip(commands, procs, strict=True) if p.poll() not in (None, 0)]
    finally:
        _stop_all(procs)
    if failed and not stopping:
        raise click.ClickException(f"stopped because {', '.join(failed)} exited")
    click.echo("stopped web, worker and beat")


if __name__ == "__main__":
    main()


for _name, _command in run_group.commands.items():  # `myapp run list|cancel|rerun`
    run.add_command(_command, _name)
