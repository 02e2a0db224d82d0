"""What takes pods away in a cluster, as the double plays it: the Eviction subresource as the API server
answers it, the node lifecycle controller's eviction of a NotReady node's pods, and the scheduler's choice of a
node (Ready, not cordoned, no NoExecute/NoSchedule taint the pod does not tolerate, its nodeSelector and required
node affinity), which a test uses in place of the training operator and kube-scheduler (``start_replicas``).

An evicted pod, like a pod of a lost node, is deleted gracefully: it keeps its place with
``metadata.deletionTimestamp`` and the ``DisruptionTarget`` condition saying why (Kubernetes 1.26+), until
its kubelet confirms (``ApiServerDouble.delete_pod``); a lost node's kubelet never does.
"""
from __future__ import annotations

import copy
import datetime as dt
from typing import TYPE_CHECKING, Any

from . import registry
from .store import ApiError, now_rfc3339

if TYPE_CHECKING:
    from .double import ApiServerDouble

PODS = registry.by_kind("v1", "Pod")
NODES = registry.by_kind("v1", "Node")
HOSTNAME = "kubernetes.io/hostname"
NOT_READY_TAINT, UNREACHABLE_TAINT = "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"
EVICTION_VERSIONS = ("policy/v1", "policy/v1beta1")
REPLICA_TYPE, REPLICA_INDEX = "training.kubeflow.org/replica-type", "training.kubeflow.org/replica-index"


def evict(double: ApiServerDouble, namespace: str, name: str, body: Any) -> tuple[int, dict[str, Any]]:
    """``POST /api/v1/namespaces/{ns}/pods/{name}/eviction``: 201 and a Success Status, the pod marked
    ``DisruptionTarget`` (EvictionByEvictionAPI) and deleted gracefully; 404 for no such pod, 400 for a body
    that is no Eviction of it. (No PodDisruptionBudget exists in the double: nothing answers 429.)"""
    if not isinstance(body, dict) or body.get("kind", "Eviction") != "Eviction" or \
            body.get("apiVersion", "policy/v1") not in EVICTION_VERSIONS:  # left out: the URL's kind
        raise ApiError(400, "BadRequest", "the body must be a policy/v1 Eviction")
    if (body.get("metadata") or {}).get("name") != name:
        raise ApiError(400, "BadRequest", "name in URL does not match name in Eviction object")
    pod = double.store.get(PODS, namespace, name)  # 404 if gone
    if not (pod.get("metadata") or {}).get("deletionTimestamp"):
        _disrupt(double, pod, "EvictionByEvictionAPI", "Eviction API: evicting", _grace(body, pod))
    return 201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def set_node_ready(double: ApiServerDouble, name: str, ready: bool | None) -> list[str]:
    """The node's Ready condition (None: Unknown, the kubelet stopped reporting) as the node lifecycle
    controller keeps it: a node not Ready gets the NoExecute taint, and its pods that do not tolerate it are
    marked not ready and deleted (DeletionByTaintManager; at once, as if their tolerationSeconds were over).
    Ready again: the taints go. Returns the pods it evicted."""
    with double.store.lock:
        node = double.store.get(NODES, "", name)
        status = "True" if ready else ("Unknown" if ready is None else "False")
        conditions = [c for c in (node["status"].get("conditions") or []) if c.get("type") != "Ready"]
        conditions.append({"type": "Ready", "status": status, "lastTransitionTime": now_rfc3339(),
                           "reason": "KubeletReady" if ready else "NodeStatusUnknown" if ready is None
                           else "KubeletNotReady"})
        double.store.patch(NODES, "", name, {"status": {"conditions": conditions}}, subresource="status")
        key = UNREACHABLE_TAINT if ready is None else NOT_READY_TAINT
        taints = [t for t in (node.get("spec") or {}).get("taints") or []
                  if t.get("key") not in (NOT_READY_TAINT, UNREACHABLE_TAINT)]
        if not ready:
            taints.append({"key": key, "effect": "NoExecute", "timeAdded": now_rfc3339()})
        double.store.patch(NODES, "", name, {"spec": {"taints": taints or None}})
        if ready:
            return []
        evicted = []
        for pod in double.store.list(PODS, None):
            if (pod.get("spec") or {}).get("nodeName") != name or (pod.get("metadata") or {}).get("deletionTimestamp"):
                continue
            if _tolerates_forever(pod, key):
                continue
            _disrupt(double, pod, "DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint",
                     _grace(None, pod), not_ready=True)
            evicted.append(pod["metadata"]["name"])
        return evicted


def schedule(double: ApiServerDouble, pod_spec: dict[str, Any]) -> str | None:
    """The node kube-scheduler would bind a pod of this spec to (the first fitting one by name), or None."""
    for node in sorted(double.store.list(NODES, None), key=lambda n: n["metadata"]["name"]):
        if _fits(node, pod_spec):
            return str(node["metadata"]["name"])
    return None


