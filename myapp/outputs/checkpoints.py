"""The checkpoint folder: one per task of a run, kept across its attempts, so the next attempt resumes.

Pure (no Flask, no database): rendering mounts it, the local backend binds it, the docs describe it.

Layout, the same inside every job whatever the backend: the project's checkpoints volume (a claim of
its own, ``VOLUME``, never swapped for an emptyDir like the outputs volume can be) holds a folder per
task of a run, ``<run>/<task>``; every attempt of that task mounts it read-write at
``MOUNT/<run>/<task>`` and gets its path as ``MYAPP_CHECKPOINT_DIR``. A template says its jobs use it
(template.yaml ``checkpoints: true``); a task turns it off with the argument ``checkpoint: false``,
then nothing is mounted and the variable is not set. What goes in it is the job's: the helper
``myapp.checkpoint`` writes each checkpoint atomically and loads the newest complete one.
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from .declarations import mounted_subpath, shared_claim

MOUNT = "/myapp/checkpoints"
VOLUME = "myapp-checkpoints"  # the pod volume's name, and the project's PersistentVolumeClaim's
ENV = "MYAPP_CHECKPOINT_DIR"
DEFAULT_SIZE = "20Gi"
# The task argument that turns checkpointing off for one task (added to every template that checkpoints).
SWITCH_ARG = "checkpoint"
SWITCH = {"type": "boolean", "default": True,
          "description": "Keep checkpoints in MYAPP_CHECKPOINT_DIR across attempts and resume from the newest one "
                         "(false: every attempt starts over, and a preemption counts all its work as lost)."}
# Where the template's grace period (SIGTERM -> grace -> SIGKILL, seconds) is kept in its argument schema.
GRACE_KEY = "x-grace-period"
MAX_GRACE = 3600
TASK_DIR = re.compile(r"[A-Za-z0-9_-]{1,64}/[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")


def task_dir(run_id: int | str, task: str) -> str:
    """The task's checkpoint folder, relative to the checkpoints volume."""
    return f"{run_id}/{task}"


def container_path(relative_dir: str) -> str:
    return f"{MOUNT}/{relative_dir}"


def enabled(template: Mapping[str, Any], args: Mapping[str, Any]) -> bool:
    """Whether a task of this template with these (checked) arguments keeps checkpoints."""
    return bool(template.get("checkpoints")) and args.get(SWITCH_ARG, True) is not False


def mount(pod_spec: dict[str, Any], relative_dir: str) -> None:
    """Mount the task's checkpoint folder read-write in every container of a pod and say where."""
    volumes = [v for v in pod_spec.get("volumes") or [] if v.get("name") != VOLUME]
    pod_spec["volumes"] = [*volumes, {"name": VOLUME, "persistentVolumeClaim": {"claimName": VOLUME}}]
    for group in ("initContainers", "containers"):
        for container in pod_spec.get(group) or []:
            mounts = [m for m in container.get("volumeMounts") or [] if m.get("name") != VOLUME]
            container["volumeMounts"] = [
                *mounts, {"name": VOLUME, "mountPath": container_path(relative_dir), "subPath": relative_dir}]
            env = [e for e in container.get("env") or [] if e.get("name") != ENV]
            container["env"] = [*env, {"name": ENV, "value": container_path(relative_dir)}]


def claim_manifest(namespace: str) -> dict[str, Any]:
    """The project's checkpoints PersistentVolumeClaim (ReadWriteMany: every replica of a gang writes
    there), rendered with each attempt that mounts it (an existing one is adopted), never deleted with one.
    Storage class and size: MYAPP_CHECKPOINTS_STORAGE_CLASS (else the outputs' class, else the cluster's
    default) and MYAPP_CHECKPOINTS_SIZE (20Gi), read at render time."""
    size = os.environ.get("MYAPP_CHECKPOINTS_SIZE", "").strip() or DEFAULT_SIZE
    storage_class = (os.environ.get("MYAPP_CHECKPOINTS_STORAGE_CLASS", "").strip()
                     or os.environ.get("MYAPP_OUTPUTS_STORAGE_CLASS", "").strip())
    return shared_claim(VOLUME, namespace, size, storage_class)


def mounted_dir(manifests: list[Mapping[str, Any]]) -> str | None:
    """The task checkpoint folder (relative) the manifests mount, or None."""
    return mounted_subpath(manifests, VOLUME, writable=False)


def check_grace(value: Any) -> int:
    """template.yaml ``grace_period``: whole seconds between SIGTERM and SIGKILL (ValueError otherwise)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_GRACE:
        raise ValueError(f"must be whole seconds from 0 to {MAX_GRACE}, got {value!r}")
    return value

