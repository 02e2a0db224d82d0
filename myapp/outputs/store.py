"""Where the platform reads what attempts wrote and keeps the metrics they report.

``root()/<namespace>/<run>/<task>/<attempt>/`` is what the local backend binds into the job as its
``MYAPP_OUTPUT_DIR`` (myapp/outputs/declarations.py); attempts that ran on Kubernetes are in the S3-compatible store
where one is configured (myapp/outputs/s3.py), else on the project's claim, which the platform cannot
mount: when such an attempt ends, its backend copies the folder here within bounds (a reader pod,
myapp/outputs/reader.py) and lists all of it. When an attempt finishes, the worker lists what is there
and reads ``metrics.jsonl`` into the task run (``record``); the API lists, previews and downloads the
same (``current``, ``open_file``), always inside the attempt's own folder.

Jobs own everything under ``root()/<namespace>`` that they write: every read, listing, zip and delete there
goes through ``myapp.fs.beneath`` from that folder's descriptor, never through a link a job planted or
swapped in (a link or a swap mid-way answers "not found", never a file elsewhere).
"""
from __future__ import annotations

import contextlib
import functools
import json
import logging
import math
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, Protocol, runtime_checkable

import sqlalchemy as sa
from flask import current_app

from ..errors import DomainError, FieldError, Kind
from ..extensions import db
from ..fs import zips
from ..fs.beneath import Folder, Refused
from ..models import TaskRun
from . import reader as outputs_reader
from . import s3 as outputs_s3
from .declarations import METRICS_FILE, PATH, container_path

log = logging.getLogger(__name__)

MAX_FILES = 1000  # listed per attempt; beyond, the list says it was cut
MAX_METRIC_LINES = 20_000
MAX_METRICS_BYTES = 16 * 1024 * 1024  # of metrics.jsonl read
MAX_METRIC_NAME = 128
MAX_VALUES_PER_REPORT = 100  # metric names in one POST
MAX_STEP = 2**53  # what a JSON number holds exactly
PREVIEW_BYTES = 64 * 1024
MAX_ARCHIVE_BYTES = 512 * 1024 * 1024  # what one "download all" zips at most
TEXT_SUFFIXES = frozenset({".txt", ".log", ".json", ".jsonl", ".yaml", ".yml", ".md", ".py", ".csv", ".tsv"})
IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif",
               ".webp": "image/webp"}


def root() -> Path:
    """The local backend's outputs folder (inside its jobs folder, MYAPP_HOME/jobs/outputs)."""
    return Path(current_app.config["INSTANCE_PATH"]) / "jobs" / "outputs"


def outputs_folder(namespace: str) -> Folder:
    """The project's outputs folder, open: the trusted folder (its parent is the platform's) everything
    beneath is reached from. FileNotFoundError when no attempt of the project wrote here yet."""
    if not namespace or "/" in namespace or namespace in (".", ".."):
        raise ValueError(f"invalid namespace {namespace!r}")
    return Folder.open(root() / namespace)


def attempt_folder(attempt: TaskRun, namespace: str) -> Path | None:
    if not attempt.output_dir:
        return None
    return root() / namespace / attempt.output_dir


def preview_kind(path: str) -> str:
    """How the run view shows a file: metrics, csv, text, image or none (download only)."""
    suffix = os.path.splitext(path)[1].lower()
    if os.path.basename(path) == METRICS_FILE:
        return "metrics"
    if suffix in (".csv", ".tsv"):
        return "csv"
    if suffix in TEXT_SUFFIXES:
        return "text"
    if suffix in IMAGE_TYPES:
        return "image"
    return "none"


def list_files(outputs: Folder, relative: str) -> list[dict[str, Any]]:
    """Files under the folder ``relative`` of the outputs folder (relative paths, sizes, preview kinds),
    no link followed or listed."""
    return [{"path": path, "size": size, "preview": preview_kind(path)}
            for path, size in outputs.files(relative, MAX_FILES)]


def parse_metrics(lines: list[str]) -> list[dict[str, Any]]:
    """metrics.jsonl lines -> [{"step", "name", "value"}]; lines that are not such a record are skipped
    (a job's file is its own: half a line at a crash must not lose the rest)."""
    out: list[dict[str, Any]] = []
    for index, line in enumerate(lines[:MAX_METRIC_LINES]):
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        name, value, step = record.get("name"), record.get("value"), record.get("step", index)
        if not isinstance(name, str) or not name or len(name) > MAX_METRIC_NAME:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            continue
        if isinstance(step, bool) or not isinstance(step, int) or abs(step) > 2**53:
            continue
        out.append({"step": step, "name": name, "value": float(value)})
    return out


@runtime_checkable
class ClaimReader(Protocol):
    """A backend whose jobs write a claim the platform cannot mount (Kubernetes): it copies an ended
    attempt's folder into the platform's (``into``) and lists all of it."""

    def fetch_outputs(self, namespace: str, task_run_id: int, relative_dir: str,
                      into: Path) -> outputs_reader.Listing: ...


