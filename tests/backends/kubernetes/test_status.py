"""Status adapters (pure, table-driven) and status() through the double: PodGroup waiting,
pod problems as reasons, 404, errors surfaced."""
from __future__ import annotations

import pytest

from myapp.backends.base import BackendError, JobState, Status
from myapp.backends.kubernetes import adapters
from tests.k8s_double import registry
from tests.k8s_double.support import NS, manifests


def cond(kind, status="True", reason="", message=""):
    out = {"type": kind, "status": status}
    if reason:
        out["reason"] = reason
    if message:
        out["message"] = message
    return out


def tj(*conditions, **status):
    return {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "j"},
            "status": {"conditions": list(conditions), **status}}


def job(*conditions, **status):
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
            "status": {"conditions": list(conditions), **status}}


def deploy(replicas=2, *conditions, **status):
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": replicas},
            "status": {"conditions": list(conditions), **status}}


def notebook(**status):
    return {"apiVersion": "kubeflow.org/v1", "kind": "Notebook", "metadata": {"name": "n"}, "status": status}


def vcjob(phase, **extra):
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "v"},
            "status": {"state": {"phase": phase, **extra}}}


FAILED_MSG = "PyTorchJob j is failed because 1 Worker replica(s) failed."
ADAPTER_CASES = [
    # training jobs: Failed > Succeeded > Running, Created alone is pending
    (tj(), JobState.PENDING, ""),
    (tj(cond("Created")), JobState.PENDING, ""),
    (tj(cond("Created"), cond("Running")), JobState.RUNNING, ""),
    (tj(cond("Running", "False"), cond("Succeeded")), JobState.SUCCEEDED, ""),
    (tj(cond("Running"), cond("Failed", reason="PyTorchJobFailed", message=FAILED_MSG)), JobState.FAILED,
     "PyTorchJobFailed: " + FAILED_MSG),
    (tj(cond("Failed", message="boom"), cond("Succeeded")), JobState.FAILED, "boom"),  # Failed is never cleared
    (tj(cond("Restarting", reason="PyTorchJobRestarting", message="worker-0 restarting")), JobState.RUNNING,
     "PyTorchJobRestarting: worker-0 restarting"),
    (tj(cond("Suspended")), JobState.WAITING, "suspended"),
    # batch Job
    (job(), JobState.PENDING, ""),
    (job(active=1, ready=0), JobState.PENDING, ""),
    (job(active=1, ready=1), JobState.RUNNING, ""),
    (job(active=2), JobState.RUNNING, ""),
    (job(cond("Complete"), succeeded=1), JobState.SUCCEEDED, ""),
    (job(cond("Failed", reason="BackoffLimitExceeded", message="Job has reached the specified backoff limit"),
         failed=1), JobState.FAILED, "BackoffLimitExceeded: Job has reached the specified backoff limit"),
    (job(cond("FailureTarget", reason="DeadlineExceeded"), cond("Complete", "False")), JobState.FAILED,
     "DeadlineExceeded"),
    # Deployment
    (deploy(2, availableReplicas=1), JobState.PENDING, ""),
    (deploy(2, availableReplicas=2), JobState.RUNNING, ""),
    (deploy(2, cond("Progressing", "False", "ProgressDeadlineExceeded",
                    'ReplicaSet "d-5f" has timed out progressing.')),
     JobState.FAILED, 'ProgressDeadlineExceeded: ReplicaSet "d-5f" has timed out progressing.'),
    # Notebook
    (notebook(readyReplicas=1, containerState={"running": {}}), JobState.RUNNING, ""),
    (notebook(readyReplicas=0, containerState={"waiting": {"reason": "ImagePullBackOff",
                                                           "message": "Back-off pulling image"}}),
     JobState.PENDING, "ImagePullBackOff: Back-off pulling image"),
    (notebook(), JobState.PENDING, ""),
    # Volcano Job
    (vcjob("Pending"), JobState.PENDING, ""),
    (vcjob("Running"), JobState.RUNNING, ""),
    (vcjob("Completed"), JobState.SUCCEEDED, ""),
    (vcjob("Failed", reason="PodFailed", message="task worker failed"), JobState.FAILED,
     "Failed: PodFailed: task worker failed"),
    (vcjob("Aborted"), JobState.FAILED, "Aborted"),
]


@pytest.mark.parametrize(("obj", "state", "reason"), ADAPTER_CASES)
def test_adapters(obj, state, reason):
    status = adapters.workload_status(obj)
    assert (status.state, status.reason) == (state, reason)


