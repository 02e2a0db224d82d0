"""The registry and the services through the API: lineage, stages by role, every move of the split,
bad input refused naming the field with the traffic unchanged, deletion left to the worker, and who
may reach the stable URL /serving/<project>/<service>/."""
from __future__ import annotations

import pytest

from tests.support import unique
from tests.world import add_member, build_catalog, build_project, created, data_file


@pytest.fixture()
def world(app, make_user, admin):
    owner = make_user()
    catalog = build_catalog(admin)
    world = build_project(owner, catalog, app)
    pid = world.ids["project"]
    versions = [created(owner.post("/api/v1/model_version/", json={
        "project_id": pid, "name": "mnist", "uri": data_file(app, pid, f"models/mnist-{i}.joblib"),
        "framework": "sklearn",
        "signature": {"shape": [None, 64], "dtype": "float32"}, "metrics": {"accuracy": 0.9 + i / 100}}))
        for i in range(3)]
    other = created(owner.post("/api/v1/model_version/", json={"project_id": pid, "name": "other",
                                                               "uri": data_file(app, pid, "models/o.joblib")}))
    service = created(owner.post("/api/v1/inference_service/", json={
        "project_id": pid, "name": unique("svc"), "model_version_id": versions[0]["id"]}))
    return {"owner": owner, "pid": pid, "versions": [v["id"] for v in versions], "other": other["id"],
            "service": service, "world": world, "catalog": catalog}


def errors_of(resp) -> dict[str, str]:
    return {e["field"]: e["reason"] for e in resp.get_json().get("errors", [])}


def test_versions_are_numbered_and_link_back_to_their_run(world):
    owner, w = world["owner"], world["world"]
    v = owner.get(f"/api/v1/model_version/{w.ids['model_version']}").get_json()
    assert v["run_id"] == w.ids["pipeline_run"] and v["pipeline_id"] == w.ids["pipeline"]
    assert v["stage"] == "none"
    numbered = [owner.get(f"/api/v1/model_version/{i}").get_json()["version"] for i in world["versions"]]
    assert numbered == [1, 2, 3]
    bad = owner.post("/api/v1/model_version/", json={"project_id": world["pid"], "name": "mnist", "uri": "/m",
                                                      "signature": {"shape": [], "dtype": "complex"}})
    assert bad.status_code == 400 and set(errors_of(bad)) == {"signature.shape", "signature.dtype"}


def test_stages_move_by_role_and_one_version_is_in_production(world, make_user):
    owner, pid = world["owner"], world["pid"]
    viewer, developer = make_user(), make_user()
    add_member(owner, pid, viewer.username, "viewer")
    add_member(owner, pid, developer.username, "developer")
    first, second, _ = world["versions"]
    assert viewer.put(f"/api/v1/model_version/{first}", json={"stage": "production"}).status_code == 403
    assert viewer.get(f"/api/v1/model_version/{first}").get_json()["stage"] == "none"
    assert developer.put(f"/api/v1/model_version/{first}", json={"stage": "production"}).status_code == 200
    assert developer.put(f"/api/v1/model_version/{second}", json={"stage": "production"}).status_code == 200
    stages = {i: owner.get(f"/api/v1/model_version/{i}").get_json()["stage"] for i in (first, second)}
    assert stages == {first: "archived", second: "production"}
    bad = developer.put(f"/api/v1/model_version/{first}", json={"stage": "gold"})
    assert bad.status_code == 400 and "stage" in errors_of(bad)
    assert owner.get("/api/v1/model_version/", query_string={"stage": "production", "project_id": pid}) \
        .get_json()["count"] == 1


