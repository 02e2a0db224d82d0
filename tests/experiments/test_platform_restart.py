"""An experiment survives a restart of the web and of beat: real processes (gunicorn, Celery beat, a Celery
worker) on the test's database. The experiment is created through the web; web and beat are killed
(SIGKILL) while trials run, the trials' jobs end while nothing watches them, and both start again: every
trial completes once (one run per trial number, one attempt and one job per run), and the sampler went on
from the stored trials (with a seed, the parameters Optuna alone asks, in order)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest
import requests
import sqlalchemy as sa

from tests.experiments.test_worker_restart import TRIAL, trial_rows
from tests.pipelines.support import make_pipeline
from tests.support import free_port, healthy, unique, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.backends]  # real web, beat and worker processes and local jobs

SPACE = [{"name": "x", "type": "float", "low": -2.0, "high": 3.0}]
TRIALS, SEED = 4, 5


def start(app, what: str, log: Path, port: int = 0) -> subprocess.Popen:
    """The platform's `what` on the app's database and instance folder (its embedded broker), as `myapp run`
    starts it, in a process group of its own."""
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "MYAPP_TEST_DATABASE")}
    env |= {"MYAPP_HOME": app.config["INSTANCE_PATH"], "MYAPP_API_URL": f"http://127.0.0.1:{port}"}
    celery = [sys.executable, "-m", "celery", "-A", "myapp.worker:celery"]
    command = {"worker": [*celery, "worker", "--pool", "solo", "-l", "warning"],
               "beat": [*celery, "beat", "-l", "warning"],
               "web": [sys.executable, "-m", "gunicorn", "-c", "python:myapp.web.gunicorn_conf", "--bind",
                       f"127.0.0.1:{port}", "--workers", "1", "myapp.wsgi:app"]}[what]
    return subprocess.Popen(command, env=env, stdout=log.open("a"), stderr=subprocess.STDOUT, start_new_session=True)


def kill(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGKILL)  # no shutdown of its own: as a crash or an OOM kill
    proc.wait()


def jobs_alive(job_names: set[str]) -> set[str]:
    """The local jobs among job_names whose supervisor still runs."""
    alive = set()
    for proc in psutil.process_iter(["cmdline"]):
        argv = proc.info["cmdline"] or []
        if "myapp.backends.local.supervisor" in argv and Path(argv[-1]).name in job_names:
            alive.add(Path(argv[-1]).name)
    return alive


def optuna_alone(count: int) -> list[float]:
    """What one uninterrupted Optuna study with the same sampler and seed asks, in order."""
    import optuna

    from myapp.experiments.study import distributions

    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=SEED))
    asked = []
    for _ in range(count):
        trial = study.ask(distributions(SPACE))
        asked.append(trial.params["x"])
        study.tell(trial, 0.0)
    return asked


def test_an_experiment_survives_a_restart_of_web_and_beat(app, catalog, tmp_path):
    from myapp.extensions import db
    from myapp.models import PipelineRun, ProjectMember, ProjectRole, TaskRun, Trial
    from myapp.setup_data import create_user

    run_id, _ = make_pipeline(app, catalog, {"train": {"args": {"script": TRIAL}}}, [], parameters={"x": 0.0})
    name, password = unique("user"), unique("pw") + "-Long-enough"
    with app.app_context():
        first = db.session.get(PipelineRun, run_id)
        pipeline_id = first.pipeline_id
        user_id = create_user(name, password).id
        db.session.add(ProjectMember(project_id=first.project_id, user_id=user_id, role=ProjectRole.DEVELOPER))
        db.session.commit()
    log, port = tmp_path / "platform.log", free_port()
    base = f"http://127.0.0.1:{port}"
    processes = {what: start(app, what, log, port) for what in ("worker", "beat", "web")}
    try:
        wait_until(lambda: healthy(base), timeout=120, interval=0.5, what="the web to answer")
        token = requests.post(f"{base}/api/v1/security/login", timeout=10, json={
            "username": name, "password": password, "provider": "db"}).json()["access_token"]
        auth = {"Authorization": f"Bearer {token}"}
        answer = requests.post(f"{base}/api/v1/experiment/", headers=auth, timeout=30, json={
            "pipeline_id": pipeline_id, "name": unique("e"), "search_space": SPACE, "algorithm": "random",
            "seed": SEED, "objectives": [{"metric": "loss", "direction": "minimize"}], "max_trials": TRIALS,
            "parallel_trials": 2})
        assert answer.status_code == 201, answer.text
        experiment_id = answer.json()["id"]

        # Once a trial has completed and others run, web and beat die; the running trials' jobs end meanwhile.
        wait_until(lambda: (found := trial_rows(app, experiment_id)[1]) and any(s == "complete" for _, s, _ in found)
                   and any(s == "running" for _, s, _ in found),
                   timeout=120, interval=0.2,
                   what=lambda: f"a trial complete and one running: {log.read_text()[-2000:]}")
        kill(processes.pop("web"))
        kill(processes.pop("beat"))
        running = [r for _, s, r in trial_rows(app, experiment_id)[1] if s == "running"]
        with app.app_context():
            jobs = {ref["job_name"] for ref in db.session.scalars(sa.select(TaskRun.backend_ref).where(
                TaskRun.pipeline_run_id.in_(running), TaskRun.backend_ref.isnot(None)))}
            db.session.commit()
        wait_until(lambda: not jobs_alive(jobs), timeout=60, what=lambda: f"jobs {jobs_alive(jobs)} to end")

        processes |= {what: start(app, what, log, port) for what in ("beat", "web")}
        wait_until(lambda: healthy(base), timeout=120, interval=0.5, what="the web to answer again")

        def ended() -> dict | None:
            shown = requests.get(f"{base}/api/v1/experiment/{experiment_id}", headers=auth, timeout=10).json()
            return shown if shown["state"] != "running" else None

        shown = wait_until(ended, timeout=120, interval=0.3, what=lambda: f"the experiment to end: "
                           f"{trial_rows(app, experiment_id)} {log.read_text()[-3000:]}")
        trials = requests.get(f"{base}/api/v1/trial/", headers=auth, timeout=10,
                              params={"experiment_id": experiment_id, "page_size": 100}).json()["items"]
    finally:
        for proc in processes.values():
            kill(proc)
    assert shown["state"] == "succeeded", (shown, log.read_text()[-3000:])
    assert sorted((t["number"], t["state"]) for t in trials) == [(n, "complete") for n in range(TRIALS)]
    with app.app_context():
        runs = db.session.scalars(sa.select(PipelineRun.id).where(PipelineRun.experiment_id == experiment_id)).all()
        attempts = db.session.execute(sa.select(TaskRun.attempt, TaskRun.backend_ref).where(
            TaskRun.pipeline_run_id.in_(runs))).all()
        asked = db.session.scalars(sa.select(Trial.parameters).filter_by(experiment_id=experiment_id)
                                   .order_by(Trial.number)).all()
    assert len(runs) == TRIALS and sorted(runs) == sorted(t["pipeline_run_id"] for t in trials)  # none made twice
    assert [a for a, _ in attempts] == [1] * TRIALS and len({ref["job_name"] for _, ref in attempts}) == TRIALS
    assert [p["x"] for p in asked] == optuna_alone(TRIALS)  # the sampler went on from the stored trials
