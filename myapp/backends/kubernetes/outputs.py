"""A finished attempt's outputs read off the project's claim by a short-lived reader pod.

The platform cannot mount a project's claim (docs/outputs.md); the worker runs the reader rendered by
``myapp/rendering/kinds/outputs_reader.py`` in the attempt's namespace, waits for it, reads its log and
deletes it, whatever happened. The reader is named after the task run, so a worker that died mid-way
finds it again (409: adopted, the folder has not changed since the attempt ended); readers older than
their deadline that no worker came back for are deleted by the next read in that namespace.
"""
from __future__ import annotations

import datetime as dt
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from ...checkpoint import newest_complete, parse_manifest
from ...outputs.reader import (
    Chunk,
    Listing,
    ReaderOutputError,
    parse,
    parse_checkpoints,
    parse_chunk,
    parse_deleted,
)
from ...rendering.contract import OUTPUTS_READER_LABEL
from ...rendering.kinds.outputs_reader import (
    DEADLINE_SECONDS,
    MAX_DELETED,
    checkpoint_reader_pod,
    checkpoints_delete_pod,
    chunk_reader_pod,
    live_reader_pod,
    own_selector,
    reader_pod,
)
from ..base import BackendError
from .resources import KubeApi
from .retry import KubeApiError

DEFAULT_IMAGE = "python:3.12-slim"  # the reader needs a Python 3; MYAPP_OUTPUTS_READER_IMAGE for a mirror
WAIT_SECONDS = 120.0  # how long the worker waits for a reader (pulling its image the first time included)
LIVE_WAIT_SECONDS = 30.0  # for a running attempt's metrics (fetch_live)
# Waiting reasons no wait cures: the worker gives up at once instead of holding its pass for WAIT_SECONDS.
HOPELESS = frozenset({"ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CreateContainerConfigError",
                      "CreateContainerError"})
CONTAINER = "reader"
log = logging.getLogger(__name__)


class ReaderHost(Protocol):
    """What the reader needs of the KubernetesBackend (backend.py imports this module, so not the class)."""

    api: KubeApi
    poll_interval: float

    def _retry(self, what: str, fn: Callable[[], Any]) -> Any: ...

    def read_pod(self, namespace: str, name: str) -> dict[str, Any]: ...

    def read_container_log(self, namespace: str, pod: str, container: str) -> str: ...


def image() -> str:
    return os.environ.get("MYAPP_OUTPUTS_READER_IMAGE", "").strip() or DEFAULT_IMAGE


def fetch(backend: ReaderHost, namespace: str, task_run_id: int, relative_dir: str, into: Path,
          wait: float = WAIT_SECONDS) -> Listing:
    """What the attempt's folder holds, its files copied into ``into`` within the reader's bounds.
    BackendError when the reader cannot run, fails or answers something incomplete."""
    _sweep(backend, namespace)
    pod = reader_pod(namespace, task_run_id, relative_dir, image())
    lines = _run(backend, pod, wait)
    try:
        return parse(lines, into)
    except ReaderOutputError as exc:
        raise BackendError(f"the outputs reader {pod['metadata']['name']}: {exc}") from None


def fetch_chunk(backend: ReaderHost, namespace: str, task_run_id: int, relative_dir: str, path: str,
                index: int, length: int, purpose: str = "chunk", wait: float = WAIT_SECONDS) -> Chunk:
    """Chunk ``index`` (``length`` bytes from ``index * length``) of one file of the attempt's folder,
    checked against its checksum, by one reader pod deleted whatever happened; ``purpose`` is ``chunk``
    (part of a download) or ``preview`` (the file's start), each with readers of its own."""
    if index == 0:
        _sweep(backend, namespace)
    pod = chunk_reader_pod(namespace, task_run_id, relative_dir, path, index, length, image(), purpose)
    lines = _run(backend, pod, wait)
    try:
        return parse_chunk(lines, index * length, length)
    except ReaderOutputError as exc:
        raise BackendError(f"the outputs reader {pod['metadata']['name']}: {exc}") from None


