"""A notebook's state on Kubernetes: its Notebook CR and its pod, read as pulling, waiting, running or failed.

Jobs keep a pod's trouble as the reason of a pending attempt (the controller's timeouts decide); a
notebook is someone waiting in front of a browser, so what cannot pass by itself (an image that does
not exist, a container that crash-loops or cannot be configured) fails it at once with the pod's reason.
A pod still creating its container is pulling the image, and so is one whose pull just failed
(ErrImagePull: the kubelet tries again, then reports ImagePullBackOff, which fails it): the reason
starts with `PULLING_IMAGE`, which the lifecycle shows as `pulling`.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..base import PULLING_IMAGE, JobState, Status
from . import adapters

Obj = Mapping[str, Any]
# Waiting reasons that do not pass by themselves. ErrImagePull alone is not here: the kubelet's
# first failed pull may be a registry hiccup; ImagePullBackOff follows when it keeps failing.
FATAL_WAITING = frozenset({"ImagePullBackOff", "InvalidImageName", "CreateContainerConfigError",
                           "CreateContainerError", "RunContainerError", "CrashLoopBackOff"})
PULLING = frozenset({"ContainerCreating", "PodInitializing"})


def url(obj: Obj) -> str | None:
    """Where the notebook answers inside the cluster: its Service (same name, port 80) and its
    NB_PREFIX, read from the CR itself. Browsers reach the same prefix through the gateway."""
    meta = obj.get("metadata") or {}
    for container in ((((obj.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []):
        for var in container.get("env") or []:
            if var.get("name") == "NB_PREFIX" and var.get("value"):
                prefix = var["value"].rstrip("/") + "/"
                return f"http://{meta.get('name')}.{meta.get('namespace')}.svc.cluster.local{prefix}"
    return None


def _statuses(pod: Obj) -> list[Obj]:
    status = pod.get("status") or {}
    return [s for s in [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]
            if s.get("name") not in adapters.SIDECARS]


def _fatal(pods: list[Obj]) -> str | None:
    for pod in pods:
        if (pod.get("status") or {}).get("reason") == "Evicted":
            return f"Evicted: {(pod.get('status') or {}).get('message') or ''}".rstrip(": ")
        for container in _statuses(pod):
            waiting = (container.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") in FATAL_WAITING:
                message = waiting.get("message") or ""
                last = ((container.get("lastState") or {}).get("terminated") or {})
                cause = f" (last exit: {last.get('reason')}, code {last.get('exitCode')})" if last.get("reason") else ""
                cause += adapters.pull_secret_hint(pod, waiting["reason"])
                return f"{waiting['reason']}: {message}{cause}" if message else f"{waiting['reason']}{cause}"
    return None


def _pull_error(pods: list[Obj]) -> str | None:
    for pod in pods:
        for container in _statuses(pod):
            waiting = (container.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") == "ErrImagePull":
                message = f": {waiting['message']}" if waiting.get("message") else ""
                return f"ErrImagePull{message}{adapters.pull_secret_hint(pod, 'ErrImagePull')}"
    return None


def _pulling(pods: list[Obj]) -> bool:
    for pod in pods:
        for container in _statuses(pod):
            waiting = (container.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") in PULLING and not container.get("imageID"):
                return True
    return False


def _image(obj: Obj) -> str:
    containers = (((obj.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
    return str(containers[0].get("image", "")) if containers else ""


def status(obj: Obj, pods: Iterable[Obj]) -> Status:
    """The notebook's Status from its CR (``readyReplicas``, the controller's ``containerState``)
    and its pods. Running wins: a ready notebook is running whatever an old pod says."""
    pods = list(pods)
    base = adapters.workload_status(obj)
    where = url(obj)
    if base.state in (JobState.CANCELLED, JobState.RUNNING):
        return Status(base.state, base.reason, base.replicas, None, where)
    fatal = _fatal(pods)
    if fatal is None:  # the controller's own view of the container, when no pod is listed (yet)
        state = (obj.get("status") or {}).get("containerState") or {}
        waiting = state.get("waiting")
        if isinstance(waiting, Mapping) and waiting.get("reason") in FATAL_WAITING:
            fatal = base.reason
    if fatal:
        return Status(JobState.FAILED, fatal, base.replicas, adapters.exit_code(pods), where)
    problems = adapters.pod_problems(pods)
    unschedulable = [text for category, text in problems if category == "unschedulable"]
    pull_error = _pull_error(pods)
    if unschedulable:
        reason, state = "waiting for resources: " + "; ".join(unschedulable), JobState.WAITING
    elif pull_error:  # the kubelet tries again, then backs off (fatal above)
        reason, state = f"{PULLING_IMAGE} {_image(obj)}: {pull_error} (trying again)", JobState.PENDING
    elif problems:
        reason, state = "; ".join(text for _, text in problems), JobState.PENDING
    elif _pulling(pods):
        reason, state = f"{PULLING_IMAGE} {_image(obj)}", JobState.PENDING
    else:
        reason = base.reason or ("starting JupyterLab" if pods else "waiting for the notebook controller")
        state = JobState.PENDING
    return Status(state, reason, base.replicas, None, where)
