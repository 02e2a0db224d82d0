"""A file an attempt on a cluster left on its claim (beyond the copy's bound), fetched on demand
(docs/outputs.md): the API asks (``request_fetch``: one fetch at a time per file, said by a marker), the worker
copies it chunk by chunk (``fetch_from_claim``) into the attempt's folder here, or only its start for a
preview (``open_preview`` serves either). Markers and copies live beneath the project's outputs folder and
are reached through ``myapp.fs.beneath`` like everything there."""
from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import stat
import time
from collections.abc import Callable
from typing import IO, Any, Protocol, runtime_checkable

from ..errors import DomainError, Kind
from ..fs.beneath import Folder, Refused
from ..models import TaskRun
from . import reader as outputs_reader
from .declarations import PATH
from .store import PREVIEW_BYTES, listed_size, missing_message, on_claim, open_file, outputs_folder, root

log = logging.getLogger(__name__)

DEFAULT_FETCH_BYTES = 1024**3  # MYAPP_OUTPUTS_CLAIM_FETCH_BYTES: the largest file fetched
FETCH_STALE_SECONDS = 600  # a marker untouched this long lost its worker (each chunk touches it)
RETRY_AFTER_SECONDS = 5
FETCH_FOLDER = ".fetch"


@runtime_checkable
class ChunkReader(Protocol):
    """A backend that reads one chunk of a file on the claim (KubernetesBackend.fetch_output_chunk), for a
    download (``chunk``) or a preview (``preview``)."""

    def fetch_output_chunk(self, namespace: str, task_run_id: int, relative_dir: str, path: str, index: int,
                           length: int, purpose: str = "chunk") -> outputs_reader.Chunk: ...


def fetch_limit() -> int:
    raw = os.environ.get("MYAPP_OUTPUTS_CLAIM_FETCH_BYTES", "").strip()
    return int(raw) if raw.isdigit() else DEFAULT_FETCH_BYTES


def _fetch_names(attempt: TaskRun, path: str, preview: bool = False) -> tuple[str, str]:
    """The marker (one fetch at a time per file and purpose: who fetches, or why it failed) and the copy being
    written, beneath the project's outputs folder: in the run's folder beside the attempts' (deleted with the
    run), never inside an attempt's (listed). A preview's are its own: its start, once here, never passes for
    the whole file."""
    key = f"{int(attempt.id)}-{hashlib.sha256(path.encode()).hexdigest()[:16]}{'-preview' if preview else ''}"
    folder = f"{int(attempt.pipeline_run_id)}/{FETCH_FOLDER}"
    return f"{folder}/{key}.json", f"{folder}/{key}.part"


def _preview_copy(attempt: TaskRun, path: str) -> str:
    """Where the start of a file left on the claim is kept once fetched for a preview."""
    return _fetch_names(attempt, path, preview=True)[0].removesuffix(".json") + ".bin"


def _fetch_folder(namespace: str) -> Folder:
    """The outputs folder a fetch writes in (made on the first fetch of a project that ran only on a cluster)."""
    if not namespace or "/" in namespace or namespace in (".", ".."):
        raise ValueError(f"invalid namespace {namespace!r}")
    return Folder.open(root() / namespace, create=True)


def open_preview(attempt: TaskRun, namespace: str, path: str) -> IO[bytes]:
    """The file's start (PREVIEW_BYTES at least) for a preview: the file itself where it is here, else the
    start a preview fetched off the claim (``fetch_from_claim(preview=True)``); open_file's errors else."""
    try:
        return open_file(attempt, namespace, path, PREVIEW_BYTES)
    except DomainError as exc:
        if exc.kind != Kind.NOT_FOUND or not on_claim(attempt) or listed_size(attempt, path) is None:
            raise
        try:
            with outputs_folder(namespace) as outputs:
                return outputs.open_file(_preview_copy(attempt, path))
        except (FileNotFoundError, Refused):
            raise exc from None


