"""Where the platform reads what attempts wrote and keeps the metrics they report.

``root()/<namespace>/<run>/<task>/<attempt>/`` is what the local backend binds into the job as its
``MYAPP_OUTPUT_DIR`` (myapp/outputs.py); attempts that ran on Kubernetes are in the S3-compatible store
where one is configured (myapp/outputs_s3.py), else on the project's claim, which the platform cannot
mount: when such an attempt ends, its backend copies the folder here within bounds (a reader pod,
myapp/outputs_reader.py) and lists all of it. When an attempt finishes, the worker lists what is there
and reads ``metrics.jsonl`` into the task run (``record``); the API lists, previews and downloads the
same (``current``, ``open_file``), always inside the attempt's own folder.
"""
from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import shutil
import tempfile
import time
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any, Protocol, runtime_checkable

import sqlalchemy as sa
from flask import current_app

from . import outputs_reader, outputs_s3
from .errors import DomainError, FieldError, Kind
from .extensions import db
from .models import TaskRun
from .outputs import METRICS_FILE, PATH, container_path

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


def list_files(folder: Path) -> list[dict[str, Any]]:
    """Files under folder (relative paths, sizes, preview kinds), symlinks not followed."""
    out: list[dict[str, Any]] = []
    for base, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            full = Path(base) / name
            if full.is_symlink() or not full.is_file():
                continue
            relative = full.relative_to(folder).as_posix()
            out.append({"path": relative, "size": full.stat().st_size, "preview": preview_kind(relative)})
            if len(out) >= MAX_FILES:
                return out
    return out


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
    folder = attempt_folder(attempt, namespace)
    return list_files(folder) if folder is not None and folder.is_dir() else None


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
        shutil.rmtree(folder, ignore_errors=True)  # a copy cut short must not pass for the outputs
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
    folder = attempt_folder(attempt, namespace)
    if folder is None:
        raise DomainError(f"task run {attempt.id} has no outputs", kind=Kind.NOT_FOUND)
    full = folder / path
    real_folder = os.path.realpath(folder)
    if os.path.commonpath([os.path.realpath(full), real_folder]) != real_folder or full.is_symlink() \
            or not full.is_file():
        raise DomainError(_missing(attempt, path), kind=Kind.NOT_FOUND)
    return open(full, "rb")


def _listed_size(attempt: TaskRun, path: str) -> int | None:
    return next((f["size"] for f in attempt.outputs or [] if f.get("path") == path), None)


def _missing(attempt: TaskRun, path: str) -> str:
    """Why a file is not here: absent, or listed but left on the cluster's claim (beyond the copy's bound)."""
    size = _listed_size(attempt, path)
    if size is None or not on_claim(attempt):
        return f"task run {attempt.id} has no output file {path!r}"
    return (f"task run {attempt.id}'s {path!r} ({size} bytes) stayed on the cluster's outputs claim: the platform "
            f"copies at most {outputs_reader.COPY_BYTES // (1024 * 1024)} MiB of an attempt's files; a notebook "
            f"of the project reads it at {container_path(str(attempt.output_dir), path)}")


def delete_run(namespace: str, run_id: int) -> None:
    """A deleted run's outputs: its folder on this machine and in the store (a cluster's claim keeps its
    copy). After the commit: a store that cannot be reached leaves its objects, said in the log."""
    shutil.rmtree(root() / namespace / str(int(run_id)), ignore_errors=True)
    store = outputs_s3.settings()
    if store is not None:
        try:
            outputs_s3.store(store).delete(namespace, str(int(run_id)))
        except DomainError as exc:
            log.warning("outputs of deleted run %s left in the store: %s", run_id, exc.message)


def archive(attempt: TaskRun, namespace: str) -> IO[bytes]:
    """Every file the attempt wrote, as one zip (empty when it wrote nothing); DomainError beyond
    MAX_ARCHIVE_BYTES (the files download one by one then)."""
    files = listing(attempt, namespace) or []
    total = sum(f["size"] for f in files)
    if total > MAX_ARCHIVE_BYTES:
        raise DomainError(f"task run {attempt.id} wrote {total} bytes, more than one archive holds "
                          f"({MAX_ARCHIVE_BYTES}): download its files one by one", kind=Kind.UNPROCESSABLE)
    out: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=16 * 1024 * 1024)  # noqa: SIM115 (returned open)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for item in files:
            with open_file(attempt, namespace, item["path"]) as src, zf.open(item["path"], "w") as dst:
                shutil.copyfileobj(src, dst, 1024 * 1024)
    out.seek(0)
    return out


