"""Pipelines as code: YAML import and export through the API, with errors naming task and field."""
from __future__ import annotations

import textwrap

import pytest
import yaml

from tests.support import unique
from tests.world import created

NIGHTLY = """\
name: nightly-train
project: {project}
schedule: "0 2 * * *"
tasks:
  - name: prepare
    template: python
    args: {{command: "python prepare.py --date {{{{ ds }}}}"}}
  - name: train
    template: pytorch-ddp
    depends_on: [prepare]
    args: {{workers: 2}}
    retries: 2
    timeout: 3600
"""


@pytest.fixture()
def project(catalog, user):
    return created(user.post("/api/v1/project/", json={"name": unique("p")}))


def import_yaml(client, text):
    return client.post("/api/v1/pipeline/import", json={"yaml": text})


def test_import_export_round_trip(user, project):
    resp = import_yaml(user, NIGHTLY.format(project=project["name"]))
    assert resp.status_code == 200, resp.get_json()
    pipe = resp.get_json()
    assert pipe["schedule"] == "0 2 * * *"
    tasks = user.get("/api/v1/task/", query_string={"pipeline_id": pipe["id"]}).get_json()["items"]
    assert {t["name"]: (t["retries"], t["timeout"]) for t in tasks} == {"prepare": (0, None), "train": (2, 3600)}
    assert user.get("/api/v1/edge/", query_string={"pipeline_id": pipe["id"]}).get_json()["count"] == 1
    exported = yaml.safe_load(user.get(f"/api/v1/pipeline/{pipe['id']}/export").get_json()["yaml"])
    assert exported["tasks"][1]["depends_on"] == ["prepare"]
    assert exported["tasks"][0]["args"] == {"command": "python prepare.py --date {{ ds }}"}
    # re-importing the export changes nothing, and keeps task ids (the DAG is updated in place)
    again = import_yaml(user, yaml.safe_dump(exported)).get_json()
    assert again["id"] == pipe["id"]
    assert [t["id"] for t in user.get("/api/v1/task/", query_string={"pipeline_id": pipe["id"]}).get_json()["items"]] \
        == [t["id"] for t in tasks]


@pytest.mark.parametrize("change, field, words", [
    (lambda d: d["tasks"][1].update(depends_on=["prep"]), "tasks[1] (train).depends_on", "unknown task 'prep'"),
    (lambda d: d["tasks"][1]["args"].update(workers="many"), "tasks[1] (train).args.workers", "integer"),
    (lambda d: d["tasks"][0].update(template="nope"), "tasks[0] (prepare).template", "no job template"),
    (lambda d: d["tasks"][1].update(retries=-1), "tasks[1] (train).retries", "greater than or equal"),
    (lambda d: d["tasks"][0].update(depends_on=["train"]), "tasks", "cycle"),
    (lambda d: d["tasks"][1].update(name="prepare"), "tasks[1] (prepare).name", "another task"),
    (lambda d: d.update(schedule="daily"), "schedule", "cron"),
    (lambda d: d["tasks"][0].update(colour="red"), "tasks[0] (prepare).colour", "Unknown field"),
])
def test_errors_point_to_task_and_field(user, project, change, field, words):
    doc = yaml.safe_load(NIGHTLY.format(project=project["name"]))
    change(doc)
    resp = import_yaml(user, yaml.safe_dump(doc))
    assert resp.status_code in (400, 404), resp.get_json()
    errors = {e["field"]: e["reason"] for e in resp.get_json()["errors"]}
    assert field in errors and words in errors[field], errors
    assert user.get("/api/v1/pipeline/", query_string={"project_id": project["id"]}).get_json()["count"] == 0


def test_bad_yaml_and_foreign_project(user, make_user, project):
    assert import_yaml(user, "name: [unclosed").get_json()["errors"][0]["field"] == "yaml"
    stranger = make_user()
    resp = import_yaml(stranger, NIGHTLY.format(project=project["name"]))
    assert resp.status_code == 404
    text = textwrap.dedent(NIGHTLY.format(project="no-such-project"))
    assert import_yaml(user, text).status_code == 404
