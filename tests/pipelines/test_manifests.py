"""From SQL rows to the Volcano Queue of a task's resource group: on a Kubernetes cluster a gang-scheduled group
renders its own Queue (capacity from the group, deserved/weight/reclaimable from its quotas) before the
PodGroup, which goes in it; a local cluster, or a group without gang scheduling, renders none."""
from __future__ import annotations

import pytest

from myapp.rendering.contract import PRIORITY_CLASS
from tests.support import unique
from tests.world import created


@pytest.fixture()
def task_in_group(app, admin, catalog):
    def make(kind: str, gang: bool = True, queue: str | None = None, quotas: int = 1):
        cluster = created(admin.post("/api/v1/cluster/", json={"name": unique("c"), "kind": kind}))
        group = created(admin.post("/api/v1/resource_group/", json={
            "name": unique("pool"), "cluster_id": cluster["id"], "cpu": "16", "memory": "64Gi", "gpus": 8,
            "gang_scheduling": gang, "queue": queue}))
        project = created(admin.post("/api/v1/project/", json={"name": unique("p")}))
        for _ in range(quotas):
            other = project if _ == 0 else created(admin.post("/api/v1/project/", json={"name": unique("p")}))
            created(admin.post("/api/v1/quota/", json={"project_id": other["id"], "resource_group_id": group["id"],
                                                      "cpu": "4", "memory": "8Gi", "gpus": 3}))
        pipeline = created(admin.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "p"}))
        task = created(admin.post("/api/v1/task/", json={"pipeline_id": pipeline["id"], "name": "t",
                                                         "template_id": catalog, "resource_group_id": group["id"]}))
        return group, task["id"]

    return make


def rendered(app, task_id: int) -> list[dict]:
    from myapp.extensions import db
    from myapp.models import Task
    from myapp.pipelines.manifests import render_task

    with app.app_context():
        return render_task(db.session.get(Task, task_id), 1)


def test_a_kubernetes_gang_group_renders_its_queue_from_capacity_and_quotas(app, task_in_group):
    group, task = task_in_group("kubernetes", quotas=2)
    queue, podgroup = rendered(app, task)[:2]
    assert queue["kind"] == "Queue" and queue["metadata"]["name"] == group["name"]  # no queue named: its own
    assert queue["spec"] == {"weight": 6, "reclaimable": True,
                             "capability": {"cpu": "16", "memory": "64Gi", "nvidia.com/gpu": "8"},
                             "deserved": {"cpu": "8", "memory": "16Gi", "nvidia.com/gpu": "6"}}
    assert podgroup["kind"] == "PodGroup" and podgroup["spec"]["queue"] == group["name"]
    assert podgroup["spec"]["priorityClassName"] == PRIORITY_CLASS


def test_a_named_queue_is_used_and_volcanos_default_queue_is_never_rendered(app, task_in_group):
    _, task = task_in_group("kubernetes", queue="team-a")
    assert rendered(app, task)[0]["metadata"]["name"] == "team-a"
    _, task = task_in_group("kubernetes", queue="default")
    manifests = rendered(app, task)
    assert manifests[0]["kind"] == "PodGroup" and manifests[0]["spec"]["queue"] == "default"


@pytest.mark.parametrize(("kind", "gang"), [("local", True), ("kubernetes", False)])
def test_no_queue_without_volcano(app, task_in_group, kind, gang):
    _, task = task_in_group(kind, gang=gang)
    assert "Queue" not in [m["kind"] for m in rendered(app, task)]