def fetch_live(backend: ReaderHost, namespace: str, task_run_id: int, relative_dir: str, path: str, length: int,
               wait: float = LIVE_WAIT_SECONDS) -> Chunk:
    """The start (``length`` bytes) of one file of an attempt that still runs, by one reader pod of its own
    (named after the moment of the read), deleted whatever happened. It waits less than an ended attempt's
    reader: a look at an experiment waits for it, and the next look reads again."""
    pod = live_reader_pod(namespace, task_run_id, relative_dir, path, time.time_ns() // 1_000_000, length, image())
    lines = _run(backend, pod, wait)
    try:
        return parse_chunk(lines, 0, length)
    except ReaderOutputError as exc:
        raise BackendError(f"the outputs reader {pod['metadata']['name']}: {exc}") from None


def fetch_checkpoint(backend: ReaderHost, namespace: str, task_run_id: int, relative_dir: str,
                     wait: float = LIVE_WAIT_SECONDS) -> dict[str, Any] | None:
    """The newest complete checkpoint's manifest in a task's folder on the checkpoints claim (the newest whole
    manifest whose data has its size, as the local backend's ``last_checkpoint`` reads it), or None; by one
    reader pod of its own, deleted whatever happened."""
    pod = checkpoint_reader_pod(namespace, task_run_id, relative_dir, time.time_ns() // 1_000_000, image())
    lines = _run(backend, pod, wait)
    try:
        texts, sizes = parse_checkpoints(lines)
    except ReaderOutputError as exc:
        raise BackendError(f"the checkpoint reader {pod['metadata']['name']}: {exc}") from None
    found = [m for name, text in texts.items() if (m := parse_manifest(name, text.encode()))]
    return newest_complete(found, sizes.get)


def delete_checkpoints(backend: ReaderHost, namespace: str, run_ids: list[int], wait: float = WAIT_SECONDS) -> None:
    """Remove the runs' folders from the project's checkpoints claim, MAX_DELETED runs per pod, each pod
    deleted whatever happened; BackendError when one fails (the folders it did not reach stay)."""
    _sweep(backend, namespace)
    ordered = sorted(set(run_ids))
    for start in range(0, len(ordered), MAX_DELETED):
        batch = ordered[start:start + MAX_DELETED]
        pod = checkpoints_delete_pod(namespace, batch, image())
        try:
            parse_deleted(_run(backend, pod, wait), batch)
        except ReaderOutputError as exc:
            raise BackendError(f"{pod['metadata']['name']}: {exc}") from None


def _run(backend: ReaderHost, pod: dict[str, Any], wait: float) -> list[str]:
    """Create the reader (or adopt it: 409), wait for it, return its log lines; deleted whatever happened."""
    namespace, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    core: Any = backend.api.core  # the client's typed API, given plain data as everywhere in resources.py
    try:
        try:
            backend._retry(f"create pod {name}", lambda: core.create_namespaced_pod(
                namespace, body=pod, field_validation="Strict", **backend.api._opts()))
        except KubeApiError as error:
            if error.status != 409:  # 409: a worker that died mid-way made it; it reads the same thing
                raise
        phase = _wait(backend, namespace, name, wait)
        text = backend.read_container_log(namespace, name, CONTAINER)
        lines = [line.split(" ", 1)[1] if " " in line else "" for line in text.splitlines()]
        if phase != "Succeeded":
            raise BackendError(f"the outputs reader {name} {phase.lower()}: {' | '.join(lines[-3:]) or 'no output'}")
        return lines
    finally:
        try:
            _delete(backend, namespace, own_selector(pod["metadata"]["labels"]))
        except BackendError as exc:  # the answer stands; a later read in the namespace sweeps it
            log.warning("outputs reader %s/%s left behind: %s", namespace, name, exc)


def _wait(backend: ReaderHost, namespace: str, name: str, wait: float) -> str:
    deadline = time.monotonic() + wait
    while True:
        pod = backend.read_pod(namespace, name)
        phase = str((pod.get("status") or {}).get("phase") or "Pending")
        if phase in ("Succeeded", "Failed"):
            return phase
        waiting = [(c.get("state") or {}).get("waiting") or {} for c in (pod.get("status") or {}).get(
            "containerStatuses") or []]
        hopeless = [w for w in waiting if w.get("reason") in HOPELESS]
        if hopeless:
            raise BackendError(f"the outputs reader {name} cannot start: {hopeless[0]['reason']}: "
                               f"{hopeless[0].get('message') or ''}".rstrip(": "))
        if time.monotonic() >= deadline:
            raise BackendError(f"the outputs reader {name} did not finish within {wait:g} s (phase {phase})")
        time.sleep(backend.poll_interval)


def _sweep(backend: ReaderHost, namespace: str) -> None:
    """Readers a crashed worker left behind: past their deadline and the wait, no one reads them any more."""
    pods = backend._retry("list outputs readers", lambda: backend.api.list_pods(namespace, OUTPUTS_READER_LABEL))
    cutoff = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=DEADLINE_SECONDS + WAIT_SECONDS)
    for pod in pods:
        labels = (pod.get("metadata") or {}).get("labels") or {}
        if str(labels.get(OUTPUTS_READER_LABEL, "")).isdigit() and _created(pod) < cutoff:
            _delete(backend, namespace, own_selector(labels))


def _delete(backend: ReaderHost, namespace: str, selector: str) -> None:
    """By label (deletecollection: the worker may not delete single pods by name, only select them)."""
    backend._retry(f"delete pods {selector}", lambda: backend.api.delete_pods(namespace, selector))


def _created(pod: dict[str, Any]) -> dt.datetime:
    stamp = str((pod.get("metadata") or {}).get("creationTimestamp") or "")
    try:
        return dt.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return dt.datetime.now(dt.UTC)  # unknown: not old
