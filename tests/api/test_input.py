"""Bad input: a clear error naming the field and the reason, and nothing half-written."""
from __future__ import annotations

import pytest

from tests.support import unique
from tests.world import build_catalog, created


@pytest.fixture()
def project(user):
    return created(user.post("/api/v1/project/", json={"name": unique("p")}))


def errors_of(resp) -> dict[str, str]:
    return {e["field"]: e["reason"] for e in resp.get_json()["errors"]}


def test_invalid_json_is_400(user):
    resp = user.client.post("/api/v1/project/", data="{not json", content_type="application/json",
                            headers={"Authorization": f"Bearer {user.token}"})
    assert resp.status_code == 400
    assert errors_of(resp) == {"body": "is not valid JSON"}
    assert user.post("/api/v1/project/", json=[1, 2]).get_json()["errors"][0]["reason"] == "must be a JSON object"


def test_unknown_field_is_named(user):
    resp = user.post("/api/v1/project/", json={"name": unique("p"), "colour": "red"})
    assert resp.status_code == 400
    assert errors_of(resp) == {"colour": "Unknown field."}


@pytest.mark.parametrize("name, reason", [
    ("Has_Caps", "DNS-1123"),
    ("-leading", "DNS-1123"),
    ("trailing-", "DNS-1123"),
    ("a" * 64, "at most 63 characters"),
    ("", "DNS-1123"),
])
def test_names_must_be_dns_labels(user, name, reason):
    resp = user.post("/api/v1/project/", json={"name": name})
    assert resp.status_code == 400
    assert reason in errors_of(resp)["name"]
    assert user.get("/api/v1/project/").get_json()["count"] == 0


def test_wrong_types_and_ranges_are_named(user, project):
    resp = user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "p", "max_active_runs": "3",
                                                "schedule": "every day"})
    assert resp.status_code == 400
    errs = errors_of(resp)
    assert set(errs) == {"max_active_runs", "schedule"}
    assert "cron" in errs["schedule"]
    resp = user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "p", "max_active_runs": 0})
    assert "greater than or equal to 1" in errors_of(resp)["max_active_runs"]


def test_duplicate_name_is_409_naming_the_field(user, project):
    body = {"project_id": project["id"], "name": "train"}
    created(user.post("/api/v1/pipeline/", json=body))
    resp = user.post("/api/v1/pipeline/", json=body)
    assert resp.status_code == 409
    assert "already exists" in errors_of(resp)["name"]
    assert user.get("/api/v1/pipeline/", query_string={"project_id": project["id"]}).get_json()["count"] == 1


def test_cycle_is_refused_and_nothing_written(app, admin, user, project):
    cat = build_catalog(admin)
    pipe = created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "dag"}))
    t = [created(user.post("/api/v1/task/", json={"pipeline_id": pipe["id"], "name": n,
                                                  "template_id": cat["job_template"]}))["id"] for n in "abc"]
    created(user.post("/api/v1/edge/", json={"pipeline_id": pipe["id"], "upstream_task_id": t[0],
                                             "downstream_task_id": t[1]}))
    created(user.post("/api/v1/edge/", json={"pipeline_id": pipe["id"], "upstream_task_id": t[1],
                                             "downstream_task_id": t[2]}))
    resp = user.post("/api/v1/edge/", json={"pipeline_id": pipe["id"], "upstream_task_id": t[2],
                                            "downstream_task_id": t[0]})
    assert resp.status_code == 400
    assert "cycle" in errors_of(resp)["downstream_task_id"]
    assert user.get("/api/v1/edge/", query_string={"pipeline_id": pipe["id"]}).get_json()["count"] == 2


def test_edge_between_pipelines_is_refused(admin, user, project):
    cat = build_catalog(admin)
    p1, p2 = (created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": n}))
              for n in ("p1", "p2"))
    a = created(user.post("/api/v1/task/", json={"pipeline_id": p1["id"], "name": "a",
                                                 "template_id": cat["job_template"]}))
    b = created(user.post("/api/v1/task/", json={"pipeline_id": p2["id"], "name": "b",
                                                 "template_id": cat["job_template"]}))
    resp = user.post("/api/v1/edge/", json={"pipeline_id": p1["id"], "upstream_task_id": a["id"],
                                            "downstream_task_id": b["id"]})
    assert resp.status_code == 400
    assert "same pipeline" in errors_of(resp)["downstream_task_id"]


def test_failed_update_changes_nothing(user, project):
    pipe = created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "keep",
                                                        "description": "v1"}))
    resp = user.put(f"/api/v1/pipeline/{pipe['id']}", json={"description": "v2", "max_active_runs": -1})
    assert resp.status_code == 400
    assert user.get(f"/api/v1/pipeline/{pipe['id']}").get_json()["description"] == "v1"
    resp = user.put(f"/api/v1/pipeline/{pipe['id']}", json={"project_id": 999})
    assert resp.status_code == 400 and "cannot be changed" in errors_of(resp)["project_id"]


