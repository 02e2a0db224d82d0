"""The pod that reads one finished attempt's folder off the project's outputs claim (myapp/outputs/reader.py).

Pure: plain data in, a Pod manifest out. It mounts its own namespace's claim read-only (the claim as a
whole: a ``subPath`` the attempt never created would keep the pod from starting, as the kubelet cannot make
the folder on a read-only mount) and reads the one folder it is given as an argument; runs as nobody under
the restricted pod security every rendered pod has, with no API token, a read-only root filesystem and a
deadline, so a reader the worker lost stops by itself.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from ...outputs.declarations import PATH, VOLUME
from ...outputs.reader import chunk_command, command
from ..contract import MANAGED_BY, MANAGED_BY_LABEL, OUTPUTS_READER_LABEL
from ..security import RESTRICTED_POD, container_security

NOBODY = 65534
MOUNT = "/outputs"  # where the reader sees the project's claim
DIR = re.compile(r"[A-Za-z0-9_-]{1,64}/[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?/[0-9]{1,6}")  # outputs.attempt_dir's
DEADLINE_SECONDS = 300  # the kubelet stops a reader still running by then
FETCH_LABEL = "myapp.io/outputs-fetch"  # beside OUTPUTS_READER_LABEL: "chunk" (a download), "preview", "live"
FILE_LABEL = "myapp.io/outputs-file"  # which file: a reader done with one file never deletes another's
PURPOSES = ("chunk", "preview")


def reader_name(task_run_id: int) -> str:
    return f"myapp-outputs-read-{int(task_run_id)}"


def _file_key(path: str) -> str:
    return hashlib.sha256(path.encode()).hexdigest()[:10]


def chunk_reader_name(task_run_id: int, path: str, index: int, purpose: str = "chunk") -> str:
    """One name per chunk of a file and purpose (a deleted pod keeps its name while it terminates): a worker
    that died mid-way finds the same chunk's reader again, and a preview never adopts a download's reader."""
    prefix = "fetch" if purpose == "chunk" else "preview"
    return f"myapp-outputs-{prefix}-{int(task_run_id)}-{_file_key(path)}-{int(index)}"


def own_selector(labels: Mapping[str, str]) -> str:
    """The selector of the readers a reader's labels say it is one of: its task run's end-of-attempt reader,
    or the readers of one file for one purpose. Readers are deleted by selector (deletecollection), and this
    one never takes the readers of another fetch under way (another file, the other purpose) with it."""
    keys = (OUTPUTS_READER_LABEL, FETCH_LABEL, FILE_LABEL)
    terms = [f"{key}={labels[key]}" for key in keys if key in labels]
    return ",".join(terms if FETCH_LABEL in labels else [*terms, f"!{FETCH_LABEL}"])


def reader_pod(namespace: str, task_run_id: int, relative_dir: str, image: str) -> dict[str, Any]:
    """The reader of task run ``task_run_id``'s folder ``relative_dir`` (``<run>/<task>/<attempt>``)."""
    if not DIR.fullmatch(relative_dir):
        raise ValueError(f"{relative_dir!r} is not an attempt's outputs folder")
    return _pod(namespace, reader_name(task_run_id), {OUTPUTS_READER_LABEL: str(int(task_run_id))},
                command(f"{MOUNT}/{relative_dir}"), image)


def chunk_reader_pod(namespace: str, task_run_id: int, relative_dir: str, path: str, index: int, length: int,
                     image: str, purpose: str = "chunk") -> dict[str, Any]:
    """The reader printing chunk ``index`` (``length`` bytes from ``index * length``) of one file, for a
    download (``chunk``) or a preview (``preview``: the file's start only)."""
    if not DIR.fullmatch(relative_dir) or not PATH.fullmatch(path):
        raise ValueError(f"{relative_dir!r}/{path!r} is not a file in an attempt's outputs folder")
    if purpose not in PURPOSES:
        raise ValueError(f"a chunk reader is for one of {PURPOSES}, not {purpose!r}")
    labels = {OUTPUTS_READER_LABEL: str(int(task_run_id)), FETCH_LABEL: purpose, FILE_LABEL: _file_key(path)}
    return _pod(namespace, chunk_reader_name(task_run_id, path, index, purpose), labels,
                chunk_command(f"{MOUNT}/{relative_dir}/{path}", index * length, length), image)


def live_reader_pod(namespace: str, task_run_id: int, relative_dir: str, path: str, sequence: int, length: int,
                    image: str) -> dict[str, Any]:
    """The reader printing the start (``length`` bytes) of one file of an attempt that still runs (its
    metrics while it runs: myapp/outputs/live.py). The file changes between reads: each read has a name of
    its own (``sequence``), never adopting an earlier read's pod."""
    if not DIR.fullmatch(relative_dir) or not PATH.fullmatch(path):
        raise ValueError(f"{relative_dir!r}/{path!r} is not a file in an attempt's outputs folder")
    labels = {OUTPUTS_READER_LABEL: str(int(task_run_id)), FETCH_LABEL: "live", FILE_LABEL: _file_key(path)}
    return _pod(namespace, f"myapp-outputs-live-{int(task_run_id)}-{_file_key(path)}-{int(sequence)}", labels,
                chunk_command(f"{MOUNT}/{relative_dir}/{path}", 0, length), image)


def _pod(namespace: str, name: str, labels: dict[str, str], argv: list[str], image: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {MANAGED_BY_LABEL: MANAGED_BY, **labels}},
        "spec": {
            "restartPolicy": "Never",
            "activeDeadlineSeconds": DEADLINE_SECONDS,
            "automountServiceAccountToken": False,
            "enableServiceLinks": False,
            "securityContext": {**RESTRICTED_POD, "runAsUser": NOBODY, "runAsGroup": NOBODY},
            "containers": [{
                "name": "reader", "image": image, "command": argv,
                "securityContext": container_security({"readOnlyRootFilesystem": True}),
                "resources": {"requests": {"cpu": "50m", "memory": "64Mi"},
                              "limits": {"cpu": "1", "memory": "256Mi"}},
                "volumeMounts": [{"name": VOLUME, "mountPath": MOUNT, "readOnly": True}],
            }],
            "volumes": [{"name": VOLUME, "persistentVolumeClaim": {"claimName": VOLUME, "readOnly": True}}],
        },
    }