def on_claim(attempt: TaskRun) -> bool:
    """Did the attempt write a Kubernetes claim (no S3 store), where the platform keeps only a copy?"""
    return attempt.backend == "kubernetes" and bool(attempt.output_dir) and outputs_s3.settings() is None


def _store(attempt: TaskRun) -> outputs_s3.Store | None:
    """The S3-compatible store holding the attempt's folder: where one is configured, for attempts that
    ran on Kubernetes (the local backend always writes this machine's folder)."""
    store = outputs_s3.settings()
    if store is None or attempt.backend != "kubernetes" or not attempt.output_dir:
        return None
    return outputs_s3.store(store)


def listing(attempt: TaskRun, namespace: str) -> list[dict[str, Any]] | None:
    """What the attempt's folder holds now (None: it has no folder here, e.g. a cluster's claim)."""
    store = _store(attempt)
    if store is not None:
        assert attempt.output_dir is not None
        return [{"path": path, "size": size, "preview": preview_kind(path)}
                for path, size in store.list(namespace, attempt.output_dir, MAX_FILES) if PATH.fullmatch(path)]
    if not attempt.output_dir:
        return None
    try:
        with outputs_folder(namespace) as outputs:
            return list_files(outputs, attempt.output_dir)
    except (FileNotFoundError, Refused):  # not here (a cluster's claim), or not a folder any more
        return None


def _metrics_file(attempt: TaskRun, namespace: str) -> list[dict[str, Any]]:
    try:
        with open_file(attempt, namespace, METRICS_FILE, MAX_METRICS_BYTES) as fh:
            return parse_metrics(fh.read(MAX_METRICS_BYTES).decode("utf-8", errors="replace").splitlines())
    except DomainError as exc:
        if exc.kind == Kind.NOT_FOUND:
            return []
        raise


