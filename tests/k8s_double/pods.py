"""Pods as the kubelet would report them, and their container logs."""
from __future__ import annotations

import time
from collections.abc import Iterable
from typing import Any

from .store import now_rfc3339


def format_timestamp(ns: int) -> str:
    """Go's RFC3339Nano, as the kubelet writes it: trailing zeros of the fraction trimmed."""
    seconds, frac = divmod(ns, 1_000_000_000)
    text = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
    fraction = f"{frac:09d}".rstrip("0")
    return f"{text}.{fraction}Z" if fraction else f"{text}Z"


def running_state() -> dict[str, Any]:
    return {"running": {"startedAt": now_rfc3339()}}


def terminated_state(exit_code: int, reason: str | None = None, message: str | None = None) -> dict[str, Any]:
    state = {"exitCode": exit_code, "reason": reason or ("Completed" if exit_code == 0 else "Error"),
             "startedAt": now_rfc3339(), "finishedAt": now_rfc3339()}
    if message:
        state["message"] = message
    return {"terminated": state}


def make_pod(namespace: str, name: str, labels: dict[str, str] | None, *, containers: Iterable[str] = ("main",),
             phase: str = "Running", container_statuses: list[dict[str, Any]] | None = None,
             conditions: list[dict[str, Any]] | None = None, annotations: dict[str, str] | None = None,
             owner: dict[str, Any] | None = None, image: str = "busybox:1.36") -> dict[str, Any]:
    names = list(containers)
    if container_statuses is None:
        state = running_state() if phase == "Running" else (
            terminated_state(0 if phase == "Succeeded" else 1) if phase in ("Succeeded", "Failed")
            else {"waiting": {"reason": "ContainerCreating"}})
        container_statuses = [{"name": c, "image": image, "imageID": "", "ready": phase == "Running",
                               "restartCount": 0, "started": phase == "Running", "state": state}
                              for c in names]
    if conditions is None:
        conditions = [{"type": "PodScheduled", "status": "True"},
                      {"type": "Ready", "status": "True" if phase == "Running" else "False"}]
    meta: dict[str, Any] = {"name": name, "namespace": namespace, "labels": dict(labels or {})}
    if annotations:
        meta["annotations"] = dict(annotations)
    if owner:
        meta["ownerReferences"] = [owner]
    return {
        "apiVersion": "v1", "kind": "Pod", "metadata": meta,
        "spec": {"containers": [{"name": c, "image": image} for c in names], "restartPolicy": "Never"},
        "status": {"phase": phase, "conditions": conditions, "containerStatuses": container_statuses},
    }


def container_state(pod: dict[str, Any], container: str) -> dict[str, Any]:
    for status in (pod.get("status") or {}).get("containerStatuses") or []:
        if status.get("name") == container:
            return status.get("state") or {}
    return {}


def container_finished(pod: dict[str, Any] | None, container: str) -> bool:
    """The kubelet ends a follow stream when the container has terminated (or the pod is gone)."""
    if pod is None:
        return True
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return True
    return "terminated" in container_state(pod, container)


def waiting_reason(pod: dict[str, Any], container: str) -> str | None:
    """Why the container has no log yet (the API server answers 400), or None."""
    state = container_state(pod, container)
    if "waiting" in state:
        return state["waiting"].get("reason") or "ContainerCreating"
    if not state and (pod.get("status") or {}).get("phase", "Pending") == "Pending":
        return "ContainerCreating"
    return None