def test_canary_promote_rollback_move_the_split(world):
    owner, service = world["owner"], world["service"]
    first, second, third = world["versions"]
    assert service["traffic"] == {str(first): 100} and service["state"] == "pending"
    assert service["endpoint"] == f"/serving/{world['world'].project['name']}/{service['name']}/"
    url = f"/api/v1/inference_service/{service['id']}"
    moved = owner.post(f"{url}/canary", json={"version_id": second, "weight": 30}).get_json()
    assert moved["traffic"] == {str(first): 70, str(second): 30}
    assert moved["generation"] == service["generation"] + 1
    assert owner.post(f"{url}/rollback", json={}).get_json()["traffic"] == {str(first): 100}
    owner.post(f"{url}/canary", json={"version_id": third, "weight": 10})
    promoted = owner.post(f"{url}/promote", json={}).get_json()
    assert promoted["traffic"] == {str(third): 100} and promoted["model_version_id"] == third
    split = owner.put(url, json={"traffic": {str(third): 50, str(first): 50}}).get_json()
    assert split["traffic"] == {str(third): 50, str(first): 50}


def test_bad_moves_name_the_field_and_leave_the_traffic_unchanged(world, make_user, admin, app):
    owner, service = world["owner"], world["service"]
    first, second, _ = world["versions"]
    url = f"/api/v1/inference_service/{service['id']}"
    owner.post(f"{url}/canary", json={"version_id": second, "weight": 30})
    before = owner.get(url).get_json()
    stranger = build_project(owner, world["catalog"], app)  # another project of the same owner
    cases = [
        (owner.put(url, json={"traffic": {str(first): 60, str(second): 30}}),
         {"traffic": "weights must add up to 100, not 90"}),
        (owner.put(url, json={"traffic": {str(first): 50, str(world["other"]): 50}}),
         {f"traffic.{world['other']}": f"model version {world['other']} is a version of 'other', not of this "
                                       "service's model 'mnist'"}),
        (owner.post(f"{url}/canary", json={"version_id": stranger.ids["model_version"], "weight": 10}),
         {"version_id": f"model version {stranger.ids['model_version']} not found"}),
        (owner.post(f"{url}/canary", json={"version_id": 987654321, "weight": 10}),
         {"version_id": "model version 987654321 not found"}),
        (owner.post(f"{url}/canary", json={"version_id": second, "weight": 130}),
         {"weight": "Must be greater than or equal to 0 and less than or equal to 100."}),
        (owner.put(url, json={"traffic": {str(second): 100}}),
         {"traffic": f"must include the stable version {first} (promote a canary to replace it)"}),
        (owner.put(url, json={"shadow_version_id": world["other"]}),
         {"shadow_version_id": f"model version {world['other']} is a version of 'other', not of this service's "
                               "model 'mnist'"}),
    ]
    for resp, errors in cases:
        assert resp.status_code in (400, 404), resp.get_json()
        assert errors_of(resp) == errors
    after = owner.get(url).get_json()
    assert (after["traffic"], after["generation"], after["shadow_version_id"]) == \
        (before["traffic"], before["generation"], before["shadow_version_id"])


def test_delete_is_intent_and_versions_in_use_stay(world):
    owner, service = world["owner"], world["service"]
    url = f"/api/v1/inference_service/{service['id']}"
    refused = owner.delete(f"/api/v1/model_version/{world['versions'][0]}")
    assert refused.status_code == 409 and service["name"] in refused.get_json()["message"]
    assert owner.delete(url).get_json() == {"message": f"inference service {service['id']} is being deleted"}
    row = owner.get(url).get_json()
    assert row["deleting"] is True  # the worker stops the servers, then deletes the row
    again = owner.post(f"{url}/canary", json={"version_id": world["versions"][1], "weight": 10})
    assert again.status_code == 409


def test_the_stable_url_asks_who_is_calling(world, make_user, app):
    owner, service, project = world["owner"], world["service"], world["world"].project["name"]
    path = f"/serving/{project}/{service['name']}/predict"
    assert app.test_client().post(path, json={"instances": [[0] * 64]}).status_code == 401
    outsider = make_user()
    assert outsider.post(path, json={"instances": [[0] * 64]}).status_code == 404
    viewer = make_user()
    add_member(owner, world["pid"], viewer.username, "viewer")
    answer = viewer.post(path, json={"instances": [[0] * 64]})
    assert answer.status_code == 503 and "not answering yet" in answer.get_json()["message"]
    assert owner.post(f"/serving/{project}/nothing/predict", json={}).status_code == 404