def current(attempt: TaskRun, namespace: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Files and metrics as the run view shows them: kept with the row once the attempt has ended, read
    from its folder (or the store) before, with the posted metrics after the file's, as record() keeps them."""
    files, metrics = attempt.outputs, attempt.reported_metrics or []
    if files is None:
        now = listing(attempt, namespace)
        if now is not None:
            files, metrics = now, _metrics_file(attempt, namespace) + metrics
    return files or [], metrics


def record(attempt: TaskRun, namespace: str, backend: object = None) -> None:
    """What a finished attempt left in its folder (or the store, or the claim through ``backend``),
    kept with the task run.

    The row's metrics until now are those the task posted to the API (``report``): the file's go first,
    then those. The row is read again under its lock, so a post committed meanwhile is kept and a later
    one finds the attempt finished."""
    try:
        claimed = on_claim(attempt)
        files = _copy_from_claim(attempt, namespace, backend) if claimed else listing(attempt, namespace)
        metrics = _metrics_file(attempt, namespace) if files is not None else []
    except DomainError as exc:  # the store cannot answer now: the run view reads it live later instead
        log.warning("outputs of task run %s not recorded: %s", attempt.id, exc.message)
        return
    if files is None:
        return
    attempt.outputs = files
    db.session.flush()  # the state it ended in goes first: lock() reads the row back over the object
    merged = metrics + (lock(attempt.id).reported_metrics or [])
    attempt.reported_metrics = merged[:MAX_METRIC_LINES] or None


def _copy_from_claim(attempt: TaskRun, namespace: str, backend: object) -> list[dict[str, Any]] | None:
    """The attempt's files on the claim, copied here within outputs_reader's bounds; None when there is
    nothing to read (never submitted, or no backend that can read the claim) or the reader failed
    (said in the log: the files stay on the claim, the run goes on)."""
    folder = attempt_folder(attempt, namespace)
    if folder is None or not attempt.backend_ref or not isinstance(backend, ClaimReader):
        return None
    try:
        copied = backend.fetch_outputs(namespace, attempt.id, str(attempt.output_dir), folder)
    except RuntimeError as exc:  # BackendError (this module does not import the backends)
        log.warning("outputs of task run %s not copied from the claim: %s", attempt.id, exc)
        with contextlib.suppress(FileNotFoundError), outputs_folder(namespace) as outputs:
            outputs.remove_tree(str(attempt.output_dir))  # a copy cut short must not pass for the outputs
        return None
    return outputs_reader.kept_files(copied, preview_kind)


def lock(attempt_id: int) -> TaskRun:
    """Write the task run's row (its lock until the commit, on PostgreSQL and SQLite alike) and read
    it back fresh: reports of one attempt append in turn, and the end of the attempt waits for them."""
    return db.session.scalars(
        sa.update(TaskRun).where(TaskRun.id == attempt_id).values(reported_metrics=TaskRun.reported_metrics)
        .returning(TaskRun).execution_options(populate_existing=True)).one()


def report(attempt: TaskRun, step: int, values: Mapping[str, Any]) -> int:
    """Metrics a task posts through the API (``POST /api/v1/task_run/{id}/reported_metrics``), kept
    with its attempt like those of metrics.jsonl; the caller has locked the row (``lock``). Returns how many the
    attempt keeps. FieldError naming the value; a finished attempt or a full one is a conflict."""
    if attempt.is_finished:
        raise DomainError(f"task run {attempt.id} has {attempt.state.value}: it reports no more metrics",
                          kind=Kind.CONFLICT)
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step <= MAX_STEP:
        raise FieldError("step", f"must be an integer from 0 to {MAX_STEP}")
    if not isinstance(values, Mapping) or not 1 <= len(values) <= MAX_VALUES_PER_REPORT:
        raise FieldError("values", f"must map 1 to {MAX_VALUES_PER_REPORT} metric names to numbers")
    new = []
    for name, value in sorted(values.items()):  # one order whatever the client's JSON
        if not isinstance(name, str) or not name or len(name) > MAX_METRIC_NAME or not name.isprintable():
            raise FieldError(f"values.{name}", f"metric names are 1 to {MAX_METRIC_NAME} printable characters")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise FieldError(f"values.{name}", "must be a finite number")
        new.append({"step": step, "name": name, "value": float(value)})
    kept = list(attempt.reported_metrics or [])
    if len(kept) + len(new) > MAX_METRIC_LINES:
        raise DomainError(f"task run {attempt.id} already keeps {len(kept)} metric values, at most "
                          f"{MAX_METRIC_LINES}", kind=Kind.CONFLICT)
    attempt.reported_metrics = kept + new  # a new list: the JSON column sees the change
    return len(attempt.reported_metrics)


def open_file(attempt: TaskRun, namespace: str, path: str, max_bytes: int | None = None) -> IO[bytes]:
    """The file at path in the attempt's folder (or the store), open for reading (the first max_bytes
    at least, when given); FieldError for a path that leaves the folder, 404 when absent."""
    if not PATH.fullmatch(path):
        raise FieldError("path", f"{path!r} is not a relative path inside the output folder")
    store = _store(attempt)
    if store is not None:
        assert attempt.output_dir is not None
        return store.open(namespace, attempt.output_dir, path, max_bytes)
    if not attempt.output_dir:
        raise DomainError(f"task run {attempt.id} has no outputs", kind=Kind.NOT_FOUND)
    try:
        with outputs_folder(namespace) as outputs:
            return outputs.open_file(f"{attempt.output_dir}/{path}")
    except (FileNotFoundError, PermissionError, Refused):  # a link on the way is no file of the attempt's
        raise DomainError(missing_message(attempt, path), kind=Kind.NOT_FOUND) from None


def listed_size(attempt: TaskRun, path: str) -> int | None:
    return next((f["size"] for f in attempt.outputs or [] if f.get("path") == path), None)


def missing_message(attempt: TaskRun, path: str) -> str:
    """Why a file is not here: absent, or listed but left on the cluster's claim (beyond the copy's bound)."""
    size = listed_size(attempt, path)
    if size is None or not on_claim(attempt):
        return f"task run {attempt.id} has no output file {path!r}"
    return (f"task run {attempt.id}'s {path!r} ({size} bytes) stayed on the cluster's outputs claim: the platform "
            f"copies at most {outputs_reader.COPY_BYTES // (1024 * 1024)} MiB of an attempt's files; a notebook "
            f"of the project reads it at {container_path(str(attempt.output_dir), path)}")


def delete_run(namespace: str, run_id: int) -> None:
    """A deleted run's outputs: its folder on this machine and in the store (a cluster's claim keeps its
    copy). DomainError when some are left: unavailable when trying again may help (an I/O error, a store that
    cannot be reached), a conflict when it cannot (a link on the way: ``Refused``)."""
    try:
        with outputs_folder(namespace) as outputs:
            outputs.remove_tree(str(int(run_id)))
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise DomainError(f"outputs of deleted run {run_id} left on this machine: {exc}",
                          kind=Kind.UNAVAILABLE) from None
    store = outputs_s3.settings()
    if store is not None:
        outputs_s3.store(store).delete(namespace, str(int(run_id)))


def archive(attempt: TaskRun, namespace: str) -> IO[bytes]:
    """Every file the attempt wrote, as one zip (empty when it wrote nothing); DomainError beyond
    MAX_ARCHIVE_BYTES (the files download one by one then)."""
    files = listing(attempt, namespace) or []
    total = sum(f["size"] for f in files)
    if total > MAX_ARCHIVE_BYTES:
        raise DomainError(f"task run {attempt.id} wrote {total} bytes, more than one archive holds "
                          f"({MAX_ARCHIVE_BYTES}): download its files one by one", kind=Kind.UNPROCESSABLE)
    out: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=16 * 1024 * 1024)  # noqa: SIM115 (returned open)
    store = _store(attempt)
    if store is not None:
        assert attempt.output_dir is not None
        relative_dir = attempt.output_dir
        zips.write(out, [(f["path"], f["size"], functools.partial(store.open, namespace, relative_dir, f["path"],
                                                                  None)) for f in files])
    elif files:  # a file gone or swapped for a link since the listing is left out
        with outputs_folder(namespace) as outputs, outputs.folder(str(attempt.output_dir)) as folder:
            folder.write_zip(out, [(f["path"], f["size"]) for f in files])
    else:
        zips.write(out, [])  # nothing written: an empty zip, still a zip
    out.seek(0)
    return out
