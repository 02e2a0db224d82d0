"""Admission as the API shows it: a waiting attempt's reason and queue position in the task-run API,
`GET /api/v1/resource_group/{id}/status` (admins only) with capacity, use, quota and borrowing per
project, the running attempts and the queue; the admission settings of groups and quotas."""
from __future__ import annotations

import pytest

from tests.api.support import Shapes
from tests.fake_backend import FakeBackend
from tests.support import unique
from tests.world import created


@pytest.fixture()
def world(admin, user, catalog):
    cluster = created(admin.post("/api/v1/cluster/", json={"name": unique("local"), "kind": "local"}))
    group = created(admin.post("/api/v1/resource_group/", json={
        "name": unique("rg"), "cluster_id": cluster["id"], "policy": "gang-fifo", "max_preemptions": 1,
        "nodes": [{"name": "node-0", "gpus": 0, "cpu_millicores": 2000, "memory_bytes": 8 * 2**30},
                  {"name": "node-1", "gpus": 0, "cpu_millicores": 2000, "memory_bytes": 8 * 2**30}]}))
    mine = created(user.post("/api/v1/project/", json={"name": unique("mine")}))
    other = created(user.post("/api/v1/project/", json={"name": unique("other")}))
    quota = created(admin.post("/api/v1/quota/", json={
        "project_id": mine["id"], "resource_group_id": group["id"], "cpu": "1", "memory": "4Gi",
        "can_borrow": False}))
    assert (quota["can_borrow"], quota["can_lend"]) == (False, True)
    runs = {}
    for key, project, cpu in (("first", mine, "1"), ("second", mine, "1"), ("borrower", other, "2")):
        pipe = created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": unique("pipe")}))
        graph = user.put(f"/api/v1/pipeline/{pipe['id']}/graph", json={"tasks": [{
            "key": "t", "name": "train", "template_id": catalog, "resource_group_id": group["id"],
            "resources": {"cpu": cpu, "memory": "1Gi"}}]})
        assert graph.status_code == 200, graph.get_json()
        runs[key] = created(user.post("/api/v1/pipeline_run/", json={"pipeline_id": pipe["id"]}))["id"]
    return {"group": group, "mine": mine, "other": other, "runs": runs}


def reconcile(app, run_ids):
    from myapp.pipelines.controller import RunController

    backend = FakeBackend(script={"train": ["hang"]})
    controller = RunController(lambda task: backend)
    with app.app_context():
        for run_id in run_ids:
            controller.reconcile(run_id)


def test_status_and_task_runs_show_the_queue(app, admin, user, world):
    runs = world["runs"]
    reconcile(app, [runs["first"], runs["second"], runs["borrower"]])
    (waiting,) = user.get(f"/api/v1/task_run/?pipeline_run_id={runs['second']}").get_json()["items"]
    assert (waiting["state"], waiting["reason"], waiting["queue_position"]) == (
        "queued", "waiting: project quota cpu 1/1 (this project does not borrow)", 1)
    (running,) = user.get(f"/api/v1/task_run/?pipeline_run_id={runs['first']}").get_json()["items"]
    assert running["state"] == "running" and running["queue_position"] is None and running["placement"]

    answer = admin.get(f"/api/v1/resource_group/{world['group']['id']}/status")
    assert answer.status_code == 200, answer.get_json()
    status = answer.get_json()
    Shapes(admin.get("/api/v1/_openapi").get_json()).component("ResourceGroupStatus", status)
    assert status["resource_group"] == {"id": world["group"]["id"], "name": world["group"]["name"],
                                        "cluster": status["resource_group"]["cluster"], "policy": "gang-fifo"}
    assert status["capacity"]["cpu_millicores"] == 4000 and len(status["capacity"]["nodes"]) == 2
    assert status["used"]["cpu_millicores"] == 3000
    projects = {p["project"]: p for p in status["projects"]}
    mine, other = projects[world["mine"]["name"]], projects[world["other"]["name"]]
    assert mine["quota"]["cpu_millicores"] == 1000 and mine["used"]["cpu_millicores"] == 1000
    assert mine["waiting"] == 1 and mine["borrowed"]["cpu_millicores"] == 0
    # The other project has no quota here: all it uses is borrowed.
    assert other["quota"] is None and other["borrowed"]["cpu_millicores"] == 2000
    assert sorted((r["task_run_id"] == running["id"], r["borrowing"]) for r in status["running"]) == [
        (False, True), (True, False)]
    (queued,) = status["queue"]
    assert (queued["task_run_id"], queued["position"], queued["reason"], queued["cpu_millicores"]) == (
        waiting["id"], 1, "waiting: project quota cpu 1/1 (this project does not borrow)", 1000)
    assert queued["project"] == world["mine"]["name"] and queued["task"] == "train"


def test_status_is_for_admins_only(admin, user, world):
    url = f"/api/v1/resource_group/{world['group']['id']}/status"
    assert user.get(url).status_code == 403
    assert admin.get("/api/v1/resource_group/999999999/status").status_code == 404
    # The group's own read stays open to every signed-in user (the catalog), with its admission settings.
    group = user.get(f"/api/v1/resource_group/{world['group']['id']}").get_json()
    assert (group["policy"], group["max_preemptions"], group["nodes"][0]["name"]) == ("gang-fifo", 1, "node-0")
    assert (group["cpu_millicores"], group["memory_bytes"], group["gpus"]) == (4000, 16 * 2**30, 0)  # the nodes' sums


@pytest.mark.parametrize("body, field", [
    ({"policy": "fastest"}, "policy"),
    ({"nodes": [{"name": "a"}, {"name": "a"}]}, "nodes"),
    ({"nodes": [{"name": "a", "cpu_millicores": -1}]}, "nodes"),
    ({"max_preemptions": 101}, "max_preemptions"),
])
def test_bad_admission_settings_name_the_field(admin, world, body, field):
    answer = admin.put(f"/api/v1/resource_group/{world['group']['id']}", json=body)
    assert answer.status_code == 400, answer.get_json()
    assert field in str(answer.get_json()), answer.get_json()