def test_replica_counts_are_reported():
    status = adapters.training_job_status(tj(cond("Running"), replicaStatuses={
        "Master": {"active": 1}, "Worker": {"active": 2, "failed": 1, "selector": "x=y"}}))
    assert status.replicas == {"Master": {"active": 1}, "Worker": {"active": 2, "failed": 1}}
    assert adapters.batch_job_status(job(active=1, ready=1, failed=2)).replicas == {
        "Job": {"active": 1, "ready": 1, "failed": 2}}
    volcano = vcjob("Running")
    volcano["status"].update(running=3, taskStatusCount={"worker": {"phase": {"Running": 3}}})
    assert adapters.volcano_job_status(volcano).replicas == {"Job": {"running": 3}, "worker": {"running": 3}}


def pod(name, replica=None, *, waiting=None, last_terminated=None, terminated=None, unschedulable=None,
        containers=("pytorch",)):
    labels = {"myapp.io/job-name": "j"}
    if replica:
        rtype, index = replica.split("-")
        labels.update({"training.kubeflow.org/replica-type": rtype, "training.kubeflow.org/replica-index": index})
    state = {"running": {}}
    if waiting:
        state = {"waiting": {"reason": waiting[0], "message": waiting[1]}}
    if terminated:
        state = {"terminated": terminated}
    statuses = [{"name": c, "state": state, "lastState": {"terminated": last_terminated} if last_terminated else {}}
                for c in containers]
    conditions = [cond("PodScheduled", "False", "Unschedulable", unschedulable)] if unschedulable else []
    return {"metadata": {"name": name, "labels": labels},
            "status": {"phase": "Pending" if unschedulable else "Running", "conditions": conditions,
                       "containerStatuses": [] if unschedulable else statuses}}


PULL = "Back-off pulling image \"ghcr.io/x/missing:1\""
UNSCHED = "0/3 nodes are available: 3 Insufficient nvidia.com/gpu."
POD_CASES = [
    ([pod("j-worker-1", "worker-1", waiting=("ImagePullBackOff", PULL))],
     [("image", f"worker-1: ImagePullBackOff: {PULL}")]),
    ([pod("j-master-0", "master-0", waiting=("ErrImagePull", "rpc error: not found"))],
     [("image", "master-0: ErrImagePull: rpc error: not found")]),
    ([pod("j-worker-0", "worker-0", waiting=("CrashLoopBackOff", "back-off 5m0s restarting failed container"),
          last_terminated={"reason": "OOMKilled", "exitCode": 137})],
     [("crash", "worker-0: CrashLoopBackOff: back-off 5m0s restarting failed container"),
      ("oom", "worker-0: OOMKilled (exit code 137)")]),
    ([pod("j-abcde", terminated={"reason": "OOMKilled", "exitCode": 137})],
     [("oom", "j-abcde: OOMKilled (exit code 137)")]),
    ([pod("j-worker-2", "worker-2", unschedulable=UNSCHED)],
     [("unschedulable", f"worker-2: Unschedulable: {UNSCHED}")]),
    ([pod("ok", "worker-0"), pod("ok2", waiting=("ContainerCreating", ""))], []),  # normal start-up is no problem
    ([pod("s", "worker-0", waiting=("ImagePullBackOff", "x"), containers=("istio-proxy",))], []),  # sidecars ignored
]


@pytest.mark.parametrize(("pods", "problems"), POD_CASES)
def test_pod_problems(pods, problems):
    assert adapters.pod_problems(pods) == problems


def podgroup(phase, *conditions):
    return {"spec": {"queue": "vision-gpu"}, "status": {"phase": phase, "conditions": list(conditions)}}


GANG = "4/4 tasks in gang unschedulable: pod group is not ready, 4 Pending, 4 minAvailable"


@pytest.mark.parametrize(("group", "reason"), [
    (podgroup("Inqueue", cond("Unschedulable", reason="NotEnoughResources", message=GANG)),
     f"PodGroup Inqueue: NotEnoughResources: {GANG}"),
    (podgroup("Pending", cond("Unschedulable", message=GANG)), f"PodGroup Pending: {GANG}"),
    (podgroup("Pending"), "PodGroup Pending: waiting in Volcano queue 'vision-gpu'"),
    (podgroup("Running"), None),
    (podgroup("Inqueue", cond("Unschedulable", "False")), None),
    ({"spec": {}}, None),  # no status yet
    (None, None),
])
def test_podgroup_waiting(group, reason):
    assert adapters.podgroup_waiting(group) == reason


