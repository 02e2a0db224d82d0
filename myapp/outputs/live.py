"""An attempt's metrics while it runs on a Kubernetes claim (no S3 store): the platform cannot mount the
claim, so until the attempt ends (when ``store.record`` copies its folder) its ``metrics.jsonl`` is read by a
short-lived reader pod (``LiveReader``: myapp/backends/kubernetes/outputs.py) and kept beside the run's
attempts (``<run>/.live/<task run>-metrics.jsonl`` in the platform's outputs folder, deleted with the run),
never in the attempt's own folder, which only the end-of-attempt copy writes.

Each read costs a pod, so an attempt's file is read again only once its copy is ``MYAPP_CLAIM_METRICS_SECONDS``
old (10 s; the copy's modification time is the clock every worker shares), and only its first
``reader.CHUNK_BYTES`` (4 MiB; more lines than ``store.MAX_METRIC_LINES`` in any usual file). The copy is
replaced whole at each read.

The same way, admission learns when a running attempt's task last saved a complete checkpoint on the project's
checkpoints claim (``last_checkpoint``: what a preemption would lose, myapp/admission/checkpoints.py): a reader
pod lists the task's folder (``CheckpointReader``) at most once per ``MYAPP_CLAIM_CHECKPOINT_SECONDS`` (60 s)
per task, and its answer, the newest complete checkpoint's manifest, is kept at
``<run>/.live/checkpoint-<task>.json``."""
from __future__ import annotations

import json
import logging
import math
import time
from typing import Any, Protocol, runtime_checkable

from flask import current_app

from ..fs.beneath import Folder, Refused
from ..models import TaskRun
from . import reader as outputs_reader
from .checkpoints import TASK_DIR
from .declarations import METRICS_FILE
from .store import MAX_METRICS_BYTES, on_claim, parse_metrics, root

log = logging.getLogger(__name__)

LIVE_FOLDER = ".live"  # beside the run's attempts, as fetches' .fetch


@runtime_checkable
class LiveReader(Protocol):
    """A backend that reads the start of a running attempt's file off the claim (KubernetesBackend)."""

    def read_running_output(self, namespace: str, task_run_id: int, relative_dir: str, path: str,
                            length: int) -> outputs_reader.Chunk: ...


@runtime_checkable
class CheckpointReader(Protocol):
    """A backend that lists a running attempt's checkpoint folder off the claim (KubernetesBackend)."""

    def read_checkpoint(self, namespace: str, task_run_id: int, relative_dir: str) -> dict[str, Any] | None: ...


def pace(setting: str = "MYAPP_CLAIM_METRICS_SECONDS") -> float:
    """Seconds between two reads of one claim's file: read and checked at start (myapp/config.py)."""
    return float(current_app.config[setting])


def copy_name(attempt: TaskRun) -> str:
    """Where the running attempt's metrics are kept, beneath the project's outputs folder."""
    return f"{int(attempt.pipeline_run_id)}/{LIVE_FOLDER}/{int(attempt.id)}-{METRICS_FILE}"


def read(attempt: TaskRun, namespace: str) -> list[dict[str, Any]]:
    """The metrics of the last copy read off the claim (none yet: [])."""
    try:
        with Folder.open(root() / namespace) as outputs:
            data = outputs.read(copy_name(attempt), MAX_METRICS_BYTES)
    except (OSError, Refused):  # none yet, or not a file of the platform's any more
        return []
    return parse_metrics(data[:MAX_METRICS_BYTES].decode("utf-8", errors="replace").splitlines())


def refresh(attempt: TaskRun, namespace: str, backend: object) -> bool:
    """Copy the running attempt's metrics.jsonl off its claim when the copy here is older than pace();
    whether it was copied. A file not written yet, or a reader that fails, leaves the copy as it was (or
    empty) for another pace (said in the log at debug level)."""
    if attempt.is_finished or not attempt.backend_ref or not on_claim(attempt) \
            or not isinstance(backend, LiveReader):
        return False
    relative = copy_name(attempt)
    try:
        with Folder.open(root() / namespace, create=True) as outputs:
            try:
                age = time.time() - outputs.stat(relative).st_mtime
            except FileNotFoundError:
                age = float("inf")
            if age < pace():
                return False
            try:
                chunk = backend.read_running_output(namespace, attempt.id, str(attempt.output_dir), METRICS_FILE,
                                                    outputs_reader.CHUNK_BYTES)
            except RuntimeError as exc:  # BackendError (this package does not import the backends)
                log.debug("metrics of running task run %s not read off the claim: %s", attempt.id, exc)
                chunk = None
            outputs.make_dirs(relative.rpartition("/")[0])
            if chunk is not None:
                outputs.write(relative, chunk.data)
            elif age == float("inf"):
                outputs.write(relative, b"")  # the pace holds for failed reads too: one reader per pace
            else:
                outputs.utime(relative)
            return chunk is not None
    except (OSError, Refused) as exc:
        log.warning("metrics of running task run %s not kept: %s", attempt.id, exc)
        return False


def last_checkpoint(namespace: str, task_run_id: int, relative_dir: str, backend: CheckpointReader
                    ) -> dict[str, Any] | None:
    """The newest complete checkpoint's manifest of the task folder ``relative_dir`` (``<run>/<task>``) where
    attempt ``task_run_id`` runs, as last read off the claim: read again when that answer is older than its
    pace. A read that fails keeps the last answer (a checkpoint once complete stays the newest known) for
    another pace; None: none saved yet, or none known."""
    if not TASK_DIR.fullmatch(relative_dir):
        return None
    run, _, task = relative_dir.partition("/")
    relative = f"{run}/{LIVE_FOLDER}/checkpoint-{task}.json"
    try:
        with Folder.open(root() / namespace, create=True) as outputs:
            try:
                age = time.time() - outputs.stat(relative).st_mtime
            except FileNotFoundError:
                age = math.inf
            if age >= pace("MYAPP_CLAIM_CHECKPOINT_SECONDS"):
                outputs.make_dirs(relative.rpartition("/")[0])
                try:
                    outputs.write(relative, json.dumps(backend.read_checkpoint(namespace, task_run_id,
                                                                               relative_dir)).encode())
                except RuntimeError as exc:  # BackendError (this package does not import the backends)
                    log.debug("checkpoints of running task run %s not read off the claim: %s", task_run_id, exc)
                    if age == math.inf:
                        outputs.write(relative, b"null")  # the pace holds for failed reads too
                    else:
                        outputs.utime(relative)
            manifest = json.loads(outputs.read(relative, 2 * outputs_reader.MAX_MANIFEST_BYTES))
    except (OSError, Refused, ValueError) as exc:
        log.warning("checkpoints of running task run %s not known: %s", task_run_id, exc)
        return None
    return manifest if isinstance(manifest, dict) else None
