"""A resource group's capacity discovered on Kubernetes: its cluster's Nodes, read with the official client.

A group with `discover_nodes` names its nodes by its `node_selector` (a label selector; empty: every
node of the cluster). `discover` lists them and reads each one's allocatable `nvidia.com/gpu` (or
`amd.com/gpu`), cpu and memory and whether new pods may land there: a cordoned node
(`spec.unschedulable`), one whose Ready condition is not True, or one with a NoSchedule/NoExecute taint the
group does not tolerate is kept in the list (the admin page shows it) but marked not schedulable, and
admission (`myapp.admission.group_state.nodes_of`) uses only the schedulable ones. `discover_due` is the worker's
tick: every group due for a look, each at most every MYAPP_NODE_DISCOVERY_SECONDS. A failed listing keeps
the last good list and records why (`discovery_error`), so a flaky API server does not empty a group.

Needs get/list on nodes for the worker's account: install/components/node-discovery (opt-in).
"""
from __future__ import annotations

import datetime as dt
import json
import logging
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import sqlalchemy as sa
from kubernetes.client import CoreV1Api

from ...extensions import db
from ...models import ClusterKind, ResourceGroup
from ...rendering.quantity import parse_quantity
from .. import BackendError
from . import retry as retry_mod

log = logging.getLogger(__name__)

GPU_KEYS = ("nvidia.com/gpu", "amd.com/gpu")
DEFAULT_INTERVAL = 60.0  # seconds between two listings of a group's nodes
_tried: dict[int, float] = {}  # group id -> when this process last listed its nodes (success or not)


def selector(node_selector: Mapping[str, str]) -> str:
    """The label selector of a node selector: `k=v,k2=v2` (what `nodeSelector` on the pods asks)."""
    return ",".join(f"{key}={value}" for key, value in sorted(node_selector.items()))


def _tolerated(taint: Mapping[str, Any], tolerations: Iterable[Mapping[str, Any]]) -> bool:
    for t in tolerations:
        if t.get("effect") and t.get("effect") != taint.get("effect"):
            continue
        if t.get("operator") == "Exists" and (not t.get("key") or t.get("key") == taint.get("key")):
            return True
        if t.get("key") == taint.get("key") and (t.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def node_capacity(node: Mapping[str, Any], tolerations: Iterable[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """One Node object as a group's node: allocatable amounts in canonical units, and why pods may not
    land there now (`why`: None when schedulable)."""
    meta, spec, status = node.get("metadata") or {}, node.get("spec") or {}, node.get("status") or {}
    allocatable = status.get("allocatable") or {}
    gpus = sum(int(parse_quantity(allocatable[k])) for k in GPU_KEYS if k in allocatable)
    cpu = int(parse_quantity(allocatable.get("cpu", "0")) * 1000)
    memory = int(parse_quantity(allocatable.get("memory", "0")))
    ready = next((c.get("status") for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    tolerations = list(tolerations)
    blocking = [t for t in spec.get("taints") or [] if t.get("effect") in ("NoSchedule", "NoExecute")
                and not _tolerated(t, tolerations)]
    why = None
    if spec.get("unschedulable"):
        why = "cordoned"
    elif ready != "True":
        why = "not ready" if ready is not None else "no Ready condition"
    elif blocking:
        why = f"tainted {blocking[0].get('key')}:{blocking[0].get('effect')}"
    return {"name": meta.get("name", ""), "gpus": gpus, "cpu_millicores": cpu, "memory_bytes": memory,
            "schedulable": why is None, "why": why}


def list_nodes(core: CoreV1Api, label_selector: str, timeout: tuple[float, float]) -> list[dict[str, Any]]:
    """The Node objects matching the selector, as plain JSON (one request; the caller retries)."""
    response: Any = core.list_node(label_selector=label_selector or None, _preload_content=False,
                                   _request_timeout=timeout)  # raw JSON: no model objects to convert back
    return list(json.loads(response.data).get("items") or [])


def discover(group: ResourceGroup, backend: Any, now: dt.datetime) -> None:
    """List the group's nodes on its cluster (`backend`: its KubernetesBackend) and store them on the group;
    on failure keep the last list and record why. The caller commits."""
    try:
        items = retry_mod.call(f"list nodes of resource group {group.name}",
                               lambda: list_nodes(backend.api.core, selector(group.node_selector or {}),
                                                  backend.retry.request_timeout),
                               backend.retry, backend.sleep)
    except BackendError as exc:
        group.discovery_error = str(exc)[:1024]
        log.warning("resource group %s: node discovery failed: %s", group.name, exc)
        return
    found = sorted((node_capacity(n, group.tolerations or ()) for n in items), key=lambda n: n["name"])
    changed = found != (group.discovered_nodes or [])
    group.discovered_nodes = found
    group.discovered_at = now
    group.discovery_error = None
    # The totals are the schedulable nodes' sums: one truth for admission, the usage report and the Volcano
    # Queue's capability (as for a group whose nodes are listed by hand).
    usable = [n for n in found if n["schedulable"]]
    group.gpus = sum(n["gpus"] for n in usable)
    group.cpu_millicores = sum(n["cpu_millicores"] for n in usable)
    group.memory_bytes = sum(n["memory_bytes"] for n in usable)
    if changed:  # more or less room: what waits in the group is decided again soon
        from ...pipelines import scheduling

        scheduling.wake_unfinished()


def discover_due(now: dt.datetime, backend_for_group: Callable[[int], Any], interval: float = DEFAULT_INTERVAL) -> int:
    """The tick: discover the nodes of every group that asks for it and was not looked at for `interval`
    seconds (on an enabled Kubernetes cluster). Each group is committed on its own, so one cluster that
    does not answer does not hold back the others. How many groups were looked at."""
    from ...models import Cluster

    due = now - dt.timedelta(seconds=interval)
    ids = db.session.scalars(
        sa.select(ResourceGroup.id).join(Cluster, Cluster.id == ResourceGroup.cluster_id)
        .where(ResourceGroup.discover_nodes.is_(True), Cluster.kind == ClusterKind.KUBERNETES,
               Cluster.enabled.is_(True),
               sa.or_(ResourceGroup.discovered_at.is_(None), ResourceGroup.discovered_at <= due))
        .order_by(ResourceGroup.id)).all()
    ids = [i for i in ids if _tried.get(i, -math.inf) <= now.timestamp() - interval]  # a failing one: once a while
    for group_id in ids:
        _tried[group_id] = now.timestamp()
        group = db.session.get(ResourceGroup, group_id)
        if group is None:
            continue
        try:
            discover(group, backend_for_group(group_id), now)
        except BackendError as exc:  # no client for the cluster (its kubeconfig context is gone)
            group.discovery_error = str(exc)[:1024]
        db.session.commit()
    return len(ids)
