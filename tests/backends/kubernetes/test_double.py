"""The API-server double itself, through the official client: Status bodies, resourceVersion,
selectors, merge patches, garbage collection, watches, log options, faults."""
from __future__ import annotations

import json
import time

import pytest
import urllib3
from kubernetes import client, watch

from tests.k8s_double import ApiServerDouble
from tests.k8s_double.support import NS, manifests
from tests.support import in_thread, wait_until

KF = ("kubeflow.org", "v1", NS, "pytorchjobs")


def raw(response):
    return json.loads(response.data)


@pytest.fixture
def apis(double):
    api_client = double.api_client()
    yield client.CustomObjectsApi(api_client), client.CoreV1Api(api_client), client.BatchV1Api(api_client)
    api_client.close()


def test_create_get_conflict_and_not_found_bodies(apis):
    custom, _, _ = apis
    job = manifests("pytorch-ddp")[0]
    created = custom.create_namespaced_custom_object(*KF, body=job)
    assert created["metadata"]["uid"] and created["metadata"]["resourceVersion"] == "1"
    assert "status" not in created
    with pytest.raises(client.ApiException) as conflict:
        custom.create_namespaced_custom_object(*KF, body=job)
    body = json.loads(conflict.value.body)
    assert (conflict.value.status, body["kind"], body["reason"], body["details"]["name"]) == (
        409, "Status", "AlreadyExists", "train-42-1")
    with pytest.raises(client.ApiException) as missing:
        custom.get_namespaced_custom_object(*KF, "nope")
    assert missing.value.status == 404 and json.loads(missing.value.body)["reason"] == "NotFound"


def test_invalid_objects_get_422_with_causes(apis):
    custom, _, _ = apis
    job = manifests("pytorch-ddp")[0]
    job["spec"]["runPolicy"]["cleanPodPolicyy"] = "All"
    job["metadata"]["labels"]["bad"] = "not ok!"
    with pytest.raises(client.ApiException) as invalid:
        custom.create_namespaced_custom_object(*KF, body=job)
    body = json.loads(invalid.value.body)
    assert invalid.value.status == 422 and body["reason"] == "Invalid"
    assert [c["field"] for c in body["details"]["causes"]] == ["spec.runPolicy"]
    assert "cleanPodPolicyy" in body["message"]


def test_replace_is_whole_keeps_server_metadata_and_status_and_checks_the_version(double, apis):
    custom, _, _ = apis
    queue = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "q"},
             "spec": {"weight": 2, "capability": {"cpu": "4", "memory": "1Gi"}}}
    queues = ("scheduling.volcano.sh", "v1beta1", "queues")
    created = custom.create_cluster_custom_object(*queues, body=queue)
    double.set_status("scheduling.volcano.sh/v1beta1", "Queue", "", "q", {"state": "Open"})
    stored = custom.get_cluster_custom_object(*queues, "q")
    replaced = custom.replace_cluster_custom_object(*queues, "q", body={
        **stored, "metadata": {**stored["metadata"], "labels": {"a": "b"}}, "spec": {"capability": {"cpu": "8"}}})
    assert replaced["spec"] == {"capability": {"cpu": "8"}}  # keys the body lacks are gone, nested ones too
    assert replaced["metadata"]["uid"] == created["metadata"]["uid"] and replaced["metadata"]["labels"] == {"a": "b"}
    assert replaced["status"] == {"state": "Open"}  # status is written only through /status
    with pytest.raises(client.ApiException) as stale:  # the resourceVersion read before the replace
        custom.replace_cluster_custom_object(*queues, "q", body=stored)
    assert stale.value.status == 409 and json.loads(stale.value.body)["reason"] == "Conflict"


def test_dry_run_stores_nothing(double, apis):
    _, _, batch = apis
    batch.create_namespaced_job(NS, body=manifests("python")[0], dry_run="All", _preload_content=False)
    assert double.store.objects == {} and double.store.rv == 0


def test_resource_version_selectors_patch_and_status(double, apis):
    custom, core, _ = apis
    for name, labels in (("a", {"app": "x", "tier": "1"}), ("b", {"app": "y"}), ("c", {"tier": "2"})):
        double.add_pod(NS, name, labels)
    def names(selector):
        return [p["metadata"]["name"] for p in raw(core.list_namespaced_pod(
            NS, label_selector=selector, _preload_content=False))["items"]]
    assert names("app=x") == ["a"]
    assert names("app!=x") == ["b", "c"]
    assert names("app in (x,y),tier") == ["a"]
    assert names("tier notin (1)") == ["b", "c"]
    assert names("!tier") == ["b"]
    custom.create_namespaced_custom_object(*KF, body=manifests("pytorch-ddp")[0])
    rv = int(custom.get_namespaced_custom_object(*KF, "train-42-1")["metadata"]["resourceVersion"])
    patched = custom.patch_namespaced_custom_object(*KF, "train-42-1", {"metadata": {"annotations": {"k": "v"}}},
                                                    _content_type="application/merge-patch+json")
    assert patched["metadata"]["annotations"] == {"k": "v"} and int(patched["metadata"]["resourceVersion"]) == rv + 1
    status = custom.patch_namespaced_custom_object_status(
        *KF, "train-42-1", {"status": {"conditions": [{"type": "Running", "status": "True"}]}},
        _content_type="application/merge-patch+json")
    assert status["status"]["conditions"][0]["type"] == "Running"
    # status is only written through /status; spec changes bump generation
    ignored = custom.patch_namespaced_custom_object(*KF, "train-42-1", {"status": {"x": 1}},
                                                    _content_type="application/merge-patch+json")
    assert "x" not in ignored["status"] and ignored["metadata"]["generation"] == 1


