"""Admission rules of the operators' webhooks/controllers that CRD schemas do not carry.

Sources: kubeflow/training-operator v1 (pkg/webhooks/*, ValidateV1MpiJobSpec), Volcano's
job admission webhook, the notebook-controller validation patch, Istio route validation.
Each check returns ``(path, reason)`` pairs; validate.py turns them into ManifestErrors.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .names import is_dns1035_label, is_dns1123_label
from .pod import REPLICA_SPECS

Problem = tuple[str, str]

RESTART_POLICIES = ("Always", "OnFailure", "Never", "ExitCode")
CLEAN_POD_POLICIES = ("All", "Running", "None")
DEFAULT_CONTAINER = {"PyTorchJob": "pytorch", "TFJob": "tensorflow", "XGBoostJob": "xgboost", "MPIJob": "mpi"}
REPLICA_TYPES = {
    "PyTorchJob": ("Master", "Worker"),
    "XGBoostJob": ("Master", "Worker"),
    "TFJob": ("Chief", "Master", "PS", "Worker", "Evaluator"),
    "MPIJob": ("Launcher", "Worker"),
}
# Exactly one replica of this type must exist (PyTorch/XGBoost Master, MPI Launcher).
SINGLE_LEADER = {"PyTorchJob": "Master", "XGBoostJob": "Master", "MPIJob": "Launcher"}
VOLCANO_EVENTS = ("*", "PodFailed", "PodEvicted", "Unknown", "TaskCompleted", "TaskFailed")
VOLCANO_ACTIONS = ("AbortJob", "RestartJob", "RestartTask", "RestartPod", "TerminateJob",
                   "CompleteJob", "ResumeJob")


def _containers(template: Mapping[str, Any] | None) -> list[Any]:
    return ((template or {}).get("spec") or {}).get("containers") or []


def training_job(obj: Mapping[str, Any]) -> Iterator[Problem]:
    kind, spec = obj["kind"], obj.get("spec") or {}
    field = REPLICA_SPECS[kind]
    if not is_dns1035_label(obj["metadata"].get("name")):
        yield "metadata.name", "must be a DNS-1035 label (lower case, starts with a letter, <= 63 chars)"
    run_policy = spec.get("runPolicy") or {}
    yield from _run_policy(run_policy, "spec.runPolicy")
    if kind == "MPIJob" and "cleanPodPolicy" in spec and spec["cleanPodPolicy"] not in CLEAN_POD_POLICIES:
        yield "spec.cleanPodPolicy", f"must be one of {CLEAN_POD_POLICIES}"
    replica_specs = spec.get(field)
    if not replica_specs:
        yield f"spec.{field}", "must be specified"
        return
    wanted = (spec.get("mainContainer") or "mpi") if kind == "MPIJob" else DEFAULT_CONTAINER[kind]
    for rtype, rspec in replica_specs.items():
        path = f"spec.{field}.{rtype}"
        if rtype not in REPLICA_TYPES[kind]:
            yield path, f"replica type {rtype!r} not supported by {kind} (allowed: {REPLICA_TYPES[kind]})"
        rspec = rspec or {}
        if rspec.get("restartPolicy", "Never") not in RESTART_POLICIES:
            yield f"{path}.restartPolicy", f"must be one of {RESTART_POLICIES}"
        replicas = rspec.get("replicas", 1)
        if rtype == SINGLE_LEADER.get(kind) or (kind == "TFJob" and rtype in ("Chief", "Master")):
            if replicas != 1:
                yield f"{path}.replicas", f"{rtype} must have exactly 1 replica"
        elif kind == "PyTorchJob" and replicas < 1:
            yield f"{path}.replicas", "must be at least 1"
        containers = _containers(rspec.get("template"))
        if not containers:
            yield f"{path}.template.spec.containers", "must be specified"
        for index, container in enumerate(containers):
            if not container.get("image"):
                yield f"{path}.template.spec.containers[{index}].image", "must be specified"
            if not container.get("name"):
                yield f"{path}.template.spec.containers[{index}].name", "must be specified"
        if containers and not any(c.get("name") == wanted for c in containers):
            yield f"{path}.template.spec.containers", f"must have a container named {wanted!r}"
    leader = SINGLE_LEADER.get(kind)
    if leader and leader not in replica_specs:
        yield f"spec.{field}.{leader}", f"{kind} needs exactly one {leader}"
    if kind == "TFJob" and sum(t in replica_specs for t in ("Chief", "Master")) > 1:
        yield f"spec.{field}", "must not have more than 1 Chief or Master role"


def _run_policy(policy: Mapping[str, Any], path: str) -> Iterator[Problem]:
    if "cleanPodPolicy" in policy and policy["cleanPodPolicy"] not in CLEAN_POD_POLICIES:
        yield f"{path}.cleanPodPolicy", f"must be one of {CLEAN_POD_POLICIES}"
    for key in ("backoffLimit", "activeDeadlineSeconds", "ttlSecondsAfterFinished"):
        if isinstance(policy.get(key), int) and policy[key] < 0:
            yield f"{path}.{key}", "must be >= 0"


def volcano_job(obj: Mapping[str, Any]) -> Iterator[Problem]:
    spec = obj.get("spec") or {}
    tasks = spec.get("tasks") or []
    if not tasks:
        yield "spec.tasks", "at least one task is required"
    names: set[str] = set()
    total = 0
    for index, task in enumerate(tasks):
        path = f"spec.tasks[{index}]"
        name, replicas = task.get("name", ""), task.get("replicas", 0)
        if not is_dns1123_label(name):
            yield f"{path}.name", "must be a DNS-1123 label"
        elif name in names:
            yield f"{path}.name", f"duplicate task name {name!r}"
        names.add(name)
        if len(f"{obj['metadata'].get('name', '')}-{name}-{max(replicas - 1, 0)}") > 63:
            yield f"{path}.name", "pod names <job>-<task>-<index> would exceed 63 characters"
        total += replicas
        if task.get("minAvailable", 0) > replicas:
            yield f"{path}.minAvailable", "must not exceed replicas"
        if not _containers(task.get("template")):
            yield f"{path}.template.spec.containers", "must be specified"
        restart = ((task.get("template") or {}).get("spec") or {}).get("restartPolicy", "Never")
        if restart not in ("Never", "OnFailure"):
            yield f"{path}.template.spec.restartPolicy", "must be Never or OnFailure"
        yield from _volcano_policies(task.get("policies") or [], f"{path}.policies")
    if spec.get("minAvailable", 0) > total:
        yield "spec.minAvailable", f"must not exceed the total replicas ({total})"
    yield from _volcano_policies(spec.get("policies") or [], "spec.policies")


def _volcano_policies(policies: list[Any], path: str) -> Iterator[Problem]:
    for index, policy in enumerate(policies):
        if policy.get("event") and policy["event"] not in VOLCANO_EVENTS:
            yield f"{path}[{index}].event", f"must be one of {VOLCANO_EVENTS}"
        if policy.get("action") and policy["action"] not in VOLCANO_ACTIONS:
            yield f"{path}[{index}].action", f"must be one of {VOLCANO_ACTIONS}"


def notebook(obj: Mapping[str, Any]) -> Iterator[Problem]:
    # notebook-controller validation patch: >= 1 container, each with name and image.
    containers = _containers((obj.get("spec") or {}).get("template"))
    if not containers:
        yield "spec.template.spec.containers", "at least one container is required"
    for index, container in enumerate(containers):
        for key in ("name", "image"):
            if not container.get(key):
                yield f"spec.template.spec.containers[{index}].{key}", "is required"


def virtual_service(obj: Mapping[str, Any]) -> Iterator[Problem]:
    spec = obj.get("spec") or {}
    if not spec.get("hosts"):
        yield "spec.hosts", "at least one host is required"
    for index, route in enumerate(spec.get("http") or []):
        destinations = route.get("route") or []
        if len(destinations) > 1 and sum(d.get("weight", 0) for d in destinations) != 100:
            yield f"spec.http[{index}].route", "weights of several destinations must add up to 100"


def authorization_policy(obj: Mapping[str, Any]) -> Iterator[Problem]:
    # Istio's validation: a CUSTOM action names its ext-authz provider, other actions name none.
    spec = obj.get("spec") or {}
    custom = spec.get("action") == "CUSTOM"
    if custom and not (spec.get("provider") or {}).get("name"):
        yield "spec.provider.name", "a CUSTOM action needs the ext-authz provider's name"
    if not custom and spec.get("provider"):
        yield "spec.provider", "only a CUSTOM action takes a provider"
    if custom and not spec.get("rules"):
        yield "spec.rules", "a CUSTOM policy without rules never applies"


RULES: dict[tuple[str, str], Callable[[Mapping[str, Any]], Iterator[Problem]]] = {
    **{("kubeflow.org/v1", kind): training_job for kind in REPLICA_SPECS},
    ("batch.volcano.sh/v1alpha1", "Job"): volcano_job,
    ("kubeflow.org/v1", "Notebook"): notebook,
    ("networking.istio.io/v1", "VirtualService"): virtual_service,
    ("security.istio.io/v1", "AuthorizationPolicy"): authorization_policy,
}


def check(obj: Mapping[str, Any]) -> Iterator[Problem]:
    rule = RULES.get((str(obj.get("apiVersion")), str(obj.get("kind"))))
    if rule:
        yield from rule(obj)
