"""An experiment survives its worker: a real Celery worker is killed (SIGKILL) while trials run and a new
one takes over; every trial completes, none is lost or run twice (one run per trial number, one attempt and
one backend job per run)."""
from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.experiments.test_local_experiment import new_experiment
from tests.pipelines.support import make_pipeline
from tests.pipelines.test_faults import worker
from tests.support import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.backends]  # real Celery worker processes and local jobs

TRIAL = """
import json, os, time
time.sleep(1)
x = float("{{ params.x }}")
with open(os.path.join(os.environ["MYAPP_OUTPUT_DIR"], "metrics.jsonl"), "w") as fh:
    fh.write(json.dumps({"step": 0, "name": "loss", "value": (x - 1) ** 2}) + "\\n")
"""


def trial_rows(app, experiment_id: int):
    from myapp.extensions import db
    from myapp.models import Experiment, Trial

    with app.app_context():
        state = db.session.get(Experiment, experiment_id).state.value
        rows = db.session.execute(sa.select(Trial.number, Trial.state, Trial.pipeline_run_id)
                                  .where(Trial.experiment_id == experiment_id).order_by(Trial.number)).all()
        db.session.commit()
    return state, [(n, s.value, r) for n, s, r in rows]


def drive(app, celery, experiment_id: int, until, timeout: float = 180):
    """Ask for looks and reconciles as beat would (every 0.3 s), until `until(state, rows)` or the end."""

    def moved():
        state, rows = trial_rows(app, experiment_id)
        celery.send_task("myapp.look_experiment", args=[experiment_id, False])
        for _, trial_state, run_id in rows:
            if trial_state == "running":
                celery.send_task("myapp.reconcile_run", args=[run_id])
        return (state, rows) if until(state, rows) or state in ("succeeded", "failed", "cancelled") else None

    return wait_until(moved, timeout=timeout, interval=0.3,
                      what=lambda: f"experiment {experiment_id} to move on: {trial_rows(app, experiment_id)}")


def test_worker_killed_mid_experiment(app, catalog, tmp_path: Path):
    from myapp.celery_app import make_celery
    from myapp.config import celery_settings
    from myapp.extensions import db
    from myapp.models import PipelineRun, TaskRun

    celery = make_celery(app, celery_settings(Path(app.config["INSTANCE_PATH"]), None), default=False)
    run_id, _ = make_pipeline(app, catalog, {"train": {"args": {"script": TRIAL}}}, [], parameters={"x": 0.0})
    with app.app_context():
        pipeline_id = db.session.get(PipelineRun, run_id).pipeline_id
    experiment_id = new_experiment(app, pipeline_id, algorithm="random", seed=3, max_trials=6, parallel_trials=2)
    first = worker(app, {}, tmp_path / "worker.log")
    try:
        drive(app, celery, experiment_id, until=lambda state, rows: any(s == "complete" for _, s, _ in rows)
              and any(s == "running" for _, s, _ in rows))
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # mid-experiment, maybe mid-look
        first.wait()
    second = worker(app, {}, tmp_path / "worker.log")
    try:
        state, rows = drive(app, celery, experiment_id, until=lambda state, rows: False)
    finally:
        second.terminate()
        second.wait(30)
    log = (tmp_path / "worker.log").read_text()[-3000:]
    assert state == "succeeded", (rows, log)
    assert [(n, s) for n, s, _ in rows] == [(n, "complete") for n in range(6)], log
    with app.app_context():
        runs = db.session.scalars(sa.select(PipelineRun.id).where(PipelineRun.experiment_id == experiment_id)).all()
        attempts = db.session.execute(sa.select(TaskRun.attempt, TaskRun.backend_ref).where(
            TaskRun.pipeline_run_id.in_(runs))).all()
    assert sorted(runs) == sorted(r for _, _, r in rows)  # one run per trial, none made twice
    assert [a for a, _ in attempts] == [1] * 6  # each trial's task ran once
    assert len({ref["job_name"] for _, ref in attempts}) == 6