def test_deleting_an_owner_collects_its_pods_unless_orphaned(double, apis):
    custom, _, batch = apis
    custom.create_namespaced_custom_object(*KF, body=manifests("pytorch-ddp")[0])
    double.add_pod(NS, "train-42-1-master-0", owner=("kubeflow.org/v1", "PyTorchJob", "train-42-1"))
    custom.delete_namespaced_custom_object(*KF, "train-42-1", propagation_policy="Background")
    assert double.list("v1", "Pod", NS) == []
    batch.create_namespaced_job(NS, body=manifests("python")[0], _preload_content=False)
    double.add_pod(NS, "train-42-1-xyz", owner=("batch/v1", "Job", "train-42-1"))
    batch.delete_namespaced_job("train-42-1", NS, propagation_policy="Orphan", _preload_content=False)
    assert [p["metadata"]["name"] for p in double.list("v1", "Pod", NS)] == ["train-42-1-xyz"]
    assert [(d.kind, d.propagation) for d in double.deletions] == [("PyTorchJob", "Background"), ("Job", "Orphan")]


def test_watch_streams_added_modified_deleted_with_resource_versions(double, apis):
    custom, _, _ = apis
    custom.create_namespaced_custom_object(*KF, body=manifests("pytorch-ddp")[0])
    start = custom.list_namespaced_custom_object(*KF)["metadata"]["resourceVersion"]

    def events():
        out = []
        for event in watch.Watch().stream(custom.list_namespaced_custom_object, *KF, resource_version=start,
                                          timeout_seconds=5):
            out.append((event["type"], event["raw_object"]["metadata"]["resourceVersion"]))
            if event["type"] == "DELETED":
                return out
        return out
    thread, result = in_thread(events)
    wait_until(lambda: double.open_streams("watch") == 1, what="the watch to be open")
    double.set_status("kubeflow.org/v1", "PyTorchJob", NS, "train-42-1", {"conditions": []})
    custom.delete_namespaced_custom_object(*KF, "train-42-1")
    thread.join(5)
    assert result == [[("MODIFIED", str(int(start) + 1)), ("DELETED", str(int(start) + 2))]]


def test_watch_without_a_version_lists_first_and_can_be_cut(double, apis):
    _, core, _ = apis
    double.add_pod(NS, "a", {"app": "x"})
    double.inject_fault("GET", r"/pods$", drop_after=1)
    response = core.list_namespaced_pod(NS, watch=True, label_selector="app=x", _preload_content=False)
    lines = []
    with pytest.raises(urllib3.exceptions.ProtocolError):
        for chunk in response.stream():
            lines.append(json.loads(chunk))
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in lines] == [("ADDED", "a")]


def test_pod_log_options(double, apis):
    _, core, _ = apis
    double.add_pod(NS, "p", containers=("main", "sidecar"))
    now = time.time()
    double.append_log(NS, "p", "old", timestamp=now - 100)
    double.append_log(NS, "p", "new-1", "new-2", timestamp=now)
    def log(**kwargs):
        return core.read_namespaced_pod_log("p", NS, container="main", **kwargs)
    assert log() == "old\nnew-1\nnew-2\n"
    assert log(since_seconds=10) == "new-1\nnew-2\n"
    assert log(tail_lines=1) == "new-2\n"
    assert log(timestamps=True).splitlines()[0].endswith("Z old")
    with pytest.raises(client.ApiException, match="a container name must be specified"):
        core.read_namespaced_pod_log("p", NS)


def test_hang_fault_outlasts_the_client_timeout(double, apis):
    _, core, _ = apis
    fault = double.inject_fault("GET", r"/pods$", hang=5)
    started = time.monotonic()
    with pytest.raises(urllib3.exceptions.ReadTimeoutError):
        core.list_namespaced_pod(NS, _request_timeout=(1, 0.3), _preload_content=False)
    assert time.monotonic() - started < 2 and fault.exhausted
    assert raw(core.list_namespaced_pod(NS, _preload_content=False))["items"] == []


def test_stop_releases_open_streams():
    server = ApiServerDouble().start()
    server.add_pod(NS, "p")
    core = client.CoreV1Api(server.api_client())
    response = core.read_namespaced_pod_log("p", NS, follow=True, _preload_content=False)
    started = time.monotonic()
    server.stop()
    with pytest.raises(urllib3.exceptions.ProtocolError):
        list(response.stream())
    assert time.monotonic() - started < 3
