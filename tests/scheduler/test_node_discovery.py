"""Capacity discovered on Kubernetes (myapp/backends/kubernetes/capacity.py): the worker's tick lists the
Nodes of a group's cluster matching its node selector (against the API-server double), stores them with
their allocatable GPUs, CPU and memory and whether pods may land there, and admission uses the
schedulable ones: a task waits while every node is cordoned and starts once one is back."""
from __future__ import annotations

import datetime as dt

import pytest

from myapp.admission import gate, group_state
from myapp.backends.kubernetes import capacity
from myapp.extensions import db
from myapp.models import ResourceGroup, TaskRun
from myapp.scheduler.model import Node
from tests.api.support import Shapes
from tests.fake_backend import FakeBackend
from tests.support import unique
from tests.world import created

T0 = dt.datetime(2026, 11, 24, 12, 0, tzinfo=dt.UTC)


def node(name="n", *, unschedulable=False, ready="True", taints=(), **allocatable):
    return {"metadata": {"name": name}, "spec": {"unschedulable": unschedulable, "taints": list(taints)},
            "status": {"allocatable": allocatable, "conditions": [{"type": "Ready", "status": ready}]}}


def test_a_node_reads_as_its_allocatable_amounts_and_whether_pods_may_land():
    read = capacity.node_capacity(node("a", **{"nvidia.com/gpu": "8", "cpu": "7910m", "memory": "62Gi"}))
    assert read == {"name": "a", "gpus": 8, "cpu_millicores": 7910, "memory_bytes": 62 * 2**30,
                    "schedulable": True, "why": None}
    assert capacity.node_capacity(node(unschedulable=True, cpu="1"))["why"] == "cordoned"
    assert capacity.node_capacity(node(ready="Unknown", cpu="1"))["why"] == "not ready"
    gpu_taint = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
    assert capacity.node_capacity(node(taints=[gpu_taint]))["why"] == "tainted nvidia.com/gpu:NoSchedule"
    tolerated = capacity.node_capacity(node(taints=[gpu_taint]), [{"key": "nvidia.com/gpu", "operator": "Exists"}])
    assert tolerated["schedulable"] and tolerated["gpus"] == 0
    soft = capacity.node_capacity(node(taints=[{**gpu_taint, "effect": "PreferNoSchedule"}]))
    assert soft["schedulable"]  # only a preference: pods still land there
    assert capacity.selector({"pool": "gpu", "arch": "amd64"}) == "arch=amd64,pool=gpu"


@pytest.fixture()
def world(admin, user, catalog):
    cluster = created(admin.post("/api/v1/cluster/", json={
        "name": unique("k8s"), "kind": "kubernetes", "kube_context": "double"}))
    group = created(admin.post("/api/v1/resource_group/", json={
        "name": unique("rg"), "cluster_id": cluster["id"], "policy": "gang-fifo", "discover_nodes": True,
        "node_selector": {"pool": "train"}}))
    project = created(user.post("/api/v1/project/", json={"name": unique("proj")}))
    pipe = created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": unique("pipe")}))
    graph = user.put(f"/api/v1/pipeline/{pipe['id']}/graph", json={"tasks": [{
        "key": "t", "name": "train", "template_id": catalog, "resource_group_id": group["id"],
        "resources": {"cpu": "1", "memory": "1Gi"}}]})
    assert graph.status_code == 200, graph.get_json()
    return {"group": group, "pipeline": pipe}


def discover(app, k8s_backend, at):
    with app.app_context():
        return capacity.discover_due(at, lambda group_id: k8s_backend, interval=60.0)