def test_missing_reference_names_the_field(user, project):
    resp = user.post("/api/v1/inference_service/", json={"project_id": project["id"], "name": "svc",
                                                         "model_version_id": 987654})
    assert resp.status_code == 404
    assert errors_of(resp) == {"model_version_id": "model version 987654 not found"}


def test_list_query_errors(user):
    assert "unknown query parameter" in errors_of(user.get("/api/v1/pipeline/?colour=red"))["colour"]
    assert "from 1 to 100" in errors_of(user.get("/api/v1/pipeline/?page_size=1000"))["page_size"]
    assert errors_of(user.get("/api/v1/pipeline/?project_id=abc"))["project_id"] == "must be an integer"
    assert "must be one of" in errors_of(user.get("/api/v1/pipeline_run/?state=done"))["state"]
    assert "must be one of" in errors_of(user.get("/api/v1/pipeline/?order=-secret"))["order"]


def test_unknown_url_and_method_answer_json(user):
    resp = user.get("/api/v1/nothing-here")
    assert resp.status_code == 404 and "message" in resp.get_json()
    resp = user.request("PATCH", "/api/v1/project/")
    assert resp.status_code == 405 and "message" in resp.get_json()


def test_task_args_and_resources_are_checked_against_the_template(admin, user, project):
    cat = build_catalog(admin)
    pipe = created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "p"}))
    base = {"pipeline_id": pipe["id"], "name": "t", "template_id": cat["job_template"]}
    cases = [
        ({"args": {"epochs": 1000}}, "args.epochs", "100"),
        ({"args": {"optimizer": "rmsprop"}}, "args.optimizer", "sgd"),
        ({"args": {"layers": 3}}, "args.layers", "unknown argument"),
        ({"resources": {"cpu": "64"}}, "resources.cpu", "maximum"),
        ({"resources": {"cpu": "-1"}}, "resources.cpu", "negative"),
    ]
    for extra, field, words in cases:
        resp = user.post("/api/v1/task/", json=base | extra)
        assert resp.status_code == 400, (extra, resp.get_json())
        assert words in errors_of(resp)[field], (extra, resp.get_json())
    assert user.get("/api/v1/task/", query_string={"pipeline_id": pipe["id"]}).get_json()["count"] == 0
    task = created(user.post("/api/v1/task/", json=base | {"args": {"epochs": 5}, "resources": {"cpu": "2"}}))
    assert task["args"] == {"epochs": 5}
    preview = user.get(f"/api/v1/task/{task['id']}/manifests")
    assert preview.status_code == 200, preview.get_json()
    job = preview.get_json()["items"][0]
    assert job["kind"] == "Job" and job["metadata"]["namespace"] == project["namespace"]
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"]["cpu"] == "2"
    assert job["spec"]["template"]["spec"]["serviceAccountName"] == project["service_account"]
    resp = user.put(f"/api/v1/task/{task['id']}", json={"args": {"epochs": 0}})
    assert resp.status_code == 400 and "args.epochs" in errors_of(resp)
    assert user.get(f"/api/v1/task/{task['id']}").get_json()["args"] == {"epochs": 5}


def test_template_args_schema_is_checked(admin):
    resp = admin.post("/api/v1/job_template/", json={
        "name": unique("t"), "version": "1", "kind": "job", "image": "x:1",
        "args_schema": {"properties": {"epochs": {"type": "integer", "colour": 1}}}})
    assert resp.status_code == 400
    assert "epochs.colour" in errors_of(resp)["args_schema"]
    resp = admin.post("/api/v1/job_template/", json={"name": unique("t"), "version": "1", "kind": "Nope",
                                                     "image": "x:1"})
    assert "Must be one of" in errors_of(resp)["kind"]


def test_template_resources_are_checked_like_the_catalog_files(admin):
    """A template without a default cpu and memory would fail at every task and notebook that uses it."""
    base = {"version": "1", "kind": "job", "image": "x:1"}
    resp = admin.post("/api/v1/job_template/", json={"name": unique("t"), **base})
    assert resp.status_code == 400 and "default_resources.cpu" in errors_of(resp)
    resp = admin.post("/api/v1/job_template/", json={"name": unique("t"), **base,
                                                     "default_resources": {"cpu": "2", "memory": "1Gi"},
                                                     "max_resources": {"cpu": "1", "memory": "1Gi"}})
    assert resp.status_code == 400 and "exceeds" in errors_of(resp)["default_resources.cpu"]
    made = admin.post("/api/v1/job_template/", json={"name": unique("t"), **base,
                                                     "default_resources": {"cpu": "1", "memory": "1Gi"}})
    assert made.status_code == 201 and made.get_json()["max_resources"] == {}
    pk = made.get_json()["id"]
    resp = admin.put(f"/api/v1/job_template/{pk}", json={"default_resources": {"memory": "1Gi"}})
    assert resp.status_code == 400 and "default_resources.cpu" in errors_of(resp)
    assert admin.get(f"/api/v1/job_template/{pk}").get_json()["default_resources"]["cpu"] == "1"
