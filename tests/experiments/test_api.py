"""The experiment API: create (errors naming the field), start, cancel, YAML import, trials; members only."""
from __future__ import annotations

import pytest

from tests.experiments.support import body, pipeline_with_parameters
from tests.world import created


@pytest.fixture()
def pipeline(user, catalog):
    return pipeline_with_parameters(user, catalog)


def refused(client, data) -> tuple[int, str, str]:
    answer = client.post("/api/v1/experiment/", json=data)
    error = answer.get_json()["errors"][0]
    return answer.status_code, error["field"], error["reason"]


BAD_INPUT = [
    ({"search_space": [{"name": "momentum", "type": "float", "low": 0, "high": 1}]}, "search_space[0].name",
     "declares no parameter 'momentum' (its parameters: epochs, lr)"),
    ({"search_space": [{"name": "lr", "type": "float", "low": 0.5, "high": 0.1}]}, "search_space[0].high",
     "wrong way round"),
    ({"search_space": [{"name": "lr", "type": "float", "low": 0, "high": 1, "log": True}]}, "search_space[0].low",
     "above 0 on a log scale"),
    ({"search_space": [{"name": "epochs", "type": "int", "low": 1.5, "high": 4}]}, "search_space[0].low",
     "whole number"),
    ({"search_space": [{"name": "lr", "type": "categorical"}]}, "search_space[0].choices", "needs choices"),
    ({"max_trials": 0}, "max_trials", ""),
    ({"parallel_trials": 0}, "parallel_trials", ""),
    ({"time_limit_seconds": 0}, "time_limit_seconds", ""),
    ({"max_failed_trials": -1}, "max_failed_trials", ""),
    ({"algorithm": "bayes"}, "algorithm", "one of"),
    ({"algorithm": "grid"}, "search_space[0].step", "grid search needs a step"),
    ({"algorithm": "grid", "search_space": [{"name": "epochs", "type": "int", "low": 1, "high": 10**9}]},
     "search_space[0].step", "at most 10000"),  # counted, never enumerated
    ({"algorithm": "cmaes", "objectives": [{"metric": "a"}, {"metric": "b"}]}, "algorithm", "one objective"),
    ({"early_stopping": {"kind": "median"}, "objectives": [{"metric": "a"}, {"metric": "b"}]}, "early_stopping",
     "single objective"),
    ({"early_stopping": {"kind": "patience"}}, "early_stopping.kind", "one of"),
]


def test_bad_input_names_the_field_and_stores_nothing(user, pipeline):
    for changes, field, words in BAD_INPUT:  # one user and pipeline for all (each costs seconds to make)
        status, named, reason = refused(user, body(pipeline["id"], **changes))
        assert (status, named) == (400, field) and words in reason, (changes, status, named, reason)
    assert user.get("/api/v1/experiment/", query_string={"pipeline_id": pipeline["id"]}).get_json()["count"] == 0


def test_created_started_and_cancelled_by_members_only(app, user, make_user, pipeline):
    from myapp.tasks import cancel_experiment

    experiment = created(user.post("/api/v1/experiment/", json=body(pipeline["id"], start=False)))
    assert experiment["state"] == "created" and "sampler_state" not in experiment
    started = user.post(f"/api/v1/experiment/{experiment['id']}/start")
    assert started.status_code == 200 and started.get_json()["state"] == "running"
    again = user.post(f"/api/v1/experiment/{experiment['id']}/start")  # already running: as it was
    assert again.status_code == 200 and again.get_json()["started_at"] == started.get_json()["started_at"]
    assert user.delete(f"/api/v1/experiment/{experiment['id']}").status_code == 409  # running

    stranger = make_user()
    assert stranger.get(f"/api/v1/experiment/{experiment['id']}").status_code == 404
    assert stranger.post(f"/api/v1/experiment/{experiment['id']}/cancel").status_code == 404
    assert stranger.get("/api/v1/experiment/").get_json()["count"] == 0
    assert stranger.post("/api/v1/experiment/", json=body(pipeline["id"])).status_code == 404

    assert user.post(f"/api/v1/experiment/{experiment['id']}/cancel").status_code == 202
    with app.app_context():
        cancel_experiment(experiment["id"])  # what the worker does with the message
    assert user.post(f"/api/v1/experiment/{experiment['id']}/start").status_code == 409
    assert user.get(f"/api/v1/experiment/{experiment['id']}").get_json()["state"] == "cancelled"
    assert user.post(f"/api/v1/experiment/{experiment['id']}/cancel").status_code == 409
    assert user.get("/api/v1/trial/", query_string={"experiment_id": experiment["id"]}).get_json()["count"] == 0
    assert user.delete(f"/api/v1/experiment/{experiment['id']}").status_code == 200


YAML = """\
name: {name}
project: {project}
pipeline: train
objectives: [{{metric: accuracy, direction: maximize}}]
algorithm: {algorithm}
search_space:
  - {{name: lr, type: float, low: 0.001, high: 0.5, log: true}}
max_trials: 6
parallel_trials: 2
early_stopping: {{kind: median}}
"""


def test_yaml_import_creates_then_replaces_until_started(user, pipeline):
    project = user.get(f"/api/v1/project/{pipeline['project_id']}").get_json()["name"]
    text = YAML.format(name="search", project=project, algorithm="tpe")
    first = user.post("/api/v1/experiment/import", json={"yaml": text}).get_json()
    assert (first["state"], first["max_trials"], first["early_stopping"]["kind"]) == ("created", 6, "median")
    again = user.post("/api/v1/experiment/import", json={"yaml": text.replace("tpe", "random")}).get_json()
    assert (again["id"], again["algorithm"]) == (first["id"], "random")
    for wrong, field in [(("name: lr", "name: momentum"), "search_space[0].name"),
                         (("high: 0.5", "high: 0.0005"), "search_space[0].high"),
                         (("max_trials: 6", "max_trials: 0"), "max_trials")]:
        bad = user.post("/api/v1/experiment/import", json={"yaml": text.replace(*wrong)})  # as `experiment apply`
        assert bad.status_code == 400 and bad.get_json()["errors"][0]["field"] == field, (wrong, bad.get_json())
    assert user.post(f"/api/v1/experiment/{first['id']}/start").status_code == 200
    late = user.post("/api/v1/experiment/import", json={"yaml": text})
    assert late.status_code == 409 and late.get_json()["errors"][0]["field"] == "name"
