"""A notebook on the Kubernetes backend, against the API-server double: its five objects created strictly
valid and adopted on a second submit, its state read from the CR and its pod (pulling, waiting, running,
failed with the pod's reason), a stop that keeps the work folder and a start after it, a delete that
leaves nothing."""
from __future__ import annotations

import pytest

from myapp.backends.archive import FileLogArchive
from myapp.backends.base import BackendError, InvalidManifest, JobRef, JobState
from myapp.rendering.kinds.notebook import work_claim_name
from tests.k8s_double.support import NS, manifests

NAME = "alice-notebook"
POD = f"{NAME}-0"
URL = f"http://{NAME}.{NS}.svc.cluster.local/notebook/vision/{NAME}/"
KINDS = [("security.istio.io/v1", "AuthorizationPolicy", f"notebook-{NAME}"), ("kubeflow.org/v1", "Notebook", NAME),
         ("v1", "PersistentVolumeClaim", f"{NAME}-work"), ("v1", "Service", NAME),
         ("networking.istio.io/v1", "VirtualService", f"notebook-{NAME}"),
         ("v1", "PersistentVolumeClaim", "myapp-outputs")]  # the project's outputs, read-only in the notebook


def stored(double) -> list[tuple[str, str, str]]:
    return [(api, kind, name) for api, kind, name in KINDS if double.get(api, kind, NS, name) is not None]


def add_pod(double, **kwargs) -> None:
    """The notebook controller's StatefulSet pod (labels statefulset and notebook-name)."""
    double.add_pod(NS, POD, {"notebook-name": NAME, "statefulset": NAME}, containers=(NAME,), **kwargs)


def waiting(reason: str, message: str = "", **extra) -> list[dict]:
    return [{"name": NAME, "image": "x", "imageID": "", "ready": False, "restartCount": 0,
             "state": {"waiting": {"reason": reason, **({"message": message} if message else {})}}, **extra}]


def test_submit_creates_the_five_objects_and_adopts_them_again(double, k8s_backend):
    objects = manifests("notebook")
    ref = k8s_backend.submit(objects)
    assert (ref.primary.kind, ref.primary.name, ref.job_name) == ("Notebook", NAME, NAME)
    assert stored(double) == KINDS
    assert [(o.kind, o.name) for o in ref.objects] == [(kind, name) for _, kind, name in KINDS]
    assert k8s_backend.submit(objects) == ref  # 409s: adopted, nothing new
    assert len(double.requests_matching("POST", "/persistentvolumeclaims$")) == 4  # work and outputs claims
    policy = double.get("security.istio.io/v1", "AuthorizationPolicy", NS, f"notebook-{NAME}")
    assert policy["spec"]["action"] == "CUSTOM" and policy["spec"]["selector"] == {"matchLabels": {"statefulset": NAME}}
    assert double.get("v1", "PersistentVolumeClaim", NS, work_claim_name(NAME))["spec"]["resources"] == {
        "requests": {"storage": "10Gi"}}


def test_the_double_refuses_what_the_api_server_would(double, k8s_backend):
    objects = manifests("notebook")
    objects[2]["spec"]["sizeLimit"] = "1Gi"  # the PersistentVolumeClaim: no such field
    with pytest.raises(InvalidManifest, match="sizeLimit"):
        k8s_backend.submit(objects)
    objects = manifests("notebook")
    objects[0]["spec"]["action"] = "MAYBE"
    with pytest.raises(InvalidManifest, match="action"):
        k8s_backend.submit(objects)