# ---- a file left on the claim, fetched on demand (docs/outputs.md) -------------------------------------------
DEFAULT_FETCH_BYTES = 1024**3  # MYAPP_OUTPUTS_CLAIM_FETCH_BYTES: the largest file fetched
FETCH_STALE_SECONDS = 600  # a marker untouched this long lost its worker (each chunk touches it)
RETRY_AFTER_SECONDS = 5


@runtime_checkable
class ChunkReader(Protocol):
    """A backend that reads one chunk of a file on the claim (KubernetesBackend.fetch_output_chunk), for a
    download (``chunk``) or a preview (``preview``)."""

    def fetch_output_chunk(self, namespace: str, task_run_id: int, relative_dir: str, path: str, index: int,
                           length: int, purpose: str = "chunk") -> outputs_reader.Chunk: ...


def fetch_limit() -> int:
    raw = os.environ.get("MYAPP_OUTPUTS_CLAIM_FETCH_BYTES", "").strip()
    return int(raw) if raw.isdigit() else DEFAULT_FETCH_BYTES


def _fetch_paths(attempt: TaskRun, namespace: str, path: str, preview: bool = False) -> tuple[Path, Path]:
    """The marker (one fetch at a time per file and purpose: who fetches, or why it failed) and the copy being
    written: in the run's folder beside the attempts' (deleted with the run), never inside an attempt's
    (listed). A preview's are its own: its start, once here, never passes for the whole file."""
    key = f"{int(attempt.id)}-{hashlib.sha256(path.encode()).hexdigest()[:16]}{'-preview' if preview else ''}"
    folder = root() / namespace / str(int(attempt.pipeline_run_id)) / ".fetch"
    return folder / f"{key}.json", folder / f"{key}.part"


def _preview_copy(attempt: TaskRun, namespace: str, path: str) -> Path:
    """Where the start of a file left on the claim is kept once fetched for a preview."""
    return _fetch_paths(attempt, namespace, path, preview=True)[0].with_suffix(".bin")


def open_preview(attempt: TaskRun, namespace: str, path: str) -> IO[bytes]:
    """The file's start (PREVIEW_BYTES at least) for a preview: the file itself where it is here, else the
    start a preview fetched off the claim (``fetch_from_claim(preview=True)``); open_file's errors else."""
    try:
        return open_file(attempt, namespace, path, PREVIEW_BYTES)
    except DomainError as exc:
        if exc.kind != Kind.NOT_FOUND or not on_claim(attempt) or _listed_size(attempt, path) is None:
            raise
        try:
            return open(_preview_copy(attempt, namespace, path), "rb")
        except FileNotFoundError:
            raise exc from None


def request_fetch(attempt: TaskRun, namespace: str, path: str, start: Callable[[], None], preview: bool = False,
                  keep_failure: bool = False) -> str | None:
    """A download (or, with ``preview``, a preview: only its first PREVIEW_BYTES) of a file left on the claim:
    the message to answer while it is fetched (``start`` sends the worker's task, only when no such fetch of
    it is under way); None when the file is not such a file. DomainError: a download beyond the per-file
    bound, or the last fetch failed (said once: the next request starts again; ``keep_failure``, for HEAD,
    which has no body to say why, leaves it for the next request to say)."""
    size = _listed_size(attempt, path)
    if size is None or not on_claim(attempt) or attempt_folder(attempt, namespace) is None:
        return None
    if not preview and size > fetch_limit():
        raise DomainError(f"{_missing(attempt, path)}; it is larger than the {fetch_limit()} bytes the platform "
                          "fetches from the cluster (MYAPP_OUTPUTS_CLAIM_FETCH_BYTES)", kind=Kind.UNPROCESSABLE)
    marker, _ = _fetch_paths(attempt, namespace, path, preview)
    marker.parent.mkdir(parents=True, exist_ok=True)
    what = f"the first {PREVIEW_BYTES // 1024} KiB of {path!r}" if preview else repr(path)
    message = (f"{what} ({size} bytes) {'are' if preview else 'is'} being fetched from the cluster's outputs "
               f"claim: ask again in {RETRY_AFTER_SECONDS} s")
    state = _read_marker(marker)
    if state is not None and state.get("state") == "failed":
        if not keep_failure:
            marker.unlink(missing_ok=True)  # answered once; the next request starts again
        raise DomainError(f"fetching {what} from the cluster failed: {state.get('reason')} (ask again to retry)",
                          kind=Kind.UNAVAILABLE)
    if state is not None and time.time() - _mtime(marker) < FETCH_STALE_SECONDS:
        return message
    if state is not None:  # its worker died: set it aside, then race for a new marker like any request
        stale = marker.with_suffix(f".stale-{os.getpid()}-{time.monotonic_ns()}")
        try:
            os.replace(marker, stale)
            stale.unlink()
        except FileNotFoundError:
            pass
    try:
        fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return message  # another request started it a moment ago
    with os.fdopen(fd, "w") as fh:
        json.dump({"state": "fetching", "path": path}, fh)
    try:
        start()
    except Exception:
        marker.unlink(missing_ok=True)
        raise
    return message


