"""A gang the cluster took a replica from is started again whole, from its checkpoint, on healthy capacity:
through the run controller, the real Kubernetes backend and the API-server double (a node going NotReady,
a pod evicted). The machine's failures count against the task's retries; the reason is on the attempt."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from tests.k8s_double import ApiServerDouble
from tests.pipelines.support import make_pipeline


def attempts(app, run_id):
    from myapp.extensions import db
    from myapp.models import TaskRun

    with app.app_context():
        return db.session.scalars(sa.select(TaskRun).where(TaskRun.pipeline_run_id == run_id)
                                  .order_by(TaskRun.attempt)).all()


def start(app, controller, double: ApiServerDouble, attempt) -> dict[str, str]:
    """The operator's and the scheduler's part for the attempt's PyTorchJob: running pods bound to nodes."""
    ref = attempt.backend_ref
    double.set_status("kubeflow.org/v1", "PyTorchJob", ref["namespace"], ref["primary"]["name"],
                      {"conditions": [{"type": "Running", "status": "True"}]})
    placed = double.start_replicas(ref["namespace"], ref["primary"]["name"])
    with app.app_context():
        controller.reconcile(attempt.pipeline_run_id)
    return placed


def checkpoint_mounts(manifests):
    """(claim, subPath) of every checkpoint mount in the manifests."""
    out = set()
    for replica in manifests[0]["spec"]["pytorchReplicaSpecs"].values():
        spec = replica["template"]["spec"]
        claims = {v["name"]: v["persistentVolumeClaim"]["claimName"] for v in spec["volumes"]
                  if "persistentVolumeClaim" in v}
        out |= {(claims[m["name"]], m["subPath"]) for c in spec["containers"] for m in c["volumeMounts"]
                if m["mountPath"].startswith("/myapp/checkpoints")}
    return out


