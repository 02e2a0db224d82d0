"""An experiment end to end on the local backend, driven in-process (the workers' driver looks and run
controller): each trial a real run of the pipeline with its parameters, its metrics read from what the task
wrote, its serving step left out; the budget's parallelism kept; a metric no task writes fails the
experiment naming the objective."""
from __future__ import annotations

import sqlalchemy as sa

from tests.pipelines.support import make_pipeline

TRAIN = """
import json, os
x = float("{{ params.x }}")
with open(os.path.join(os.environ["MYAPP_OUTPUT_DIR"], "metrics.jsonl"), "w") as fh:
    for step in range(3):
        fh.write(json.dumps({"step": step, "name": "loss", "value": (x - 1) ** 2 + 1 / (step + 1)}) + "\\n")
"""


def new_experiment(app, pipeline_id: int, **settings) -> int:
    from myapp.experiments.driver import start
    from myapp.extensions import db
    from myapp.models import Experiment, Pipeline, utcnow

    with app.app_context():
        pipeline = db.session.get(Pipeline, pipeline_id)
        row = Experiment(project_id=pipeline.project_id, pipeline_id=pipeline_id, name=f"e{pipeline_id}",
                         search_space=[{"name": "x", "type": "float", "low": -2.0, "high": 3.0}],
                         objectives=[{"metric": "loss", "direction": "minimize"}], **settings)
        db.session.add(row)
        start(row, utcnow())
        db.session.commit()
        return row.id


def drive(app, experiment_id: int) -> tuple[str, list[int]]:
    from myapp.backends.local import LocalBackend
    from myapp.backends.registry import local_workdir
    from myapp.experiments.inprocess import drive as drive_here
    from myapp.experiments.inprocess import running_runs
    from myapp.pipelines.controller import RunController

    with app.app_context():
        backend = LocalBackend(local_workdir(), gpus=[], restart_delay=0.05, poll_interval=0.02)
        running: list[int] = []
        state = drive_here(experiment_id, RunController(lambda task: backend), poll=0.1,
                           on_look=lambda outcome: running.append(len(running_runs(experiment_id))), timeout=120)
        return state.value, running


def test_trials_are_runs_with_their_parameters_and_metrics(app, catalog):
    from myapp.extensions import db
    from myapp.models import PipelineRun, Task, TaskRun, Trial

    run_id, _ = make_pipeline(app, catalog, {"train": {"args": {"script": TRAIN}},
                                               "serve": {"template": "serve-model", "args": {"model_name": "m"}}},
                                [("train", "serve")], parameters={"x": 0.0})
    with app.app_context():
        pipeline_id = db.session.get(PipelineRun, run_id).pipeline_id
    experiment_id = new_experiment(app, pipeline_id, algorithm="random", seed=1, max_trials=4, parallel_trials=2)
    state, running = drive(app, experiment_id)
    assert state == "succeeded"
    assert max(running) == 2  # two at once, never more
    with app.app_context():
        trials = db.session.scalars(sa.select(Trial).filter_by(experiment_id=experiment_id)
                                    .order_by(Trial.number)).all()
        assert [t.number for t in trials] == [0, 1, 2, 3] and {t.state.value for t in trials} == {"complete"}
        for trial in trials:
            run = db.session.get(PipelineRun, trial.pipeline_run_id)
            x = trial.parameters["x"]
            assert (run.experiment_id, run.trial_number, run.parameters) == (experiment_id, trial.number, {"x": x})
            assert run.state.value == "succeeded"
            assert trial.values == [(x - 1) ** 2 + 1 / 3]
            assert trial.intermediate == [[s, (x - 1) ** 2 + 1 / (s + 1)] for s in range(3)]
            ran = db.session.scalars(sa.select(Task.name).join(TaskRun).where(TaskRun.pipeline_run_id == run.id)).all()
            assert ran == ["train"]  # the serving step is left out of trials
        assert len({t.parameters["x"] for t in trials}) == 4


def test_a_metric_no_task_writes_fails_the_experiment_naming_the_objective(app, catalog):
    from myapp.extensions import db
    from myapp.models import Experiment, PipelineRun, Trial

    run_id, _ = make_pipeline(app, catalog, {"train": {"args": {"script": TRAIN}}}, [], parameters={"x": 0.0})
    with app.app_context():
        pipeline_id = db.session.get(PipelineRun, run_id).pipeline_id
    experiment_id = new_experiment(app, pipeline_id, max_trials=3, parallel_trials=1)
    with app.app_context():
        db.session.get(Experiment, experiment_id).objectives = [{"metric": "accuracy", "direction": "maximize"}]
        db.session.commit()
    assert drive(app, experiment_id)[0] == "failed"
    with app.app_context():
        experiment = db.session.get(Experiment, experiment_id)
        assert experiment.reason.startswith("objectives[0].metric: no task of trial 0")
        assert "'accuracy'" in experiment.reason
        assert db.session.scalars(sa.select(Trial.state).filter_by(experiment_id=experiment_id)).all() == ["failed"]