def test_discovered_nodes_are_the_groups_capacity(app, admin, world, double, k8s_backend):
    double.add_node("a", cpu="4", memory="16Gi", gpus=8, labels={"pool": "train"})
    double.add_node("b", cpu="4", memory="16Gi", labels={"pool": "train"}, unschedulable=True)
    double.add_node("c", cpu="4", memory="16Gi", labels={"pool": "train"}, ready=False)
    double.add_node("other-pool", cpu="64", memory="256Gi", labels={"pool": "serve"})
    assert discover(app, k8s_backend, T0) >= 1
    lists = [r for r in double.requests if r.method == "GET" and r.path == "/api/v1/nodes"]
    assert lists and lists[-1].query.get("labelSelector") == "pool=train"
    with app.app_context():
        group = db.session.get(ResourceGroup, world["group"]["id"])
        assert [(n["name"], n["schedulable"], n["why"]) for n in group.discovered_nodes] == [
            ("a", True, None), ("b", False, "cordoned"), ("c", False, "not ready")]
        assert group_state.nodes_of(group) == [Node("a", 8, cpu=4.0, memory=16.0 * 2**30)]
        assert (group.gpus, group.cpu_millicores, group.memory_bytes) == (8, 4000, 16 * 2**30)  # its totals
    # Not due again within the interval: the API server is not asked.
    before = len(double.requests)
    discover(app, k8s_backend, T0 + dt.timedelta(seconds=30))
    assert len([r for r in double.requests[before:] if r.path == "/api/v1/nodes"]) == 0

    status = admin.get(f"/api/v1/resource_group/{world['group']['id']}/status").get_json()
    Shapes(admin.get("/api/v1/_openapi").get_json()).component("ResourceGroupStatus", status)
    assert status["discovery"]["enabled"] and status["discovery"]["error"] is None
    assert [n["name"] for n in status["discovery"]["nodes"]] == ["a", "b", "c"]
    assert [n["name"] for n in status["capacity"]["nodes"]] == ["a"]  # what admission uses


def test_a_failed_listing_keeps_the_last_nodes_and_says_why(app, world, double, k8s_backend):
    double.add_node("a", cpu="4", labels={"pool": "train"})
    discover(app, k8s_backend, T0)
    # The worker's account may not list nodes (install/components/node-discovery not applied).
    double.faults.add("GET", r"^/api/v1/nodes$", times=10, status=403)
    discover(app, k8s_backend, T0 + dt.timedelta(minutes=2))
    with app.app_context():
        group = db.session.get(ResourceGroup, world["group"]["id"])
        assert [n["name"] for n in group.discovered_nodes] == ["a"]
        assert "list nodes of resource group" in group.discovery_error and "403" in group.discovery_error
        assert group.discovered_at == T0 or group.discovered_at.replace(tzinfo=dt.UTC) == T0


def reconcile(app, run_id):
    from myapp.pipelines.controller import RunController

    backend = FakeBackend(script={"train": ["hang"]})
    with app.app_context():
        RunController(lambda task: backend).reconcile(run_id)


def attempt(app, run_id):
    with app.app_context():
        return db.session.query(TaskRun).filter_by(pipeline_run_id=run_id).one()


def test_a_task_waits_while_every_node_is_cordoned_and_starts_on_one_back(app, user, world, double, k8s_backend):
    double.add_node("a", cpu="2", memory="8Gi", labels={"pool": "train"}, unschedulable=True)
    discover(app, k8s_backend, T0)
    run_id = created(user.post("/api/v1/pipeline_run/", json={"pipeline_id": world["pipeline"]["id"]}))["id"]
    reconcile(app, run_id)
    waiting = attempt(app, run_id)
    assert (waiting.state.value, waiting.reason) == ("queued", gate.NO_NODE)

    double.store.patch(double_nodes(), "", "a", {"spec": {"unschedulable": False}})  # uncordoned
    discover(app, k8s_backend, T0 + dt.timedelta(minutes=2))
    reconcile(app, run_id)
    started = attempt(app, run_id)
    assert started.state.value != "queued" and started.placement == {"a": 0}


def double_nodes():
    from tests.k8s_double.registry import by_kind

    return by_kind("v1", "Node")


def test_only_a_kubernetes_group_discovers_its_nodes(admin):
    local = created(admin.post("/api/v1/cluster/", json={"name": unique("local"), "kind": "local"}))
    answer = admin.post("/api/v1/resource_group/", json={
        "name": unique("rg"), "cluster_id": local["id"], "discover_nodes": True})
    assert answer.status_code == 400 and "discover_nodes" in str(answer.get_json())


def test_the_workers_tick_discovers_and_says_why_it_could_not(app, admin):
    """The hook in myapp.tick: a group on a cluster without a usable kubeconfig context gets the reason."""
    from myapp import tasks

    cluster = created(admin.post("/api/v1/cluster/", json={
        "name": unique("k8s"), "kind": "kubernetes", "kube_context": unique("no-such-context")}))
    group = created(admin.post("/api/v1/resource_group/", json={
        "name": unique("rg"), "cluster_id": cluster["id"], "discover_nodes": True, "gpus": 8}))
    with app.app_context():
        tasks._discover_nodes(app)
        stored = db.session.get(ResourceGroup, group["id"])
        assert stored.discovered_at is None and cluster["name"] in (stored.discovery_error or "")
        assert group_state.nodes_of(stored) == [Node(group["name"], 8)]  # its definition until discovered
