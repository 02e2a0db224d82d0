"""Kubeflow training-operator kinds: PyTorchJob, TFJob, XGBoostJob, MPIJob."""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from ..engine import render_object
from ..errors import ArgumentError
from .base import Build, Kind

# The platform retries a failed task as a new attempt, so replicas are never restarted in
# place (a restarted DDP rank would hang the others); leftover running pods such as
# parameter servers are removed once the job has finished.
CLEAN_POD_POLICY = "Running"
MPI_WORKER_COMMAND = ["sleep"]
MPI_WORKER_ARGS = ["365d"]  # workers idle; the launcher's mpirun execs the program in them
# Elastic PyTorch (template.yaml ``elastic: {min, max}``, kept in the argument schema under this key): every
# replica runs torchrun, which meets the others at a c10d rendezvous on the Master's address and port (the
# operator's MASTER_ADDR / MASTER_PORT, expanded by the kubelet, or the local backend, in the command) and
# restarts the workers, up to MAX_RESTARTS times, whenever a member comes or goes within min..max replicas.
ELASTIC_KEY = "x-elastic"
MAX_ELASTIC_REPLICAS = 64
MAX_RESTARTS = 3
RDZV_ENDPOINT = "$(MASTER_ADDR):$(MASTER_PORT)"
# By default the agents keep one TCP store for the workers across rendezvous rounds, and the workers of a round
# after a restart can read the last round's keys and connect to ranks gone (pytorch/pytorch#135712): each
# round's rank 0 hosts a fresh store instead.
ELASTIC_ENV = ({"name": "TORCH_DISABLE_SHARE_RDZV_TCP_STORE", "value": "1"},)
_PYTHON = re.compile(r"python(3(\.[0-9]+)?)?")


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
    elastic = (b.template.get("args_schema") or {}).get(ELASTIC_KEY)
    if not elastic:
        return _render("pytorchjob.yaml.j2", b, replicas, elastic_policy=None)
    low, high = elastic["min"], elastic["max"]
    if not low <= 1 + b.args["workers"] <= high:
        raise ArgumentError("workers", f"the template runs {low} to {high} replicas (elastic): workers must be "
                                       f"from {low - 1} to {high - 1}")
    policy = {"minReplicas": low, "maxReplicas": high, "rdzvBackend": "c10d", "maxRestarts": MAX_RESTARTS,
              "nProcPerNode": 1}
    for replica in replicas:  # the Master hosts the rendezvous' store, the workers join it
        replica["command"] = torchrun(b.command, b.name, low, high, host=replica["type"] == "Master")
        replica["env"] = list(ELASTIC_ENV)
    return _render("pytorchjob.yaml.j2", b, replicas, elastic_policy=policy)


def torchrun(command: list[str], job: str, low: int, high: int, host: bool) -> list[str]:
    """The template's command under torchrun with a min:max rendezvous (``python script.py`` runs the script,
    anything else with --no-python). ``host``: this replica hosts the rendezvous' store (said, not guessed
    from the endpoint's address: locally every replica is 127.0.0.1)."""
    if len(command) >= 2 and _PYTHON.fullmatch(os.path.basename(command[0])) and not command[1].startswith("-"):
        program = command[1:]
    else:
        program = ["--no-python", *command]
    return ["torchrun", f"--nnodes={low}:{high}", "--nproc-per-node=1", "--rdzv-backend=c10d",
            f"--rdzv-endpoint={RDZV_ENDPOINT}", f"--rdzv-id={job}", f"--rdzv-conf=is_host={int(host)}",
            f"--max-restarts={MAX_RESTARTS}", *program]


def check_elastic(value: Any, kind: str) -> dict[str, int]:
    """template.yaml's ``elastic``: {min, max} replicas of a PyTorchJob, 1 <= min <= max <= 64 (ValueError)."""
    if kind != "pytorchjob":
        raise ValueError(f"only a pytorchjob template can be elastic, not a {kind}")
    if not isinstance(value, Mapping) or set(value) != {"min", "max"}:
        raise ValueError("must be a mapping with exactly min and max")
    low, high = value["min"], value["max"]
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (low, high)) \
            or not 1 <= low <= high <= MAX_ELASTIC_REPLICAS:
        raise ValueError(f"needs whole numbers 1 <= min <= max <= {MAX_ELASTIC_REPLICAS}, got {dict(value)}")
    return {"min": low, "max": high}


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
