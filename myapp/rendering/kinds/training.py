"""Kubeflow training-operator kinds: PyTorchJob, TFJob, XGBoostJob, MPIJob."""
from __future__ import annotations

from typing import Any

from ..engine import render_object
from .base import Build, Kind

# The platform retries a failed task as a new attempt, so replicas are never restarted in
# place (a restarted DDP rank would hang the others); leftover running pods such as
# parameter servers are removed once the job has finished.
CLEAN_POD_POLICY = "Running"
MPI_WORKER_COMMAND = ["sleep"]
MPI_WORKER_ARGS = ["365d"]  # workers idle; the launcher's mpirun execs the program in them


def run_policy(b: Build, total_pods: int) -> dict[str, Any]:
    policy: dict[str, Any] = {"cleanPodPolicy": CLEAN_POD_POLICY, "backoffLimit": 0}
    if b.gang:
        # Honoured when the operator runs with --gang-scheduler-name=volcano; it then uses the
        # PodGroup of the same name that we render.
        policy["schedulingPolicy"] = {"minAvailable": total_pods, "queue": b.queue}
    return policy


def _replica(kind: str, count: int, b: Build, gpu: bool = True, **extra: Any) -> dict[str, Any]:
    return {"type": kind, "count": count, "resources": b.resources.requirements(with_gpu=gpu), **extra}


def _render(template_name: str, b: Build, replicas: list[dict[str, Any]], **extra: Any) -> list[dict]:
    total = sum(r["count"] for r in replicas)
    return [render_object(template_name, {
        "name": b.name,
        "image": b.image,
        "command": b.command,
        "args": b.cli_args,
        "run_policy": run_policy(b, total),
        "replicas": replicas,
        **extra,
    })]


def build_pytorch(b: Build) -> list[dict]:
    replicas = [_replica("Master", 1, b)]
    if b.args["workers"] > 0:
        replicas.append(_replica("Worker", b.args["workers"], b))
    return _render("pytorchjob.yaml.j2", b, replicas)


def build_tf(b: Build) -> list[dict]:
    # Parameter servers only hold variables: no GPU for them.
    replicas = [_replica("Chief", 1, b), _replica("PS", b.args["ps"], b, gpu=False),
                _replica("Worker", b.args["workers"], b)]
    return _render("tfjob.yaml.j2", b, replicas)


def build_xgboost(b: Build) -> list[dict]:
    replicas = [_replica("Master", 1, b)]
    if b.args["workers"] > 0:
        replicas.append(_replica("Worker", b.args["workers"], b))
    return _render("xgboostjob.yaml.j2", b, replicas)


def build_mpi(b: Build) -> list[dict]:
    workers, slots = b.args["workers"], b.args.get("slots_per_worker", 1)
    launcher_command = [
        "mpirun", "--allow-run-as-root", "-np", str(workers * slots),
        "-bind-to", "none", "-map-by", "slot",
        "-x", "LD_LIBRARY_PATH", "-x", "PATH", "-x", "NCCL_DEBUG=INFO",
        "-mca", "pml", "ob1", "-mca", "btl", "^openib",
        *b.command,
    ]
    replicas = [
        # The launcher only runs mpirun: no GPU.
        _replica("Launcher", 1, b, gpu=False, command=launcher_command, args=b.cli_args),
        _replica("Worker", workers, b, command=MPI_WORKER_COMMAND, args=MPI_WORKER_ARGS),
    ]
    return _render("mpijob.yaml.j2", b, replicas, slots_per_worker=slots)


PYTORCH = Kind("pytorchjob", build_pytorch, required_args={"workers": "integer"})
TENSORFLOW = Kind("tfjob", build_tf, required_args={"ps": "integer", "workers": "integer"})
XGBOOST = Kind("xgboostjob", build_xgboost, required_args={"workers": "integer"})
MPI = Kind("mpijob", build_mpi, required_args={"workers": "integer"},
           optional_args={"slots_per_worker": "integer"})
