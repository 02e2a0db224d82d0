"""A gang that loses a pod, through the API-server double: the Eviction subresource as the API server answers
it, a node going NotReady (its pods evicted as the node lifecycle controller does), and the backend reporting
either as a failure the machine caused (Status.cause, the lost node); the renderer keeps a restarted gang off
the nodes lost (node affinity from plain data), and the double's scheduler then never picks them."""
from __future__ import annotations

import dataclasses

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from myapp.backends import EVICTED, NODE_LOST, JobState
from myapp.rendering import render
from myapp.rendering.errors import ContextError
from tests.k8s_double.support import NS, manifests
from tests.rendering.support import PLAIN_CTX, catalog


def _cluster(double) -> None:
    for name in ("node-a", "node-b", "node-c"):
        double.add_node(name, cpu="16", memory="64Gi")


def _running_gang(double, k8s_backend, **ctx):
    rendered = render(catalog()["pytorch-ddp"], {"workers": 1}, dataclasses.replace(PLAIN_CTX, **ctx))
    ref = k8s_backend.submit(rendered)
    double.set_status("kubeflow.org/v1", "PyTorchJob", NS, ref.primary.name,
                      {"conditions": [{"type": "Running", "status": "True"}]})
    placed = double.start_replicas(NS, ref.primary.name)
    assert k8s_backend.status(ref).state is JobState.RUNNING
    return ref, placed


def _evict(double, name, body_name=None):
    body = client.V1Eviction(metadata=client.V1ObjectMeta(name=body_name or name, namespace=NS))
    return client.CoreV1Api(double.api_client()).create_namespaced_pod_eviction(name, NS, body)


def test_an_evicted_pod_fails_the_gang_as_an_eviction_of_its_node(double, k8s_backend):
    _cluster(double)
    ref, placed = _running_gang(double, k8s_backend)
    master = next(p for p in placed if "master" in p)
    assert set(placed.values()) == {"node-a"}  # the first node that fits, as kube-scheduler would bind them

    _evict(double, master)
    pod = double.get("v1", "Pod", NS, master)
    assert pod["metadata"]["deletionTimestamp"]  # deleted gracefully: still there until its kubelet confirms
    assert {"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"}.items() <= next(
        c for c in pod["status"]["conditions"] if c["type"] == "DisruptionTarget").items()

    status = k8s_backend.status(ref)
    assert status.state is JobState.FAILED and status.cause == EVICTED and status.lost_nodes == ("node-a",)
    assert status.reason == "master-0 evicted from node node-a (EvictionByEvictionAPI)"


def test_the_eviction_subresource_answers_as_the_api_server(double):
    double.add_pod(NS, "lonely", {})
    with pytest.raises(ApiException) as missing:
        _evict(double, "nobody")
    assert missing.value.status == 404
    with pytest.raises(ApiException) as mismatch:
        _evict(double, "lonely", body_name="other")
    assert mismatch.value.status == 400 and "does not match" in mismatch.value.body
    assert double.get("v1", "Pod", NS, "lonely")["status"]["conditions"][-1]["type"] != "DisruptionTarget"


def test_a_node_not_ready_evicts_its_pods_and_is_not_chosen_again(double, k8s_backend):
    _cluster(double)
    ref, placed = _running_gang(double, k8s_backend)
    assert sorted(double.set_node_ready("node-a", False)) == sorted(placed)
    node = double.get("v1", "Node", "", "node-a")
    assert {"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}.items() <= node["spec"]["taints"][0].items()

    status = k8s_backend.status(ref)
    assert status.state is JobState.FAILED and status.cause == NODE_LOST and status.lost_nodes == ("node-a",)
    assert "master-0 lost with its node from node node-a (DeletionByTaintManager)" in status.reason

    k8s_backend.cancel(ref)
    double.set_node_ready("node-a", True)  # back, but the restarted gang keeps off it all the same
    restarted, again = _running_gang(double, k8s_backend, attempt=2, avoid_nodes=("node-a",))
    assert set(again.values()) == {"node-b"}
    spec = double.get("kubeflow.org/v1", "PyTorchJob", NS, restarted.primary.name)["spec"]
    for replica in spec["pytorchReplicaSpecs"].values():
        terms = replica["template"]["spec"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        assert terms == [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["node-a"]}]}]


def test_nodes_to_avoid_are_checked_before_rendering():
    for bad in (["node-a"], ("Node_A",), tuple(f"n{i}" for i in range(65))):
        with pytest.raises(ContextError) as refused:
            render(catalog()["pytorch-ddp"], {"workers": 1}, dataclasses.replace(PLAIN_CTX, avoid_nodes=bad))
        assert refused.value.field == "avoid_nodes"
    assert manifests("pytorch-ddp") == render(catalog()["pytorch-ddp"], {}, PLAIN_CTX)  # none: no affinity added


def test_a_model_servers_evicted_pod_is_its_deployments_to_replace():
    from myapp.backends.kubernetes import adapters

    ready = {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1}
    pod = {"metadata": {"name": "web-1"}, "spec": {"nodeName": "node-a"},
           "status": {"phase": "Failed", "reason": "Evicted", "message": "The node was low on resource: memory."}}
    served = adapters.combine(adapters.deployment_status({"apiVersion": "apps/v1", "kind": "Deployment",
                                                          "spec": {"replicas": 1}, "status": ready}),
                              [pod], kind="Deployment")
    assert served.state is JobState.RUNNING and served.cause is None
    trained = adapters.combine(adapters.training_job_status({"status": {"conditions": [
        {"type": "Running", "status": "True"}]}}), [pod], kind="PyTorchJob")
    assert (trained.state, trained.cause, trained.lost_nodes) == (JobState.FAILED, EVICTED, ("node-a",))
    assert trained.reason == "web-1 evicted from node node-a (Evicted)"