def request_fetch(attempt: TaskRun, namespace: str, path: str, start: Callable[[], None], preview: bool = False,
                  keep_failure: bool = False) -> str | None:
    """A download (or, with ``preview``, a preview: only its first PREVIEW_BYTES) of a file left on the claim:
    the message to answer while it is fetched (``start`` sends the worker's task, only when no such fetch of
    it is under way); None when the file is not such a file. DomainError: a download beyond the per-file
    bound, or the last fetch failed (said once: the next request starts again; ``keep_failure``, for HEAD,
    which has no body to say why, leaves it for the next request to say)."""
    size = listed_size(attempt, path)
    if size is None or not on_claim(attempt) or not attempt.output_dir:
        return None
    if not preview and size > fetch_limit():
        raise DomainError(f"{missing_message(attempt, path)}; it is larger than the {fetch_limit()} bytes the platform "
                          "fetches from the cluster (MYAPP_OUTPUTS_CLAIM_FETCH_BYTES)", kind=Kind.UNPROCESSABLE)
    marker, _ = _fetch_names(attempt, path, preview)
    what = f"the first {PREVIEW_BYTES // 1024} KiB of {path!r}" if preview else repr(path)
    message = (f"{what} ({size} bytes) {'are' if preview else 'is'} being fetched from the cluster's outputs "
               f"claim: ask again in {RETRY_AFTER_SECONDS} s")
    with _fetch_folder(namespace) as outputs:
        outputs.make_dirs(marker.rpartition("/")[0])
        state = _read_marker(outputs, marker)
        if state is not None and state.get("state") == "failed":
            if not keep_failure:
                outputs.remove(marker)  # answered once; the next request starts again
            raise DomainError(f"fetching {what} from the cluster failed: {state.get('reason')} (ask again to "
                              "retry)", kind=Kind.UNAVAILABLE)
        if state is not None and time.time() - _mtime(outputs, marker) < FETCH_STALE_SECONDS:
            return message
        if state is not None:  # its worker died: set it aside, then race for a new marker like any request
            stale = f"{marker}.stale-{os.getpid()}-{time.monotonic_ns()}"
            with contextlib.suppress(FileNotFoundError):
                outputs.replace(marker, stale)
                outputs.remove(stale)
        try:
            with outputs.create(marker) as fh:
                fh.write(json.dumps({"state": "fetching", "path": path}).encode())
        except FileExistsError:
            return message  # another request started it a moment ago
        try:
            start()
        except Exception:
            outputs.remove(marker)
            raise
    return message


def _read_marker(outputs: Folder, marker: str) -> dict[str, Any] | None:
    try:
        value = json.loads(outputs.read(marker, 1024 * 1024) or b"{}")
    except FileNotFoundError:
        return None
    except ValueError:  # being written by its creator this instant
        return {"state": "fetching"}
    return value if isinstance(value, dict) else {"state": "fetching"}


def _mtime(outputs: Folder, marker: str) -> float:
    try:
        return outputs.stat(marker).st_mtime
    except FileNotFoundError:
        return 0.0


def fetch_from_claim(attempt: TaskRun, namespace: str, path: str, backend: object, preview: bool = False) -> bool:
    """The worker's part: copy one listed file off the claim, chunk by chunk (each read by one reader pod,
    checksummed), into a temporary file renamed into the attempt's folder once whole and of the listed
    size; with ``preview``, only its first PREVIEW_BYTES in one chunk, kept beside (``_preview_copy``). A
    failure is kept in the marker for the next request. True when the copy is here."""
    size = listed_size(attempt, path)
    marker, part = _fetch_names(attempt, path, preview)
    done = None
    if size is not None and attempt.output_dir and PATH.fullmatch(path):
        done = _preview_copy(attempt, path) if preview else f"{attempt.output_dir}/{path}"
    with _fetch_folder(namespace) as outputs:
        if size is None or done is None or _is_file(outputs, done):
            outputs.remove(marker)
            return done is not None
        outputs.make_dirs(marker.rpartition("/")[0])
        outputs.write(marker, json.dumps({"state": "fetching", "path": path}).encode())  # this worker's now
        length = PREVIEW_BYTES if preview else outputs_reader.CHUNK_BYTES
        chunks = 1 if preview else max(1, -(-size // length))
        try:
            if not isinstance(backend, ChunkReader) or not attempt.output_dir:
                raise RuntimeError("no backend of the attempt's cluster reads its claim")
            if not preview and size > fetch_limit():
                raise RuntimeError(f"{size} bytes is more than MYAPP_OUTPUTS_CLAIM_FETCH_BYTES ({fetch_limit()})")
            with outputs.create(part, exclusive=False) as fh:
                for index in range(chunks):
                    chunk = backend.fetch_output_chunk(namespace, attempt.id, attempt.output_dir, path, index,
                                                       length, purpose="preview" if preview else "chunk")
                    if chunk.size != size:
                        raise RuntimeError(f"the file on the claim is {chunk.size} bytes now, {size} when listed")
                    fh.write(chunk.data)
                    outputs.utime(marker)  # still alive: not stale
                written = fh.tell()
            if written != min(size, length * chunks):
                raise RuntimeError(f"{written} bytes were copied of {min(size, length * chunks)}")
            outputs.make_dirs(done.rpartition("/")[0])
            outputs.replace(part, done)
        except (RuntimeError, OSError, ValueError, Refused) as exc:  # BackendError among them
            log.warning("output %r of task run %s not fetched from the claim%s: %s", path, attempt.id,
                        " (its preview)" if preview else "", exc)
            outputs.remove(part)
            outputs.write(marker, json.dumps({"state": "failed", "path": path, "reason": str(exc)}).encode())
            return False
        outputs.remove(marker)
    return True


def _is_file(outputs: Folder, relative: str) -> bool:
    try:
        return stat.S_ISREG(outputs.stat(relative).st_mode)
    except (FileNotFoundError, Refused):
        return False
