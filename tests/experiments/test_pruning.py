"""Pruning at a trial's last step, driven in-process on the fake backend (fast): a trial whose run ends right
after reporting a step the pruner would stop is marked pruned at that step, the same as when a look sees
that step while the run still runs (then its run is cancelled); a trial the pruner keeps completes."""
from __future__ import annotations

import sqlalchemy as sa

from tests.experiments.test_budget import experiment_over
from tests.fake_backend import FakeBackend
from tests.support import wait_until

MEDIAN = {"kind": "median", "startup_trials": 1, "warmup_steps": 0}


def report_and_end(app, controller, backend: FakeBackend, run_id: int, values: list[float], end: bool) -> None:
    """The trial's task reports one loss per step (the metrics API's path), then its job ends, or keeps running."""
    from myapp.extensions import db
    from myapp.models import PipelineRun, TaskRun
    from myapp.outputs import store

    with app.app_context():
        wait_until(lambda: controller.reconcile(run_id) and db.session.scalar(
            sa.select(TaskRun.id).filter_by(pipeline_run_id=run_id)), what=f"run {run_id}'s attempt")
        attempt_id = db.session.scalar(sa.select(TaskRun.id).filter_by(pipeline_run_id=run_id))
        for step, value in enumerate(values):
            store.report(store.lock(attempt_id), step, {"loss": value})
            db.session.commit()
        if end:
            job = db.session.get(TaskRun, attempt_id).backend_ref["job_name"]
            backend.jobs[job]["outcome"] = "succeeded"
            wait_until(lambda: controller.reconcile(run_id) and db.session.get(PipelineRun, run_id).is_finished,
                       what=f"run {run_id} to end")


def trials(app, experiment_id: int) -> list[tuple[str, int | None, str | None, list | None]]:
    from myapp.extensions import db
    from myapp.models import Trial

    with app.app_context():
        rows = db.session.execute(sa.select(Trial.state, Trial.pruned_step, Trial.reason, Trial.values)
                                  .filter_by(experiment_id=experiment_id).order_by(Trial.number)).all()
        db.session.commit()
        return [(s.value, p, r, v) for s, p, r, v in rows]


def test_a_trial_is_pruned_at_its_last_step_whether_or_not_a_look_saw_it_running(app, catalog):
    from myapp.experiments import driver
    from myapp.extensions import db
    from myapp.models import Experiment
    from myapp.pipelines.controller import RunController

    backend = FakeBackend({"train": ["hang"]})
    controller = RunController(lambda task: backend)
    experiment_id = experiment_over(app, catalog, max_trials=4, parallel_trials=1, early_stopping=MEDIAN,
                                    algorithm="random", seed=1)
    cancelled: list[int] = []
    hooks = driver.Hooks(cancel_runs=lambda run_ids, reason: cancelled.extend(run_ids))

    def look() -> list[int]:
        with app.app_context():
            return driver.look(experiment_id, hooks).started

    (first,) = look()
    report_and_end(app, controller, backend, first, [1.0, 0.5], end=True)
    (second,) = look()  # trial 0 completes (the pruner's startup trial) and trial 1 starts
    report_and_end(app, controller, backend, second, [3.0, 2.0], end=True)  # worse at every step
    (third,) = look()  # no look saw trial 1 running: its last step is judged as it ends
    assert trials(app, experiment_id)[:2] == [("complete", None, None, [0.5]),
                                               ("pruned", 1, "pruned at step 1", [2.0])]
    assert cancelled == []  # its run had ended: nothing to cancel
    report_and_end(app, controller, backend, third, [3.0, 2.0], end=False)
    (fourth,) = look()  # the same steps, seen while the run runs: pruned at the same step, its run cancelled
    assert trials(app, experiment_id)[2] == ("pruned", 1, "pruned at step 1", [2.0]) and cancelled == [third]
    report_and_end(app, controller, backend, fourth, [0.9, 0.4], end=True)  # better than the median: kept
    assert look() == []
    assert trials(app, experiment_id)[3] == ("complete", None, None, [0.4])
    with app.app_context():
        assert db.session.get(Experiment, experiment_id).state.value == "succeeded"
