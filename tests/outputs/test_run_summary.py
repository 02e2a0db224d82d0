"""A model version registered from a run records the run's parameters and the last value of each metric its
tasks reported, with each metric's curve (myapp/outputs/run_summary.py): the task that made the model wins a
name clash, then the registering task's upstream tasks, and the registration call's own values win over all."""
from __future__ import annotations

import datetime as dt

import pytest

from myapp.outputs.run_summary import MAX_POINTS, holds, summarize, thinned
from tests.support import unique
from tests.world import build_catalog, created


def reports(name: str, *values: float, first_step: int = 1) -> list[dict]:
    return [{"step": first_step + i, "name": name, "value": v} for i, v in enumerate(values)]


def test_a_later_task_wins_a_name_and_the_last_step_gives_the_value() -> None:
    weak = reports("loss", 9.0) + reports("throughput", 100.0)
    strong = [*reports("loss", 0.9, 0.5), {"step": 1, "name": "loss", "value": 0.8}]  # step 1 again: the later wins
    metrics, history = summarize([weak, strong])
    assert metrics == {"loss": 0.5, "throughput": 100.0}
    assert history["loss"] == [{"step": 1, "value": 0.8}, {"step": 2, "value": 0.5}]


def test_a_long_curve_is_thinned_evenly_keeping_both_ends() -> None:
    points = [(step, float(step)) for step in range(5000)]
    kept = thinned(points)
    assert len(kept) == MAX_POINTS and kept[0] == (0, 0.0) and kept[-1] == (4999, 4999.0)
    assert thinned(points[:10]) == points[:10]


def test_the_model_is_held_by_the_attempt_whose_folder_it_is_in() -> None:
    assert holds("7/train/1", "/myapp/outputs/7/train/1/model.pt")
    assert holds("7/train/1", "s3://bucket/outputs/demo/7/train/1/model.pt")
    assert not holds("7/train/1", "/myapp/outputs/7/train/10/model.pt")
    assert not holds(None, "/myapp/outputs/7/train/1/model.pt")


@pytest.fixture()
def run_world(app, make_user, admin):
    """A run of train and evaluate (both upstream of register) and report (not): train made the model."""
    from myapp.extensions import db
    from myapp.models import TaskRun

    owner = make_user()
    catalog = build_catalog(admin)
    pid = created(owner.post("/api/v1/project/", json={"name": unique("proj")}))["id"]
    pipeline = created(owner.post("/api/v1/pipeline/", json={"project_id": pid, "name": "digits",
                                                             "parameters": {"lr": 0.05, "epochs": 3}}))
    tasks = {name: created(owner.post("/api/v1/task/", json={
        "pipeline_id": pipeline["id"], "name": name, "template_id": catalog["job_template"]}))["id"]
        for name in ("train", "evaluate", "report", "register")}
    for upstream in ("train", "evaluate"):
        created(owner.post("/api/v1/edge/", json={"pipeline_id": pipeline["id"], "upstream_task_id": tasks[upstream],
                                                  "downstream_task_id": tasks["register"]}))
    run = created(owner.post("/api/v1/pipeline_run/", json={"pipeline_id": pipeline["id"],
                                                            "parameters": {"lr": 0.01}}))
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    attempts = [  # task, attempt, minutes after start it finished, what it reported
        ("train", 1, 1, reports("accuracy", 0.1)),  # retried: its second attempt counts
        ("train", 2, 5, reports("loss", 0.9, 0.5) + reports("accuracy", 0.90, 0.944)),
        ("evaluate", 1, 9, reports("accuracy", 0.5) + reports("f1", 0.8)),
        ("report", 1, 12, reports("loss", 9.0) + reports("throughput", 100.0)),
    ]
    with app.app_context():
        for task, attempt, minutes, metrics in attempts:
            db.session.add(TaskRun(project_id=pid, pipeline_run_id=run["id"], task_id=tasks[task], attempt=attempt,
                                   manifests=[{"kind": "Job"}], output_dir=f"{run['id']}/{task}/{attempt}",
                                   reported_metrics=metrics, finished_at=start + dt.timedelta(minutes=minutes)))
        registering = TaskRun(project_id=pid, pipeline_run_id=run["id"], task_id=tasks["register"], attempt=1,
                              manifests=[{"kind": "Job"}])
        db.session.add(registering)
        db.session.commit()
        return {"owner": owner, "pid": pid, "run": run["id"], "registering": registering.id}


def register(world, uri: str, **extra) -> dict:
    return created(world["owner"].post("/api/v1/model_version/", json={
        "project_id": world["pid"], "name": "digits", "uri": uri, "task_run_id": world["registering"], **extra}))


def test_registering_from_a_run_records_its_parameters_metrics_and_curves(run_world) -> None:
    owner = run_world["owner"]
    version = register(run_world, f"s3://models/outputs/{run_world['run']}/train/2/model.pt",
                       metrics={"f1": 0.85}, params={"note": "first try"})
    assert version["params"] == {"lr": 0.01, "epochs": 3, "note": "first try"}
    # train made the model: its loss and accuracy win; evaluate's f1 is overridden by the call's; report adds one.
    assert version["metrics"] == {"loss": 0.5, "accuracy": 0.944, "f1": 0.85, "throughput": 100.0}
    assert "metric_history" not in version  # curves are read on their own
    history = owner.get(f"/api/v1/model_version/{version['id']}/metric_history").get_json()["metrics"]
    assert history["accuracy"] == [{"step": 1, "value": 0.90}, {"step": 2, "value": 0.944}]
    assert history["f1"] == [{"step": 1, "value": 0.8}]  # the run's curve, beside the call's last value
    listed = owner.get("/api/v1/model_version/", query_string={"project_id": run_world["pid"]}).get_json()["items"]
    assert [(v["metrics"], v["params"]) for v in listed] == [(version["metrics"], version["params"])]


def test_without_the_maker_the_registering_tasks_upstream_wins(run_world) -> None:
    version = register(run_world, "s3://models/elsewhere/model.pt")
    # loss: train (upstream) over report; accuracy: evaluate, upstream too and finished after train.
    assert version["metrics"] == {"loss": 0.5, "accuracy": 0.5, "f1": 0.8, "throughput": 100.0}


def test_a_version_registered_without_a_run_keeps_what_it_was_given(run_world) -> None:
    owner = run_world["owner"]
    version = created(owner.post("/api/v1/model_version/", json={
        "project_id": run_world["pid"], "name": "digits", "uri": "s3://models/m.pt", "metrics": {"accuracy": 0.7},
        "params": {"lr": 0.1, "optimizer": "adam", "warm": True}}))
    assert version["metrics"] == {"accuracy": 0.7}
    assert version["params"] == {"lr": 0.1, "optimizer": "adam", "warm": True}
    assert owner.get(f"/api/v1/model_version/{version['id']}/metric_history").get_json() == {"metrics": {}}
    bad = owner.post("/api/v1/model_version/", json={"project_id": run_world["pid"], "name": "digits",
                                                     "uri": "s3://models/m.pt", "params": {"lr": [0.1]}})
    assert bad.status_code == 400
    assert [e["field"] for e in bad.get_json()["errors"]] == ["params.lr.value"]
