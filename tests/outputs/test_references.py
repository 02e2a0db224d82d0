"""Output references are checked when a pipeline is saved (editor graph, YAML import, the task API):
the task exists, runs upstream and declares the key; errors name the task's field. Run parameters are
checked at run creation, and a manual run's {{ ds }} is its start date."""
from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from tests.support import unique
from tests.world import created

READS = "open('{{ tasks.make.outputs.data.csv }}')"


def graph(tasks, edges):
    return {"tasks": [{"key": name, "name": name, **fields} for name, fields in tasks.items()],
            "edges": [{"upstream": up, "downstream": down} for up, down in edges]}


def new_pipeline(user, **settings):
    project = created(user.post("/api/v1/project/", json={"name": unique("proj")}))
    return created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "p", **settings}))


def test_the_graph_save_checks_every_reference(user, catalog):
    pipe = new_pipeline(user)
    url = f"/api/v1/pipeline/{pipe['id']}/graph"
    make = {"template_id": catalog, "args": {"outputs": ["data.csv"]}}
    use = {"template_id": catalog, "args": {"script": READS}}
    cases = [
        (graph({"use": use}, []), "tasks[0].args.script", "no task named 'make'"),
        (graph({"make": make, "use": use}, []), "tasks[1].args.script", "is not upstream of 'use'"),
        (graph({"make": {"template_id": catalog}, "use": use}, [("make", "use")]), "tasks[1].args.script",
         "declares no output 'data.csv' (its outputs: metrics)"),
    ]
    for body, field, reason in cases:
        answer = user.put(url, json=body)
        assert answer.status_code == 400, answer.get_json()
        (error,) = answer.get_json()["errors"]
        assert error["field"] == field and reason in error["reason"], error
    assert user.get(url).get_json()["tasks"] == []  # nothing stored
    saved = user.put(url, json=graph({"make": make, "use": use}, [("make", "use")]))
    assert saved.status_code == 200, saved.get_json()
    # Through a grandparent too, and the template's own declared outputs (metrics) count.
    last = {"template_id": catalog, "args": {"script": "{{ tasks.make.outputs.metrics }}"}}
    assert user.put(url, json=graph({"make": make, "use": use, "last": last},
                                    [("make", "use"), ("use", "last")])).status_code == 200


def test_yaml_import_and_the_task_api_check_references_too(user, catalog):
    pipe = new_pipeline(user)
    project = user.get(f"/api/v1/project/{pipe['project_id']}").get_json()["name"]
    text = (f"name: imported\nproject: {project}\ntasks:\n"
            "  - name: make\n    template: python\n    args: {outputs: [data.csv]}\n"
            f"  - name: use\n    template: python\n    args: {{script: \"{READS}\"}}\n")
    answer = user.post("/api/v1/pipeline/import", json={"yaml": text})
    assert answer.status_code == 400
    assert answer.get_json()["errors"][0]["field"].endswith("args.script")
    assert "not upstream" in answer.get_json()["errors"][0]["reason"]
    ok = user.post("/api/v1/pipeline/import", json={"yaml": text + "    depends_on: [make]\n"})
    assert ok.status_code == 200, ok.get_json()

    answer = user.post("/api/v1/task/", json={"pipeline_id": pipe["id"], "name": "alone", "template_id": catalog,
                                              "args": {"script": READS}})
    assert answer.status_code == 400
    assert answer.get_json()["errors"] == [{"field": "args.script",
                                            "reason": "no task named 'make' in this pipeline"}]


def test_run_parameters_are_checked(user, catalog):
    pipe = new_pipeline(user, parameters={"lr": 0.1})
    bad = user.post("/api/v1/pipeline_run/", json={"pipeline_id": pipe["id"], "parameters": {"lrr": 0.5}})
    assert bad.status_code == 400
    assert bad.get_json()["errors"] == [{"field": "parameters.lrr", "reason": bad.get_json()["errors"][0]["reason"]}]
    assert "declares no parameter 'lrr' (its parameters: lr)" in bad.get_json()["errors"][0]["reason"]
    nested = user.post("/api/v1/pipeline_run/", json={"pipeline_id": pipe["id"], "parameters": {"lr": [1]}})
    assert nested.status_code == 400 and nested.get_json()["errors"][0]["field"] == "parameters.lr"
    good = user.post("/api/v1/pipeline_run/", json={"pipeline_id": pipe["id"], "parameters": {"lr": 0.5}})
    assert good.status_code == 201


def test_run_parameters_given_as_text_are_stored_as_their_defaults_type(user, catalog):
    """A form or a CLI gives every value as text: a run stores numbers and booleans as such, so its
    parameters compare with an API-started run's; text that is not one is refused naming the field."""
    pipe = new_pipeline(user, parameters={"lr": 0.1, "epochs": 3, "augment": False, "name": "x"})
    url = "/api/v1/pipeline_run/"
    run = user.post(url, json={"pipeline_id": pipe["id"], "parameters": {
        "lr": " 0.01", "epochs": "5", "augment": "True", "name": "7"}})
    assert run.status_code == 201, run.get_json()
    stored = user.get(f"{url}{run.get_json()['id']}").get_json()["parameters"]
    assert stored == {"lr": 0.01, "epochs": 5, "augment": True, "name": "7"}
    assert type(stored["epochs"]) is int and type(stored["lr"]) is float
    for name, value, reason in [("lr", "fast", "must be a number"), ("epochs", "nan", "finite"),
                                ("augment", "yes", "true or false")]:
        bad = user.post(url, json={"pipeline_id": pipe["id"], "parameters": {name: value}})
        assert bad.status_code == 400 and bad.get_json()["errors"][0]["field"] == f"parameters.{name}", bad.get_json()
        assert reason in bad.get_json()["errors"][0]["reason"]


def test_a_manual_run_gets_its_start_date_as_ds(app, catalog):
    from myapp.extensions import db
    from myapp.models import PipelineRun, TaskRun
    from tests.fake_backend import FakeBackend
    from tests.pipelines.support import make_pipeline

    command = "echo {{ ds }} {{ ds_nodash }} {{ params.lr }}"
    run_id, _ = make_pipeline(app, catalog, {"a": {"args": {"command": command}}}, [], parameters={"lr": "0.1"})
    with app.app_context():
        run = db.session.get(PipelineRun, run_id)
        run.logical_date = None  # a manual run: no schedule gave it a date
        run.parameters = {"lr": "0.5"}
        db.session.commit()
    from myapp.pipelines.controller import RunController

    now = dt.datetime(2026, 11, 24, 23, 30, tzinfo=dt.UTC)
    backend = FakeBackend()
    controller = RunController(lambda task: backend, now=lambda: now)
    with app.app_context():
        controller.reconcile(run_id)
        attempt = db.session.scalar(sa.select(TaskRun).where(TaskRun.pipeline_run_id == run_id))
        job = attempt.manifests[0]["spec"]["template"]["spec"]["containers"][0]
        assert job["args"][job["args"].index("--command") + 1] == "echo 2026-11-24 20261124 0.5"
        assert db.session.get(PipelineRun, run_id).logical_date == dt.date(2026, 11, 24)  # kept for reruns