def test_combine_pending_with_unschedulable_gang_is_waiting():
    group = podgroup("Inqueue", cond("Unschedulable", reason="NotEnoughResources", message=GANG))
    status = adapters.combine(Status(JobState.PENDING), [], [group])
    assert status.state is JobState.WAITING
    assert status.reason == f"PodGroup Inqueue: NotEnoughResources: {GANG}"


def test_combine_unschedulable_pod_is_waiting_and_running_stays_running():
    pods = [pod("j-worker-2", "worker-2", unschedulable=UNSCHED)]
    assert adapters.combine(Status(JobState.PENDING), pods).state is JobState.WAITING
    running = adapters.combine(Status(JobState.RUNNING), pods)
    assert running.state is JobState.RUNNING and UNSCHED in running.reason


def test_combine_failed_explains_with_oom_and_exit_code():
    pods = [pod("j-worker-1", "worker-1", terminated={"reason": "OOMKilled", "exitCode": 137})]
    status = adapters.combine(Status(JobState.FAILED, "PyTorchJobFailed: 1 Worker failed"), pods)
    assert status.state is JobState.FAILED
    assert status.reason == "PyTorchJobFailed: 1 Worker failed; worker-1: OOMKilled (exit code 137)"
    assert status.exit_code == 137


def test_combine_succeeded_is_not_decorated():
    pods = [pod("j-worker-1", "worker-1", terminated={"reason": "Completed", "exitCode": 0},
                last_terminated={"reason": "OOMKilled", "exitCode": 137})]
    status = adapters.combine(Status(JobState.SUCCEEDED), pods)
    assert (status.state, status.reason, status.exit_code) == (JobState.SUCCEEDED, "", 0)


# --- through the double ----------------------------------------------------------------

PYTORCH = "kubeflow.org/v1", "PyTorchJob"


def add_replica_pods(double, ref, specs):
    for replica, kwargs in specs.items():
        rtype, index = replica.split("-")
        labels = {"myapp.io/job-name": ref.job_name, "training.kubeflow.org/replica-type": rtype,
                  "training.kubeflow.org/replica-index": index}
        double.add_pod(ref.namespace, f"{ref.job_name}-{replica}", labels,
                       containers=("pytorch",), owner=(*PYTORCH, ref.primary.name), **kwargs)


def test_gang_waits_on_its_podgroup_then_reports_image_pull_errors(double, k8s_backend):
    ref = k8s_backend.submit(manifests("pytorch-ddp", gang=True))
    ns, name = ref.namespace, ref.primary.name
    assert k8s_backend.status(ref).state is JobState.PENDING
    double.set_status("scheduling.volcano.sh/v1beta1", "PodGroup", ns, name, {
        "phase": "Inqueue", "conditions": [cond("Unschedulable", reason="NotEnoughResources", message=GANG)]})
    status = k8s_backend.status(ref)
    assert status.state is JobState.WAITING
    assert status.reason == f"PodGroup Inqueue: NotEnoughResources: {GANG}"

    double.set_status("scheduling.volcano.sh/v1beta1", "PodGroup", ns, name, {"phase": "Running"})
    double.set_status(*PYTORCH, ns, name, {"conditions": [cond("Created"), cond("Running")],
                                           "replicaStatuses": {"Master": {"active": 1}, "Worker": {"active": 3}}})
    pulling = {"waiting": {"reason": "ImagePullBackOff", "message": PULL}}
    add_replica_pods(double, ref, {
        "master-0": {},
        "worker-0": {},
        "worker-1": {"phase": "Pending", "container_statuses": [{"name": "pytorch", "state": pulling}]},
    })
    status = k8s_backend.status(ref)
    assert status.state is JobState.RUNNING
    assert status.reason == f"worker-1: ImagePullBackOff: {PULL}"
    assert status.replicas == {"Master": {"active": 1}, "Worker": {"active": 3}}


def test_failed_beats_succeeded_and_names_the_oom_killed_replica(double, k8s_backend):
    ref = k8s_backend.submit(manifests("pytorch-ddp"))
    oom = [{"name": "pytorch", "state": {"terminated": {"reason": "OOMKilled", "exitCode": 137}}}]
    add_replica_pods(double, ref, {"master-0": {"phase": "Succeeded"},
                                   "worker-0": {"phase": "Failed", "container_statuses": oom}})
    double.set_status(*PYTORCH, ref.namespace, ref.primary.name, {"conditions": [
        cond("Running", "False"), cond("Failed", reason="PyTorchJobFailed", message=FAILED_MSG), cond("Succeeded")]})
    status = k8s_backend.status(ref)
    assert status.state is JobState.FAILED
    assert status.reason == f"PyTorchJobFailed: {FAILED_MSG}; worker-0: OOMKilled (exit code 137)"
    assert status.exit_code == 137