def _read_marker(marker: Path) -> dict[str, Any] | None:
    try:
        value = json.loads(marker.read_text() or "{}")
    except FileNotFoundError:
        return None
    except ValueError:  # being written by its creator this instant
        return {"state": "fetching"}
    return value if isinstance(value, dict) else {"state": "fetching"}


def _mtime(marker: Path) -> float:
    try:
        return marker.stat().st_mtime
    except FileNotFoundError:
        return 0.0


def fetch_from_claim(attempt: TaskRun, namespace: str, path: str, backend: object, preview: bool = False) -> bool:
    """The worker's part: copy one listed file off the claim, chunk by chunk (each read by one reader pod,
    checksummed), into a temporary file renamed into the attempt's folder once whole and of the listed
    size; with ``preview``, only its first PREVIEW_BYTES in one chunk, kept beside (``_preview_copy``). A
    failure is kept in the marker for the next request. True when the copy is here."""
    size, folder = _listed_size(attempt, path), attempt_folder(attempt, namespace)
    marker, part = _fetch_paths(attempt, namespace, path, preview)
    done = None
    if size is not None and folder is not None and PATH.fullmatch(path):
        done = _preview_copy(attempt, namespace, path) if preview else folder / path
    if size is None or done is None or done.is_file():
        marker.unlink(missing_ok=True)
        return done is not None
    marker.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps({"state": "fetching", "path": path}))  # this worker's, from now on
    length = PREVIEW_BYTES if preview else outputs_reader.CHUNK_BYTES
    chunks = 1 if preview else max(1, -(-size // length))
    try:
        if not isinstance(backend, ChunkReader) or not attempt.output_dir:
            raise RuntimeError("no backend of the attempt's cluster reads its claim")
        if not preview and size > fetch_limit():
            raise RuntimeError(f"{size} bytes is more than MYAPP_OUTPUTS_CLAIM_FETCH_BYTES ({fetch_limit()})")
        with open(part, "wb") as fh:
            for index in range(chunks):
                chunk = backend.fetch_output_chunk(namespace, attempt.id, attempt.output_dir, path, index, length,
                                                   purpose="preview" if preview else "chunk")
                if chunk.size != size:
                    raise RuntimeError(f"the file on the claim is {chunk.size} bytes now, {size} when listed")
                fh.write(chunk.data)
                os.utime(marker)  # still alive: not stale
            written = fh.tell()
        if written != min(size, length * chunks):
            raise RuntimeError(f"{written} bytes were copied of {min(size, length * chunks)}")
        done.parent.mkdir(parents=True, exist_ok=True)
        os.replace(part, done)
    except (RuntimeError, OSError, ValueError) as exc:  # BackendError among them
        log.warning("output %r of task run %s not fetched from the claim%s: %s", path, attempt.id,
                    " (its preview)" if preview else "", exc)
        part.unlink(missing_ok=True)
        marker.write_text(json.dumps({"state": "failed", "path": path, "reason": str(exc)}))
        return False
    marker.unlink(missing_ok=True)
    return True
