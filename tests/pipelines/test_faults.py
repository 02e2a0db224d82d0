"""Faults during a run, with real worker processes: a Celery worker killed with SIGKILL mid-run, the
Redis broker restarted mid-run, and a worker killed at the one moment that matters, right after the
backend accepted a job and before the controller's commit (local backend and the Kubernetes double).
Each run must still end in the right state with every task attempt run exactly once."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.pipelines.crash_worker import Rerunning, make_backend, reconcile
from tests.pipelines.support import make_pipeline
from tests.support import free_port, unique, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.backends]  # real Celery worker processes, redis-server and local jobs

SLEEPY = "python -c 'import time; time.sleep(1.5)'"


class Redis:
    """A private redis-server on its own port, so restarting it disturbs nothing else."""

    def __init__(self, workdir: Path):
        self.port, self.dir, self.proc = free_port(), workdir, None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        self.proc = subprocess.Popen([shutil.which("redis-server"), "--port", str(self.port), "--bind", "127.0.0.1",
                                      "--save", "", "--appendonly", "no", "--dir", str(self.dir)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_until(self.answers, timeout=5, what=f"redis-server on port {self.port} to answer")

    def answers(self) -> bool:
        import redis

        try:
            return redis.Redis.from_url(self.url).ping()
        except redis.ConnectionError:
            return False

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def worker(app, broker_env: dict[str, str], log: Path) -> subprocess.Popen:
    """A worker on the app's database (the pass's) and on the broker under test, not the app's own."""
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "MYAPP_TEST_DATABASE")}
    env |= {"MYAPP_HOME": app.config["INSTANCE_PATH"], **broker_env}
    return subprocess.Popen([sys.executable, "-m", "celery", "-A", "myapp.worker:celery", "worker", "--pool", "solo",
                             "-l", "warning"], env=env, stdout=log.open("a"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def attempts(app, run_id):
    from myapp.extensions import db
    from myapp.models import PipelineRun, Task, TaskRun

    with app.app_context():
        state = db.session.get(PipelineRun, run_id).state.value
        rows = db.session.execute(sa.select(Task.name, TaskRun.attempt, TaskRun.state, TaskRun.backend_ref)
                                  .join(Task, Task.id == TaskRun.task_id)
                                  .where(TaskRun.pipeline_run_id == run_id)).all()
        db.session.commit()
    return state, rows


def drive(app, celery, run_id, until, timeout=120):
    """Send reconciles as beat's tick would (every 0.3 s), until `until(state, rows)` or the run ends."""

    def reconciled():
        try:
            celery.send_task("myapp.reconcile_run", args=[run_id])
        except Exception:  # the broker may be down on purpose; beat would retry too
            pass
        state, rows = attempts(app, run_id)
        return (state, rows) if until(state, rows) or state in ("succeeded", "failed", "cancelled") else None

    return wait_until(reconciled, timeout=timeout, interval=0.3,
                      what=lambda: f"run {run_id} to move on; it is stuck at {attempts(app, run_id)}")


def check_exactly_once(app, rows, tasks: int) -> None:
    from myapp.backends.registry import local_workdir

    assert sorted(name for name, *_ in rows) == sorted(f"t{i}" for i in range(tasks))
    assert all(attempt == 1 and state.value == "succeeded" for _, attempt, state, _ in rows), rows
    with app.app_context():
        archived = [p for p in (local_workdir().parent / "logs").glob("*/*") if p.is_dir()]  # a folder per attempt
    job_names = {ref["job_name"] for *_, ref in rows}
    assert len(job_names) == tasks  # one backend job per attempt, archived once each
    assert {p.name for p in archived} >= job_names


@pytest.mark.parametrize("broker", ["embedded", "redis"])
def test_worker_killed_mid_run(app, catalog, broker, tmp_path):
    from myapp.celery_app import make_celery
    from myapp.config import celery_settings

    redis_server = None
    if broker == "redis":
        redis_server = Redis(tmp_path)
        redis_server.start()
    broker_env = {"REDIS_URL": redis_server.url} if redis_server else {}
    celery = make_celery(app, celery_settings(Path(app.config["INSTANCE_PATH"]),
                                              redis_server.url if redis_server else None), default=False)
    tasks = {f"t{i}": {"args": {"command": SLEEPY}} for i in range(4)}
    run_id, _ = make_pipeline(app, catalog, tasks, [(f"t{i}", f"t{i + 1}") for i in range(3)])
    first = worker(app, broker_env, tmp_path / "worker.log")
    try:
        drive(app, celery, run_id, until=lambda s, rows: any(st.value == "running" for _, _, st, _ in rows))
        os.killpg(first.pid, signal.SIGKILL)  # mid-run, maybe mid-reconcile
        first.wait()
        second = worker(app, broker_env, tmp_path / "worker.log")
        try:
            state, rows = drive(app, celery, run_id, until=lambda s, r: False)
        finally:
            second.terminate()
            second.wait(30)
        assert state == "succeeded", (rows, (tmp_path / "worker.log").read_text()[-2000:])
        check_exactly_once(app, rows, 4)
    finally:
        if first.poll() is None:
            first.kill()
        if redis_server:
            redis_server.stop()


def test_redis_restarted_mid_run(app, catalog, tmp_path):
    from myapp.celery_app import make_celery
    from myapp.config import celery_settings

    redis_server = Redis(tmp_path)
    redis_server.start()
    celery = make_celery(app, celery_settings(Path(app.config["INSTANCE_PATH"]), redis_server.url), default=False)
    tasks = {f"t{i}": {"args": {"command": SLEEPY}} for i in range(4)}
    run_id, _ = make_pipeline(app, catalog, tasks, [(f"t{i}", f"t{i + 1}") for i in range(3)])
    proc = worker(app, {"REDIS_URL": redis_server.url}, tmp_path / "worker.log")
    try:
        drive(app, celery, run_id, until=lambda s, rows: any(st.value == "running" for _, _, st, _ in rows))
        redis_server.stop()  # everything queued in Redis is lost with it (no persistence)
        log = tmp_path / "worker.log"
        wait_until(lambda: "Connection to broker lost" in log.read_text(), timeout=30,
                   what=lambda: f"the worker to lose its broker: {log.read_text()[-2000:]}")
        redis_server.start()
        state, rows = drive(app, celery, run_id, until=lambda s, r: False)
        assert state == "succeeded", (rows, (tmp_path / "worker.log").read_text()[-2000:])
        check_exactly_once(app, rows, 4)
    finally:
        proc.terminate()
        proc.wait(30)
        redis_server.stop()


# ---- a worker killed between the backend's submit and the database commit -------------------------------
ROOT = Path(__file__).resolve().parents[2]


def ran_once(executions: int, rows) -> None:
    """The task ran exactly once: one attempt, succeeded, and one execution of its job in the backend."""
    assert [(name, attempt, state.value) for name, attempt, state, _ in rows] == [("t0", 1, "succeeded")], rows
    assert executions == 1, f"the job ran {executions} times"


def local_executions(app, namespace: str) -> int:
    """Lines the job appended (one per execution), once every job folder of the project has run."""
    from myapp.backends.registry import local_workdir

    with app.app_context():
        jobs, log = local_workdir() / namespace, local_workdir() / "data" / namespace / "executions"

    def settled():
        lines = len(log.read_text().splitlines()) if log.exists() else 0
        return lines if lines >= len([p for p in jobs.iterdir() if p.is_dir()]) else None

    return wait_until(settled, timeout=60, what=lambda: f"the jobs in {jobs} to run")


@pytest.mark.parametrize("kind", ["local", "kubernetes"])
@pytest.mark.parametrize("adopting", [True, False], ids=["adopting", "rerunning"])
def test_worker_killed_between_submit_and_commit(app, catalog, double, kind, adopting):
    """With a backend that adopts, the new worker finds the job the dead one submitted: one execution.
    With one that runs a submission again (Rerunning), the same check fails: the test catches it."""
    from myapp.backends.registry import local_workdir
    from myapp.extensions import db
    from myapp.models import Project

    with app.app_context():
        project = Project(name=unique("p"), namespace=unique("ns"))
        db.session.add(project)
        db.session.commit()
        project_id, namespace = project.id, project.namespace
        log = local_workdir() / "data" / namespace / "executions"
    run_id, _ = make_pipeline(app, catalog, {"t0": {"args": {"command": f"echo ran >> {log}"}}}, [],
                              project_id=project_id)
    argv = [sys.executable, "-m", "tests.pipelines.crash_worker", str(run_id), kind, "--double", double.url, "--crash"]
    crashed = subprocess.run(argv + ([] if adopting else ["--rerun"]), cwd=ROOT, capture_output=True, text=True,
                             timeout=120)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr[-3000:]
    state, rows = attempts(app, run_id)  # the backend has the job; the database never heard of it
    assert (state, [(a, s.value, ref) for _, a, s, ref in rows]) == ("running", [(1, "queued", None)])

    with app.app_context():
        backend = make_backend(kind, double.url)  # a new worker
    backend = backend if adopting else Rerunning(backend)

    def finished():
        with app.app_context():
            if kind == "kubernetes":  # the double's Jobs complete when told
                for job in double.list("batch/v1", "Job", namespace):
                    double.set_status("batch/v1", "Job", namespace, job["metadata"]["name"],
                                      {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]})
            return reconcile(run_id, backend) in ("succeeded", "failed", "cancelled")

    wait_until(finished, timeout=60, interval=0.2, what=lambda: f"run {run_id} to finish: {attempts(app, run_id)}")
    executions = (local_executions(app, namespace) if kind == "local"
                  else len(double.list("batch/v1", "Job", namespace)))
    state, rows = attempts(app, run_id)
    assert state == "succeeded", rows
    if adopting:
        ran_once(executions, rows)
    else:
        with pytest.raises(AssertionError, match="ran 2 times"):
            ran_once(executions, rows)