def test_unschedulable_pod_of_a_job_is_waiting_with_the_scheduler_message(double, k8s_backend):
    ref = k8s_backend.submit(manifests("python"))
    double.add_pod(NS, "train-42-1-x7k2p", {"myapp.io/job-name": ref.job_name}, phase="Pending",
                   container_statuses=[], conditions=[cond("PodScheduled", "False", "Unschedulable", UNSCHED)])
    double.set_status("batch/v1", "Job", NS, ref.primary.name, {"active": 1, "ready": 0})
    status = k8s_backend.status(ref)
    assert status.state is JobState.WAITING
    assert status.reason == f"train-42-1-x7k2p: Unschedulable: {UNSCHED}"


def test_crash_looping_deployment_is_pending_with_the_reason_and_has_a_url(double, k8s_backend):
    ref = k8s_backend.submit(manifests("deploy-service"))
    crash = [{"name": "server", "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 40s"}},
              "lastState": {"terminated": {"reason": "Error", "exitCode": 1}}}]
    double.add_pod(NS, "digits-v2-5f7d-abcde", {"myapp.io/job-name": "digits-v2"}, containers=("server",),
                   container_statuses=crash)
    double.set_status("apps/v1", "Deployment", NS, "digits-v2", {"replicas": 1, "unavailableReplicas": 1})
    status = k8s_backend.status(ref)
    assert (status.state, status.reason) == (JobState.PENDING, "digits-v2-5f7d-abcde: CrashLoopBackOff: back-off 40s")
    assert status.url == "http://digits.proj-vision.svc.cluster.local"
    double.set_status("apps/v1", "Deployment", NS, "digits-v2", {"replicas": 1, "availableReplicas": 1})
    double.set_pod_status(NS, "digits-v2-5f7d-abcde", {"containerStatuses": [
        {"name": "server", "state": {"running": {}}}]})
    assert k8s_backend.status(ref) == Status(JobState.RUNNING, "", {"Deployment": {
        "desired": 1, "replicas": 1, "availableReplicas": 1}}, None, "http://digits.proj-vision.svc.cluster.local")


def test_notebook_pods_are_found_by_the_controller_label(double, k8s_backend):
    ref = k8s_backend.submit(manifests("notebook"))
    assert ref.primary.kind == "Notebook"
    double.add_pod(NS, "alice-notebook-0", {"notebook-name": "alice-notebook", "statefulset": "alice-notebook"},
                   containers=("alice-notebook",), phase="Pending", container_statuses=[{
                       "name": "alice-notebook",
                       "state": {"waiting": {"reason": "ErrImagePull", "message": "denied"}}}])
    status = k8s_backend.status(ref)
    assert status.state is JobState.PENDING
    # Found by its label: its pod's first pull error is what it waits on (the kubelet tries again).
    assert status.reason == "pulling image ghcr.io/myapp-platform/notebook:1.0.0: ErrImagePull: denied (trying again)"
    assert status.url == "http://alice-notebook.proj-vision.svc.cluster.local/notebook/vision/alice-notebook/"


def test_volcano_job_status(double, k8s_backend):
    ref = k8s_backend.submit(manifests("volcano-job"))
    double.set_status("batch.volcano.sh/v1alpha1", "Job", NS, ref.primary.name, {
        "state": {"phase": "Completed"}, "succeeded": 4})
    assert k8s_backend.status(ref).state is JobState.SUCCEEDED


def test_missing_workload_is_failed_not_an_exception(double, k8s_backend):
    ref = k8s_backend.submit(manifests("python"))
    double.store.delete(registry.by_kind("batch/v1", "Job"), NS, ref.primary.name)
    status = k8s_backend.status(ref)
    assert status.state is JobState.FAILED
    assert "Job/train-42-1 no longer exists" in status.reason


def test_api_errors_are_raised_not_swallowed(double, k8s_backend, sleeps):
    ref = k8s_backend.submit(manifests("python"))
    double.inject_fault("GET", r"/jobs/train-42-1$", status=500, times=10)
    with pytest.raises(BackendError, match=r"get Job/train-42-1: 500 .*gave up after 4 attempts"):
        k8s_backend.status(ref)
    double.faults.clear()
    double.inject_fault("GET", r"/pods$", status=403)
    with pytest.raises(BackendError, match=r"list pods myapp.io/job-name=train-42-1: 403"):
        k8s_backend.status(ref)
