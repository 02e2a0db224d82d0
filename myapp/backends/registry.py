"""Which backend runs a task: its resource group's cluster, else the platform default.

One backend object per cluster per process (clients and supervisors are reused).
"""
from __future__ import annotations

import os
import threading
from pathlib import Path

from flask import current_app

from ..extensions import db
from ..models import Cluster, ClusterKind, ResourceGroup, Task
from .archive import FileLogArchive
from .base import Backend

_lock = threading.Lock()
_backends: dict[object, Backend] = {}


def _local() -> Backend:
    from .local import LocalBackend

    # Jobs that call back (model-register) reach this platform, not the in-cluster service name.
    return LocalBackend(local_workdir(), override_env={"PLATFORM_API_URL": api_url(), "MYAPP_API_URL": api_url()},
                        environments=Path(current_app.config["INSTANCE_PATH"]) / "environments")


def api_url() -> str:
    """Where local jobs reach the platform: MYAPP_API_URL (`myapp run` sets it to the address it listens
    on), else MYAPP_BASE_URL."""
    return os.environ.get("MYAPP_API_URL") or current_app.config["MYAPP_BASE_URL"]


def local_workdir() -> Path:
    return Path(current_app.config["INSTANCE_PATH"]) / "jobs"


def _kubernetes(cluster: Cluster) -> Backend:
    from .kubernetes import KubernetesBackend

    return KubernetesBackend.from_cluster(cluster)


def backend_for(task: Task) -> Backend:
    return backend_for_group(task.resource_group_id)


def backend_for_group(resource_group_id: int | None) -> Backend:
    """The backend of a resource group's cluster (an image build's, a task's), else the default."""
    cluster = None
    if resource_group_id:
        group = db.session.get(ResourceGroup, resource_group_id)
        cluster = db.session.get(Cluster, group.cluster_id) if group else None
    if cluster is None or cluster.kind != ClusterKind.KUBERNETES:
        return default_backend()  # a local cluster is this machine: the one local backend (its supervisors, GPUs)
    key = ("cluster", cluster.id)
    with _lock:
        if key not in _backends:
            _backends[key] = _kubernetes(cluster)
        return _backends[key]


def default_backend() -> Backend:
    """The platform's default backend (what inference services run on: they name no resource group)."""
    key = ("default", current_app.config["MYAPP_BACKEND"])
    with _lock:
        if key not in _backends:
            _backends[key] = _local()
        return _backends[key]


def changed_runs() -> set[int]:
    """Beat's events: the runs whose jobs changed on any backend in use (the default one always, so
    a worker that has not reconciled anything yet still reads the local jobs' markers)."""
    key = ("default", current_app.config["MYAPP_BACKEND"])
    with _lock:
        if key not in _backends:
            _backends[key] = _local()
        backends = list(_backends.values())
    return set().union(*(backend.changed_runs() for backend in backends))


def log_archive() -> FileLogArchive:
    """Where finished attempts' logs are kept, in the instance folder (shared by web and workers)."""
    return FileLogArchive(Path(current_app.config["INSTANCE_PATH"]) / "logs")