@pytest.mark.backends  # the lost nodes are read back from a JSON column (JSON null differs between the two)
def test_a_node_not_ready_restarts_the_gang_from_its_checkpoint_elsewhere(app, catalog, double, k8s_backend):
    from myapp.pipelines.controller import RunController

    for name in ("node-a", "node-b"):
        double.add_node(name)
    run_id, _ = make_pipeline(app, catalog, {"train": {"template": "pytorch-ddp", "args": {"workers": 1},
                                                       "retries": 1}}, [])
    controller = RunController(lambda task: k8s_backend)
    with app.app_context():
        controller.reconcile(run_id)
    (first,) = attempts(app, run_id)
    assert set(start(app, controller, double, first).values()) == {"node-a"}
    assert attempts(app, run_id)[0].state.value == "running"

    double.set_node_ready("node-a", False)
    with app.app_context():
        controller.reconcile(run_id)
    lost, again = attempts(app, run_id)
    assert (lost.state.value, lost.cause, lost.lost_nodes) == ("failed", "node-lost", ["node-a"])
    assert lost.reason.startswith("master-0 lost with its node from node node-a (DeletionByTaintManager)")
    assert lost.reason.endswith(": the whole gang restarts from its checkpoint (failure 1 of the 2 its retries "
                                "allow)")
    assert double.get("kubeflow.org/v1", "PyTorchJob", lost.backend_ref["namespace"],
                      lost.backend_ref["primary"]["name"]) is None  # what was left of the gang is stopped
    assert again.attempt == 2 and again.state.value == "pending"
    assert checkpoint_mounts(again.manifests) == checkpoint_mounts(lost.manifests) != set()  # the same claim
    assert set(start(app, controller, double, again).values()) == {"node-b"}  # the lost node is not chosen again
    double.set_node_ready("node-a", True)  # back: still avoided by this task's gang
    assert double.get("kubeflow.org/v1", "PyTorchJob", again.backend_ref["namespace"],
                      again.backend_ref["primary"]["name"])["spec"]["pytorchReplicaSpecs"]["Master"]["template"][
        "spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["node-a"]}]}]}


def evicted_worker(app, catalog, double, k8s_backend, task):
    """A run of one training task whose first attempt's pods started and whose worker pod was then evicted
    (the Eviction API): -> run id, its controller (the eviction not yet seen)."""
    from kubernetes import client

    from myapp.pipelines.controller import RunController

    run_id, _ = make_pipeline(app, catalog, {"train": task}, [])
    controller = RunController(lambda task: k8s_backend)
    with app.app_context():
        controller.reconcile(run_id)
    (first,) = attempts(app, run_id)
    worker = next(pod for pod in start(app, controller, double, first) if "worker" in pod)
    namespace = first.backend_ref["namespace"]
    client.CoreV1Api(double.api_client()).create_namespaced_pod_eviction(
        worker, namespace, client.V1Eviction(metadata=client.V1ObjectMeta(name=worker, namespace=namespace)))
    return run_id, controller


def test_an_eviction_with_no_retry_left_fails_the_task_saying_so(app, catalog, double, k8s_backend):


    double.add_node("node-a")
    run_id, controller = evicted_worker(app, catalog, double, k8s_backend,
                                        {"template": "pytorch-ddp", "args": {"workers": 1}})
    with app.app_context():
        state = controller.reconcile(run_id)
    (lost,) = attempts(app, run_id)
    assert state.value == "failed" and (lost.cause, lost.lost_nodes) == ("evicted", ["node-a"])
    assert lost.reason == ("worker-0 evicted from node node-a (EvictionByEvictionAPI): no retry left "
                           "(failure 1; retries: 0)")


@pytest.mark.slow  # real training: torch in four processes
def test_a_killed_replica_restarts_the_gang_from_its_checkpoint_on_the_local_backend(app, catalog, tmp_path):
    """The demo's trainer as a gang of two sandboxed processes: its worker's process killed after a
    checkpoint, the gang stops, and the task's next attempt trains on from that checkpoint to the end."""
    import json
    import os
    import signal

    import psutil

    from myapp.backends import JobRef
    from myapp.extensions import db
    from myapp.models import Project
    from tests.admission.test_admission_local import Platform, make_group, submit

    epochs = 3
    group, (project,) = make_group(app, 8000, [None])
    with app.app_context():
        namespace = db.session.get(Project, project).namespace
    platform = Platform(app, tmp_path)
    try:
        run_id = submit(app, catalog, group, project, {"train": {
            "template": "pytorch-ddp", "retries": 1, "resources": {"cpu": "1", "memory": "1Gi"},
            "args": {"workers": 1, "epochs": epochs, "hidden": 32, "epoch_seconds": 1.0,
                     "output_path": str(platform.backend.data_dir(namespace) / "model.pt")}}})
        platform.runs = [run_id]
        saved = lambda: (platform.backend.last_checkpoint(namespace, f"{run_id}/train") or {}).get("step", 0)  # noqa: E731
        platform.until(lambda: saved() >= 1, "the epoch-1 checkpoint", timeout=120)
        ref = JobRef.from_dict(attempts(app, run_id)[0].backend_ref)
        state = json.loads((platform.backend.job_dir(ref) / ".myapp" / "state.json").read_text())
        worker = psutil.Process(state["replicas"]["worker-0"]["pid"])
        assert worker.create_time() == state["replicas"]["worker-0"]["create_time"]
        resumed_from = saved()
        os.kill(worker.pid, signal.SIGKILL)

        platform.until(lambda: platform.run_state(run_id) in ("succeeded", "failed"), "the training ended",
                       timeout=180)
        lost, again = attempts(app, run_id)
        assert platform.run_state(run_id) == "succeeded", (lost.reason, again.reason)
        assert (lost.state.value, lost.cause, again.state.value) == ("failed", "replica-lost", "succeeded")
        assert lost.reason == ("worker-0 was killed (signal 9): the whole gang restarts from its checkpoint "
                               "(failure 1 of the 2 its retries allow)")
        reported = platform.backend.outputs_dir(namespace) / f"{run_id}/train/2/metrics.jsonl"
        steps = sorted({m["step"] for m in map(json.loads, reported.read_text().splitlines())
                        if m["name"] == "accuracy"})
        # On from the newest checkpoint: the one at the kill, or the next epoch's when the worker was lost
        # after that epoch's steps (the master, stopped with its gang, saves it at once: docs/checkpoints.md).
        assert steps == list(range(steps[0], epochs + 1)) and steps[0] - 1 in (resumed_from, resumed_from + 1), \
            (resumed_from, steps)
    finally:
        platform.stop()


def test_a_lost_replica_restarts_at_once_while_an_ordinary_failure_waits_its_retry_delay(app, catalog, double,
                                                                                       k8s_backend):
    """The task's retry_delay (here 10 minutes) is for a program that failed; a gang the machine took a
    replica from starts again in the same pass, as a preempted one resumes, and still counts as a failure."""


    for name in ("node-a", "node-b"):  # the next attempt keeps off node-a
        double.add_node(name)
    task = {"template": "pytorch-ddp", "args": {"workers": 1}, "retries": 2, "retry_delay": 600}
    run_id, controller = evicted_worker(app, catalog, double, k8s_backend, task)
    with app.app_context():
        controller.reconcile(run_id)
    lost, again = attempts(app, run_id)
    assert (lost.cause, again.attempt, again.state.value) == ("evicted", 2, "pending")
    assert lost.reason.endswith("(failure 1 of the 3 its retries allow)")

    start(app, controller, double, again)  # now the program itself fails: the retry waits its delay
    ref = again.backend_ref
    double.set_status("kubeflow.org/v1", "PyTorchJob", ref["namespace"], ref["primary"]["name"],
                      {"conditions": [{"type": "Failed", "status": "True", "reason": "PyTorchJobFailed"}]})
    with app.app_context():
        from myapp.extensions import db
        from myapp.models import Task
        from myapp.pipelines.timers import aware, retry_due

        controller.reconcile(run_id)
        controller.reconcile(run_id)
        failed = attempts(app, run_id)
        row = db.session.get(Task, failed[1].task_id)
        waits = [(retry_due(a, row) - aware(a.finished_at)).total_seconds() for a in failed]
    assert [(a.attempt, a.state.value, a.cause) for a in failed] == [(1, "failed", "evicted"), (2, "failed", None)]
    assert waits == [0, 1200]  # no third attempt yet: the second failure waits retry_delay doubled