def start_replicas(double: ApiServerDouble, namespace: str, job_name: str) -> dict[str, str]:
    """The training operator's and the scheduler's part for a stored PyTorchJob: a running pod per replica
    from its template (labels, affinity), bound to the node ``schedule`` picks. Returns {pod: node}."""
    job = double.get("kubeflow.org/v1", "PyTorchJob", namespace, job_name)
    assert job is not None, f"no PyTorchJob {namespace}/{job_name}"
    placed = {}
    for rtype, replica in job["spec"]["pytorchReplicaSpecs"].items():
        template = replica["template"]
        for index in range(replica.get("replicas", 1)):
            name = f"{job_name}-{rtype.lower()}-{index}"
            spec = copy.deepcopy(template["spec"])
            node = schedule(double, spec)
            assert node is not None, f"no node fits {name}"
            labels = {**(template.get("metadata") or {}).get("labels", {}), REPLICA_TYPE: rtype.lower(),
                      REPLICA_INDEX: str(index)}
            pod = double.add_pod(namespace, name, labels, owner=("kubeflow.org/v1", "PyTorchJob", job_name),
                                 containers=[c["name"] for c in spec["containers"]])
            double.store.patch(PODS, namespace, name, {"spec": {**spec, "nodeName": node}})
            placed[pod["metadata"]["name"]] = node
    return placed


def _disrupt(double: ApiServerDouble, pod: dict[str, Any], reason: str, message: str, grace: int,
             not_ready: bool = False) -> None:
    namespace, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    conditions = [c for c in (pod.get("status") or {}).get("conditions") or []
                  if c.get("type") != "DisruptionTarget" and not (not_ready and c.get("type") == "Ready")]
    conditions.append({"type": "DisruptionTarget", "status": "True", "reason": reason, "message": message,
                       "lastTransitionTime": now_rfc3339()})
    if not_ready:
        conditions.append({"type": "Ready", "status": "False", "lastTransitionTime": now_rfc3339()})
    double.store.patch(PODS, namespace, name, {"status": {"conditions": conditions}}, subresource="status")
    deadline = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=grace)
    double.store.patch(PODS, namespace, name, {"metadata": {
        "deletionTimestamp": deadline.strftime("%Y-%m-%dT%H:%M:%SZ"), "deletionGracePeriodSeconds": grace}})


def _grace(body: dict[str, Any] | None, pod: dict[str, Any]) -> int:
    options = (body or {}).get("deleteOptions") or {}
    value = options.get("gracePeriodSeconds")
    if isinstance(value, int):
        return value
    return int((pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30))


def _tolerates_forever(pod: dict[str, Any], key: str) -> bool:
    for toleration in (pod.get("spec") or {}).get("tolerations") or []:
        matches = toleration.get("key") == key or (not toleration.get("key") and toleration.get("operator") == "Exists")
        if matches and toleration.get("effect") in (None, "", "NoExecute") and "tolerationSeconds" not in toleration:
            return True
    return False


def _tolerated(taint: dict[str, Any], tolerations: list[dict[str, Any]]) -> bool:
    for toleration in tolerations:
        if toleration.get("effect") not in (None, "", taint.get("effect")):
            continue
        if toleration.get("operator") == "Exists" and toleration.get("key") in (None, "", taint.get("key")):
            return True
        if toleration.get("key") == taint.get("key") and toleration.get("value", "") == taint.get("value", ""):
            return True
    return False


def _fits(node: dict[str, Any], spec: dict[str, Any]) -> bool:
    meta, node_spec, status = node["metadata"], node.get("spec") or {}, node.get("status") or {}
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
    if not ready or node_spec.get("unschedulable"):
        return False
    tolerations = spec.get("tolerations") or []
    if any(t.get("effect") in ("NoSchedule", "NoExecute") and not _tolerated(t, tolerations)
           for t in node_spec.get("taints") or []):
        return False
    labels = {HOSTNAME: meta["name"], **(meta.get("labels") or {})}
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution")
    if required:  # the terms are ORed, a term's expressions ANDed
        return any(all(_matches(labels, e) for e in term.get("matchExpressions") or [])
                   for term in required.get("nodeSelectorTerms") or [])
    return True


def _matches(labels: dict[str, str], expression: dict[str, Any]) -> bool:
    key, operator, values = expression["key"], expression["operator"], expression.get("values") or []
    if operator == "In":
        return labels.get(key) in values
    if operator == "NotIn":
        return labels.get(key) not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    raise ApiError(422, "Invalid", f"node affinity operator {operator!r} is not supported by the double")
