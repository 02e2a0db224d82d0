"""The pod that reads one finished attempt's folder off the project's outputs claim (myapp/outputs/reader.py),
and its kin: the readers of one file, of a running attempt's file, of a task's checkpoint folder (on the
checkpoints claim), and the pod that removes deleted runs' checkpoint folders.

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

from ...outputs.checkpoints import TASK_DIR
from ...outputs.checkpoints import VOLUME as CHECKPOINTS
from ...outputs.declarations import PATH, VOLUME
from ...outputs.reader import checkpoints_command, chunk_command, command, delete_command
from ..contract import MANAGED_BY, MANAGED_BY_LABEL, OUTPUTS_READER_LABEL
from ..security import RESTRICTED_POD, container_security

NOBODY = 65534
ROOT = 0
MOUNT = "/outputs"  # where the reader sees the project's claim
CHECKPOINTS_MOUNT = "/checkpoints"  # where a checkpoint reader or delete sees the project's checkpoints claim
MAX_DELETED = 500  # run folders one delete pod removes (its argv stays small)
DIR = re.compile(r"[A-Za-z0-9_-]{1,64}/[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?/[0-9]{1,6}")  # outputs.attempt_dir's
DEADLINE_SECONDS = 300  # the kubelet stops a reader still running by then
# beside OUTPUTS_READER_LABEL: "chunk" (a download), "preview", "live", "checkpoint", "checkpoints-delete"
FETCH_LABEL = "myapp.io/outputs-fetch"
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


def checkpoint_reader_pod(namespace: str, task_run_id: int, relative_dir: str, sequence: int,
                          image: str) -> dict[str, Any]:
    """The reader listing the task's checkpoint folder (``<run>/<task>`` on the checkpoints claim) while its
    attempt ``task_run_id`` runs: what cost-aware preemption weighs (myapp/outputs/live.py). Each read has a
    name of its own (``sequence``): the folder changes between reads."""
    if not TASK_DIR.fullmatch(relative_dir):
        raise ValueError(f"{relative_dir!r} is not a task's checkpoint folder")
    labels = {OUTPUTS_READER_LABEL: str(int(task_run_id)), FETCH_LABEL: "checkpoint"}
    return _pod(namespace, f"myapp-checkpoint-read-{int(task_run_id)}-{int(sequence)}", labels,
                checkpoints_command(f"{CHECKPOINTS_MOUNT}/{relative_dir}"), image, CHECKPOINTS, CHECKPOINTS_MOUNT)


def checkpoints_delete_pod(namespace: str, run_ids: list[int], image: str) -> dict[str, Any]:
    """The pod removing deleted runs' folders from the project's checkpoints claim. It runs as root, the only
    user that owns what the training templates wrote there (their images run as root; the kubelet makes each
    subPath folder as root), still without any capability, so nothing outside the claim's ownership rules;
    labelled after its first run, named after them all (a worker that died mid-way finds it again)."""
    if not 0 < len(run_ids) <= MAX_DELETED:
        raise ValueError(f"a delete takes 1 to {MAX_DELETED} runs, not {len(run_ids)}")
    key = _file_key(",".join(str(int(r)) for r in run_ids))
    labels = {OUTPUTS_READER_LABEL: str(int(run_ids[0])), FETCH_LABEL: "checkpoints-delete", FILE_LABEL: key}
    return _pod(namespace, f"myapp-checkpoints-delete-{int(run_ids[0])}-{key}", labels,
                delete_command(CHECKPOINTS_MOUNT, run_ids), image, CHECKPOINTS, CHECKPOINTS_MOUNT, user=ROOT)


def _pod(namespace: str, name: str, labels: dict[str, str], argv: list[str], image: str, claim: str = VOLUME,
         mount: str = MOUNT, user: int = NOBODY) -> dict[str, Any]:
    """A reader (read-only, as nobody), or with ``user`` root the checkpoints' delete (the claim writable)."""
    writes = user == ROOT
    pod_security = {**RESTRICTED_POD, "runAsUser": user, "runAsGroup": user}
    if writes:
        del pod_security["runAsNonRoot"]
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": {MANAGED_BY_LABEL: MANAGED_BY, **labels}},
        "spec": {
            "restartPolicy": "Never",
            "activeDeadlineSeconds": DEADLINE_SECONDS,
            "automountServiceAccountToken": False,
            "enableServiceLinks": False,
            "securityContext": pod_security,
            "containers": [{
                "name": "reader", "image": image, "command": argv,
                "securityContext": container_security({"readOnlyRootFilesystem": True}),
                "resources": {"requests": {"cpu": "50m", "memory": "64Mi"},
                              "limits": {"cpu": "1", "memory": "256Mi"}},
                "volumeMounts": [{"name": claim, "mountPath": mount, "readOnly": not writes}],
            }],
            "volumes": [{"name": claim, "persistentVolumeClaim": {"claimName": claim, "readOnly": not writes}}],
        },
    }