def test_states_from_the_cr_and_the_pod(double, k8s_backend):
    ref = k8s_backend.submit(manifests("notebook"))
    status = k8s_backend.status(ref)
    assert (status.state, status.reason, status.url) == (JobState.PENDING, "waiting for the notebook controller", URL)
    add_pod(double, phase="Pending", conditions=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                                   "message": "0/3 nodes are available: 3 Insufficient cpu."}])
    status = k8s_backend.status(ref)
    assert status.state is JobState.WAITING
    assert status.reason == f"waiting for resources: {POD}: Unschedulable: 0/3 nodes are available: 3 Insufficient cpu."
    double.set_pod_status(NS, POD, {"conditions": [{"type": "PodScheduled", "status": "True"}],
                                    "containerStatuses": waiting("ContainerCreating")})
    status = k8s_backend.status(ref)
    assert (status.state, status.reason) == (JobState.PENDING, "pulling image ghcr.io/myapp-platform/notebook:1.0.0")
    double.set_pod_status(NS, POD, {"containerStatuses": waiting("ErrImagePull", "registry timeout")})
    status = k8s_backend.status(ref)  # still pulling: the kubelet tries again (then backs off: fatal)
    assert (status.state, status.reason) == (
        JobState.PENDING, "pulling image ghcr.io/myapp-platform/notebook:1.0.0: ErrImagePull: registry timeout "
                          "(trying again)")
    double.set_pod_status(NS, POD, {"phase": "Running", "containerStatuses": [
        {"name": NAME, "image": "x", "imageID": "sha256:1", "ready": True, "restartCount": 0,
         "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}]})
    double.set_status("kubeflow.org/v1", "Notebook", NS, NAME, {"readyReplicas": 1, "containerState": {"running": {}}})
    status = k8s_backend.status(ref)
    assert (status.state, status.reason, status.url) == (JobState.RUNNING, "", URL)


@pytest.mark.parametrize(("statuses", "reason"), [
    (waiting("ImagePullBackOff", 'Back-off pulling image "nope:1"'),
     'ImagePullBackOff: Back-off pulling image "nope:1"'),
    (waiting("CreateContainerConfigError", "container has runAsNonRoot and image will run as root"),
     "CreateContainerConfigError: container has runAsNonRoot and image will run as root"),
    (waiting("CrashLoopBackOff", "back-off 40s", lastState={"terminated": {"reason": "OOMKilled", "exitCode": 137}}),
     "CrashLoopBackOff: back-off 40s (last exit: OOMKilled, code 137)"),
])
def test_what_cannot_pass_by_itself_fails_the_notebook_with_the_pods_reason(double, k8s_backend, statuses, reason):
    ref = k8s_backend.submit(manifests("notebook"))
    add_pod(double, phase="Pending", container_statuses=statuses)
    status = k8s_backend.status(ref)
    assert (status.state, status.reason) == (JobState.FAILED, reason)


def test_stop_keeps_the_work_folder_and_start_runs_again(double, k8s_backend, tmp_path):
    """The lifecycle's stop: cancel, then clean up everything but the claim; a start submits again."""
    objects = manifests("notebook")
    ref = k8s_backend.submit(objects)
    add_pod(double)
    k8s_backend.cancel(ref)
    assert k8s_backend.status(ref).state is JobState.CANCELLED
    assert double.get("kubeflow.org/v1", "Notebook", NS, NAME) is None
    assert double.get("v1", "Pod", NS, POD) is None
    keep = tuple(o for o in ref.objects if o.kind != "PersistentVolumeClaim")
    archive = FileLogArchive(tmp_path)
    k8s_backend.cleanup(JobRef(ref.backend, ref.namespace, ref.job_name, ref.primary, keep), archive)
    assert stored(double) == [("v1", "PersistentVolumeClaim", f"{NAME}-work"), KINDS[-1]]
    # Started again: the same names, the claim adopted, and no longer reported as cancelled.
    assert k8s_backend.submit(objects) == ref
    assert stored(double) == KINDS
    assert k8s_backend.status(ref).state is JobState.PENDING
    # Deleted: nothing is left but the project's outputs claim (every run's outputs, not the notebook's).
    k8s_backend.cancel(ref)
    k8s_backend.cleanup(ref, archive)
    assert stored(double) == [KINDS[-1]]


def test_a_notebook_still_being_deleted_is_not_adopted(double, k8s_backend):
    objects = manifests("notebook")
    k8s_backend.submit(objects)
    double.patch_metadata("kubeflow.org/v1", "Notebook", NS, NAME, {"deletionTimestamp": "2026-01-01T00:00:00Z"})
    with pytest.raises(BackendError, match="still being deleted") as info:
        k8s_backend.submit(objects)
    assert not isinstance(info.value, InvalidManifest)  # transient: the next reconcile tries again
