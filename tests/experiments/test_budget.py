"""The budget, driven in-process on the fake backend (fast): failed trials beyond max_failed_trials fail the
experiment saying why; the time limit cancels every running trial's job; a cancel does the same."""
from __future__ import annotations

import sqlalchemy as sa

from tests.experiments.test_local_experiment import new_experiment
from tests.fake_backend import FakeBackend
from tests.pipelines.support import make_pipeline


def experiment_over(app, catalog, **settings) -> int:
    from myapp.extensions import db
    from myapp.models import PipelineRun

    run_id, _ = make_pipeline(app, catalog, {"train": {}}, [], parameters={"x": 0.0})
    with app.app_context():
        pipeline_id = db.session.get(PipelineRun, run_id).pipeline_id
    return new_experiment(app, pipeline_id, **settings)


def drive(app, experiment_id: int, backend: FakeBackend):
    from myapp.experiments.inprocess import drive as drive_here
    from myapp.extensions import db
    from myapp.models import Experiment, Trial
    from myapp.pipelines.controller import RunController

    with app.app_context():
        state = drive_here(experiment_id, RunController(lambda task: backend), poll=0.05, timeout=60)
        reason = db.session.get(Experiment, experiment_id).reason
        trials = db.session.execute(sa.select(Trial.state, Trial.reason).filter_by(experiment_id=experiment_id)
                                    .order_by(Trial.number)).all()
        return state.value, reason, [(s.value, r) for s, r in trials]


def test_one_failed_trial_too_many_fails_the_experiment_saying_why(app, catalog):
    experiment_id = experiment_over(app, catalog, max_trials=5, parallel_trials=1, max_failed_trials=1)
    state, reason, trials = drive(app, experiment_id, FakeBackend({"train": ["failed"]}))
    assert state == "failed" and [s for s, _ in trials] == ["failed", "failed"]
    assert reason.startswith("2 trials failed, more than max_failed_trials (1); the last, trial 1: run ")
    assert "failed tasks: train" in reason


def test_the_time_limit_cancels_every_running_trial(app, catalog):
    backend = FakeBackend({"train": ["hang"]})
    experiment_id = experiment_over(app, catalog, max_trials=4, parallel_trials=2, time_limit_seconds=1)
    state, reason, trials = drive(app, experiment_id, backend)
    assert (state, reason) == ("failed", "time limit reached (1 s) before any trial completed")
    assert trials == [("cancelled", "time limit reached (1 s)")] * 2
    assert len(backend.cancelled) == 2 and set(backend.cancelled) == set(backend.jobs)  # both jobs stopped


def test_a_cancel_stops_every_running_trial(app, catalog):
    from myapp.experiments import driver
    from myapp.extensions import db
    from myapp.models import PipelineRun
    from myapp.pipelines.controller import RunController

    backend = FakeBackend({"train": ["hang"]})
    experiment_id = experiment_over(app, catalog, max_trials=4, parallel_trials=3)
    controller = RunController(lambda task: backend)
    with app.app_context():
        started = driver.look(experiment_id, driver.Hooks()).started
        for run_id in started:
            controller.reconcile(run_id)
        assert len(backend.jobs) == 3
        runs = driver.cancel(experiment_id, "cancelled by user")
        db.session.commit()
        for run_id in runs:  # what myapp.cancel_experiment's messages do
            controller.cancel(run_id, "experiment cancelled")
        assert sorted(runs) == sorted(started) and set(backend.cancelled) == set(backend.jobs)
        assert {db.session.get(PipelineRun, r).state.value for r in runs} == {"cancelled"}
        assert driver.look(experiment_id, driver.Hooks()).state.value == "cancelled"  # nothing more is asked
