"""Status adapters: pure functions from API objects (plain dicts) to a backend Status.

One adapter per workload kind gives the state; ``combine`` then lets the PodGroup and the
attempt's pods explain it (waiting for resources, image pull errors, OOM kills, crash loops).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ...rendering.contract import CANCELLED_ANNOTATION
from ..base import EVICTED, NODE_LOST, JobState, Status

Obj = Mapping[str, Any]
TERMINAL = frozenset({JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED})
REPLICA_TYPE_LABEL = "training.kubeflow.org/replica-type"
REPLICA_INDEX_LABEL = "training.kubeflow.org/replica-index"
# Waiting reasons of a container that mean "this will not start by itself".
BAD_WAITING = ("ImagePullBackOff", "ErrImagePull", "InvalidImageName", "CrashLoopBackOff",
               "CreateContainerConfigError", "CreateContainerError", "RunContainerError")
PULL_FAILURES = frozenset({"ImagePullBackOff", "ErrImagePull"})
SIDECARS = frozenset({"istio-proxy", "istio-init"})
# Why a pod's DisruptionTarget condition says it goes (Kubernetes 1.26+), and the older pod status reasons:
# the node lifecycle controller's taint eviction of a NotReady / unreachable node's pods is a lost node, the
# rest (the Eviction API, the kubelet under node pressure or shutting down, scheduler preemption) evictions.
NODE_LOST_REASONS = frozenset({"DeletionByTaintManager", "NodeLost"})
DISRUPTION_STATUS_REASONS = frozenset({"Evicted", "NodeLost", "Terminated", "Shutdown", "NodeShutdown"})
# Workloads whose own controller replaces a lost pod and that hold no gang (model servers): a disruption is
# theirs to heal, not a failure of the attempt.
SELF_HEALING = frozenset({"Deployment", "InferenceService", "Notebook", "StatefulSet"})


def _true(conditions: Iterable[Obj] | None, kind: str) -> Obj | None:
    for condition in conditions or []:
        if condition.get("type") == kind and condition.get("status") == "True":
            return condition
    return None


def _why(condition: Obj | None) -> str:
    if not condition:
        return ""
    reason, message = condition.get("reason") or "", condition.get("message") or ""
    return f"{reason}: {message}" if reason and message and reason not in message else (message or reason)


def _counts(status: Obj, keys: Iterable[str]) -> dict[str, int]:
    return {k: int(status[k]) for k in keys if isinstance(status.get(k), int) and not isinstance(status.get(k), bool)}


# --- one adapter per workload kind ---------------------------------------------------------

def training_job_status(obj: Obj) -> Status:
    """TFJob / PyTorchJob / XGBoostJob / MPIJob: conditions, Failed > Succeeded > Running
    (the operator never clears Failed, so a later Succeeded does not win)."""
    status = obj.get("status") or {}
    conditions = status.get("conditions") or []
    replicas = {rtype: _counts(counts, ("active", "succeeded", "failed"))
                for rtype, counts in (status.get("replicaStatuses") or {}).items() if isinstance(counts, Mapping)}
    for kind, state in (("Failed", JobState.FAILED), ("Succeeded", JobState.SUCCEEDED)):
        condition = _true(conditions, kind)
        if condition:
            return Status(state, _why(condition) if state is JobState.FAILED else "", replicas)
    if _true(conditions, "Running") or _true(conditions, "Restarting"):
        return Status(JobState.RUNNING, _why(_true(conditions, "Restarting")), replicas)
    if _true(conditions, "Suspended"):
        return Status(JobState.WAITING, "suspended", replicas)
    return Status(JobState.PENDING, "", replicas)


def batch_job_status(obj: Obj) -> Status:
    """batch/v1 Job: Complete / Failed conditions, else the active / ready counts."""
    status = obj.get("status") or {}
    conditions = status.get("conditions") or []
    replicas = {"Job": _counts(status, ("active", "ready", "succeeded", "failed"))}
    failed = _true(conditions, "Failed") or _true(conditions, "FailureTarget")
    if failed:
        return Status(JobState.FAILED, _why(failed), replicas)
    if _true(conditions, "Complete") or _true(conditions, "SuccessCriteriaMet"):
        return Status(JobState.SUCCEEDED, "", replicas)
    if _true(conditions, "Suspended"):
        return Status(JobState.WAITING, "suspended", replicas)
    active, ready = status.get("active") or 0, status.get("ready")
    if active and (ready is None or ready > 0):
        return Status(JobState.RUNNING, "", replicas)
    return Status(JobState.PENDING, "", replicas)


def deployment_status(obj: Obj) -> Status:
    """apps/v1 Deployment: running once the desired replicas are available; Progressing=False
    (ProgressDeadlineExceeded) is a failure."""
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    desired = spec.get("replicas", 1)
    replicas = {"Deployment": {"desired": desired,
                               **_counts(status, ("replicas", "readyReplicas", "availableReplicas",
                                                  "updatedReplicas", "unavailableReplicas"))}}
    for condition in status.get("conditions") or []:
        if condition.get("type") == "Progressing" and condition.get("status") == "False":
            return Status(JobState.FAILED, _why(condition) or "ProgressDeadlineExceeded", replicas)
    if (status.get("availableReplicas") or 0) >= desired:
        return Status(JobState.RUNNING, "", replicas)
    return Status(JobState.PENDING, "", replicas)


def inference_service_status(obj: Obj) -> Status:
    """KServe InferenceService: running once its Ready condition is True (at its status URL); until then
    pending with the reason of the first condition that is False (e.g. the predictor's revision failing)."""
    status = obj.get("status") or {}
    conditions = status.get("conditions") or []
    if _true(conditions, "Ready"):
        return Status(JobState.RUNNING, "", url=status.get("url") or None)
    failing = next((c for c in conditions if c.get("status") == "False" and (c.get("reason") or c.get("message"))),
                   None)
    return Status(JobState.PENDING, _why(failing))


def notebook_status(obj: Obj) -> Status:
    """kubeflow.org Notebook: readyReplicas, else the controller's containerState."""
    status = obj.get("status") or {}
    replicas = {"Notebook": _counts(status, ("readyReplicas",))}
    if (status.get("readyReplicas") or 0) >= 1:
        return Status(JobState.RUNNING, "", replicas)
    state = status.get("containerState") or {}
    for key in ("waiting", "terminated"):
        if isinstance(state.get(key), Mapping):
            detail = state[key]
            reason = detail.get("reason") or key
            message = detail.get("message") or ""
            return Status(JobState.PENDING, f"{reason}: {message}" if message else reason, replicas)
    return Status(JobState.PENDING, "", replicas)


_VOLCANO_PHASES = {
    "Pending": JobState.PENDING, "Running": JobState.RUNNING, "Restarting": JobState.RUNNING,
    "Completing": JobState.RUNNING, "Completed": JobState.SUCCEEDED, "Failed": JobState.FAILED,
    "Terminated": JobState.FAILED, "Aborted": JobState.FAILED, "Aborting": JobState.RUNNING,
    "Terminating": JobState.RUNNING,
}


def volcano_job_status(obj: Obj) -> Status:
    """batch.volcano.sh Job: status.state.phase."""
    status = obj.get("status") or {}
    state = status.get("state") or {}
    phase = state.get("phase") or "Pending"
    replicas = {"Job": _counts(status, ("pending", "running", "succeeded", "failed", "terminating", "unknown"))}
    for task, counts in (status.get("taskStatusCount") or {}).items():
        phases = (counts or {}).get("phase") or {}
        replicas[task] = {k.lower(): int(v) for k, v in phases.items() if isinstance(v, int)}
    result = _VOLCANO_PHASES.get(phase, JobState.PENDING)
    reason = ""
    if result is JobState.FAILED or phase in ("Aborting", "Terminating", "Restarting"):
        reason = ": ".join(p for p in (phase, state.get("reason") or "", state.get("message") or "") if p)
    return Status(result, reason, replicas)


def podgroup_waiting(obj: Obj | None) -> str | None:
    """Why a Volcano PodGroup holds its gang back (phase Pending / Inqueue and Unschedulable), or None."""
    if not obj:
        return None
    status = obj.get("status") or {}
    phase = status.get("phase") or "Pending"
    if phase not in ("Pending", "Inqueue"):
        return None
    condition = _true(status.get("conditions"), "Unschedulable")
    if condition:
        return f"PodGroup {phase}: {_why(condition) or 'Unschedulable'}"
    if phase == "Pending" and status:
        queue = (obj.get("spec") or {}).get("queue") or "default"
        return f"PodGroup Pending: waiting in Volcano queue {queue!r}"
    return None


ADAPTERS: dict[tuple[str, str], Callable[[Obj], Status]] = {
    **{("kubeflow.org/v1", k): training_job_status for k in ("TFJob", "PyTorchJob", "XGBoostJob", "MPIJob")},
    ("batch/v1", "Job"): batch_job_status,
    ("apps/v1", "Deployment"): deployment_status,
    ("kubeflow.org/v1", "Notebook"): notebook_status,
    ("serving.kserve.io/v1beta1", "InferenceService"): inference_service_status,
    ("batch.volcano.sh/v1alpha1", "Job"): volcano_job_status,
}


def workload_status(obj: Obj) -> Status:
    """State of the primary object alone (a cancel annotation wins)."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    if annotations.get(CANCELLED_ANNOTATION) == "true":
        return Status(JobState.CANCELLED, "cancelled")
    adapter = ADAPTERS.get((str(obj.get("apiVersion")), str(obj.get("kind"))))
    if adapter is None:
        return Status(JobState.FAILED, f"no status adapter for {obj.get('apiVersion')} {obj.get('kind')}")
    return adapter(obj)


# --- pods ----------------------------------------------------------------------------------

def replica_name(pod: Obj) -> str:
    """"worker-1" from the training operator's labels, "<task>-<index>" for Volcano, else the pod name."""
    meta = pod.get("metadata") or {}
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    rtype, index = labels.get(REPLICA_TYPE_LABEL), labels.get(REPLICA_INDEX_LABEL)
    if rtype is not None and index is not None:
        return f"{rtype.lower()}-{index}"
    task = labels.get("volcano.sh/task-spec") or annotations.get("volcano.sh/task-spec")
    index = labels.get("volcano.sh/task-index") or annotations.get("volcano.sh/task-index")
    if task and index is not None:
        return f"{task}-{index}"
    return meta.get("name", "?")


def pull_secret_hint(pod: Obj, reason: str) -> str:
    """What a container waiting for ``reason`` says about the Secrets its pod pulls with (imagePullSecrets),
    when the reason is a failed pull: the kubelet pulls without a Secret it cannot find and reports only the
    registry's refusal, and the platform may not read Secrets to tell which is missing, so it names them."""
    if reason not in PULL_FAILURES:
        return ""
    names = [str(ref.get("name")) for ref in (pod.get("spec") or {}).get("imagePullSecrets") or []
             if isinstance(ref, Mapping) and ref.get("name")]
    if not names:
        return ""
    namespace = (pod.get("metadata") or {}).get("namespace") or "the project's namespace"
    return (f" (pulled with Secret {', '.join(names)}: it must exist in namespace {namespace} "
            "and hold this registry's credentials)")


def pod_problems(pods: Iterable[Obj]) -> list[tuple[str, str]]:
    """(category, reason) per problem, sorted by replica. Categories: unschedulable, image,
    crash, oom, evicted, config. Reasons read like "worker-1: ImagePullBackOff: Back-off pulling ..."."""
    out: list[tuple[str, str, str]] = []
    for pod in pods:
        tag = replica_name(pod)
        status = pod.get("status") or {}
        for condition in status.get("conditions") or []:
            if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
                reason = condition.get("reason") or "Unschedulable"
                message = condition.get("message") or ""
                out.append((tag, "unschedulable", f"{tag}: {reason}" + (f": {message}" if message else "")))
        if status.get("reason") == "Evicted":
            out.append((tag, "evicted", f"{tag}: Evicted: {status.get('message') or ''}".rstrip(": ")))
        statuses = [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]
        for container in statuses:
            if container.get("name") in SIDECARS:
                continue
            state, last = container.get("state") or {}, container.get("lastState") or {}
            waiting = state.get("waiting") or {}
            reason = waiting.get("reason")
            if reason in BAD_WAITING:
                category = ("image" if "Image" in reason else "crash" if reason == "CrashLoopBackOff" else "config")
                message = waiting.get("message") or ""
                out.append((tag, category, f"{tag}: {reason}" + (f": {message}" if message else "")
                            + pull_secret_hint(pod, reason)))
            for terminated in (state.get("terminated"), last.get("terminated")):
                if terminated and terminated.get("reason") == "OOMKilled":
                    code = terminated.get("exitCode", 137)
                    out.append((tag, "oom", f"{tag}: OOMKilled (exit code {code})"))
                    break
    seen: set[str] = set()
    result = []
    for _, category, text in sorted(out, key=lambda item: item[0]):
        if text not in seen:
            seen.add(text)
            result.append((category, text))
    return result


def disruptions(pods: Iterable[Obj]) -> list[tuple[str, str, str]]:
    """(cause, node, reason) for each pod the cluster took away (evicted, or deleted with its lost node),
    sorted by replica: the job did nothing wrong, its gang must start again elsewhere."""
    out = []
    for pod in pods:
        status = pod.get("status") or {}
        target = _true(status.get("conditions"), "DisruptionTarget")
        why = (target or {}).get("reason") or (status.get("reason") if status.get("reason")
                                                in DISRUPTION_STATUS_REASONS else None)
        if not why:
            continue
        node = str((pod.get("spec") or {}).get("nodeName") or "")
        cause = NODE_LOST if why in NODE_LOST_REASONS else EVICTED
        where = f" from node {node}" if node else ""
        what = "lost with its node" if cause == NODE_LOST else "evicted"
        out.append((replica_name(pod), cause, node, f"{replica_name(pod)} {what}{where} ({why})"))
    return [(cause, node, text) for _, cause, node, text in sorted(out)]


def exit_code(pods: Iterable[Obj]) -> int | None:
    """First non-zero exit code of a terminated init or main container, else 0 if some terminated,
    else None. A failed init container (an image build's Kaniko step) stops its pod before the main one."""
    codes = []
    for pod in pods:
        status = pod.get("status") or {}
        for container in [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]:
            terminated = (container.get("state") or {}).get("terminated")
            if terminated and container.get("name") not in SIDECARS:
                codes.append(int(terminated.get("exitCode", 0)))
    if not codes:
        return None
    return next((c for c in codes if c != 0), 0)


def combine(base: Status, pods: Iterable[Obj] = (), podgroups: Iterable[Obj | None] = (),
            url: str | None = None, kind: str = "") -> Status:
    """The workload's state (of this kind), explained by its PodGroup and pods."""
    pods = list(pods)
    state, reasons = base.state, [base.reason] if base.reason else []
    if state in (JobState.CANCELLED, JobState.SUCCEEDED):
        return Status(state, base.reason, base.replicas, exit_code(pods) if pods else base.exit_code, url)
    lost = disruptions(pods) if kind not in SELF_HEALING else []
    if lost:  # the rest of the gang cannot go on: the attempt has failed, not the program
        nodes = tuple(sorted({node for _, node, _ in lost if node}))
        text = "; ".join(t for _, _, t in lost)
        return Status(JobState.FAILED, text, base.replicas, None, url, cause=lost[0][0], lost_nodes=nodes)
    problems = pod_problems(pods)
    if state is JobState.PENDING:
        waiting = [w for w in (podgroup_waiting(pg) for pg in podgroups) if w]
        waiting += [text for category, text in problems if category == "unschedulable"]
        if waiting:
            state = JobState.WAITING
    else:
        waiting = []
    for text in [*waiting, *(text for _, text in problems)]:
        if text not in reasons:
            reasons.append(text)
    code = exit_code(pods) if state is JobState.FAILED else base.exit_code
    return Status(state, "; ".join(reasons), base.replicas, code, url)
