"""Observing a task attempt: its log lines and metrics, wherever they are at the moment.

While an attempt runs, its lines and samples come live from the backend that runs it. Once it
has finished, cleanup has moved its log to the archive (`backends.registry.log_archive`) and
the controller kept its samples in `TaskRun.metrics`. The REST API, its event streams and the
CLI read through this module only; none of them talks to a backend or the archive itself.

A log is read as a ``LogSource`` (``backends.logrecords``): the last lines from the end of its files, every
line as a stream. Nothing here reads a whole log into memory except ``read_lines`` (the in-process CLI).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

from ..backends import Backend, BackendError, JobRef, LogLine, MetricSample
from ..backends.logrecords import Keep, LogPage, LogSource, page_of
from ..backends.registry import backend_for, backend_for_group, log_archive
from ..errors import DomainError, Kind
from ..extensions import db
from ..models import Notebook, Task, TaskRun

# The shapes of what is read, for the API's answers (it does not import myapp.backends).
__all__ = ["LogFilter", "LogLine", "LogPage", "LogTail", "MetricSample", "line_json", "read_lines", "read_metrics",
           "read_notebook_lines", "read_page", "read_recent_lines", "stream_lines"]


@dataclass(frozen=True)
class LogFilter:
    """Which lines a reader wants: one replica's (e.g. "worker-1"), those containing a text."""

    replica: str | None = None
    search: str | None = None

    def __call__(self, line: LogLine) -> bool:
        return (not self.replica or line.replica == self.replica) and (not self.search or self.search in line.line)


def line_json(line: LogLine) -> dict[str, Any]:
    return {"replica": line.replica, "seq": line.seq, "line": line.line, "timestamp": line.timestamp}


def _backend(attempt: TaskRun) -> Backend:
    return backend_for(db.session.get(Task, attempt.task_id))


def _unavailable(attempt: TaskRun, what: str, exc: BackendError) -> DomainError:
    """A live read that the backend cannot answer (cluster unreachable, job folder gone): the
    callers' error, named, instead of a crash inside the API or a stream."""
    return DomainError(f"{what} of task run {attempt.id} unavailable: {exc}", kind=Kind.UNAVAILABLE)


def _source(attempt: TaskRun) -> LogSource | None:
    """Where the attempt's log is now: the archive once finished (even an empty one: its pods / files are
    gone by then), else its backend (also a finished attempt whose cleanup failed before archiving)."""
    if not attempt.backend_ref:
        return None  # never submitted: no log anywhere yet
    ref, archive = JobRef.from_dict(attempt.backend_ref), log_archive()
    if attempt.is_finished and archive.exists(ref):
        return archive.open(ref)
    try:
        return _live(_backend(attempt), ref)
    except BackendError as exc:
        raise _unavailable(attempt, "logs", exc) from exc


def _live(backend: Backend, ref: JobRef) -> LogSource:
    if isinstance(backend, _HasLogSource):
        return backend.log_source(ref)
    return _ForwardOnly(backend, ref)


class _ForwardOnly:
    """A backend read only from the start (``logs``: Kubernetes pods): every line passes, the page holds
    only what it returns."""

    def __init__(self, backend: Backend, ref: JobRef):
        self.backend, self.ref = backend, ref

    def page(self, limit: int, keep: Keep, after: Mapping[str, int]) -> LogPage:
        return page_of(self.backend.logs(self.ref, follow=False, after=dict(after) or None), limit, keep, after)

    def lines(self, keep: Keep, after: Mapping[str, int]) -> Iterator[LogLine]:
        lines = self.backend.logs(self.ref, follow=False, after=dict(after) or None)
        return (line for line in lines if line.seq > after.get(line.replica, 0) and keep(line))


@runtime_checkable
class _HasLogSource(Protocol):
    def log_source(self, ref: JobRef) -> LogSource: ...


def _read(attempt: TaskRun, what: Callable[[LogSource], Any], empty: Any) -> Any:
    source = _source(attempt)
    if source is None:
        return empty
    try:
        return what(source)
    except BackendError as exc:
        raise _unavailable(attempt, "logs", exc) from exc


def read_page(attempt: TaskRun, limit: int, keep: LogFilter | None = None,
              after: Mapping[str, int] | None = None) -> LogPage:
    """The last ``limit`` lines ``keep`` keeps after the cursor (replica -> last seq seen), oldest first,
    with every replica's last seq. Costs what it returns: files are read from their end (a search reads
    back until it has found ``limit`` lines, holding no more)."""
    cursor = dict(after or {})
    return _read(attempt, lambda source: source.page(limit, keep or LogFilter(), cursor), LogPage([], cursor))


def stream_lines(attempt: TaskRun, keep: LogFilter | None = None) -> Iterator[LogLine]:
    """Every line ``keep`` keeps, oldest first, read as it is consumed (a download): the source is found
    now, its lines are read later (the iterator needs neither the request nor the database)."""
    return _read(attempt, lambda source: source.lines(keep or LogFilter(), {}), iter(()))


def read_lines(attempt: TaskRun, after: Mapping[str, int] | None = None) -> list[LogLine]:
    """Every replica's lines after the cursor, oldest first, as one list (the in-process CLI's whole log)."""
    cursor = dict(after or {})
    return _read(attempt, lambda source: list(source.lines(LogFilter(), cursor)), [])


class LogTail:
    """New lines of one attempt on each read, for followers that poll (event streams, the CLI).

    Each read returns the last ``limit`` kept lines written since the previous one (with no limit, all of
    them); the cursor advances to the end of the log, past lines the filter or the limit left out, so they
    never come back on the next read; ``cursor`` is what a reconnecting client resumes from.
    """

    def __init__(self, after: Mapping[str, int] | None = None, keep: LogFilter | None = None,
                 limit: int | None = None):
        self.cursor: dict[str, int] = dict(after or {})
        self.keep = keep or LogFilter()
        self.limit = limit

    def read(self, attempt: TaskRun) -> list[LogLine]:
        if self.limit is not None:
            page = read_page(attempt, self.limit, self.keep, self.cursor)
            self.cursor = page.cursor
            return page.lines
        lines = read_lines(attempt, self.cursor)
        for line in lines:
            self.cursor[line.replica] = max(self.cursor.get(line.replica, 0), line.seq)
        return [line for line in lines if self.keep(line)]


def read_notebook_lines(nb: Notebook, limit: int) -> LogPage:
    """The last lines of a notebook's JupyterLab log: live while it runs, the archive of its last attempt
    once stopped."""
    job = nb.job or {}
    if not (job.get("ref") or job.get("last")):
        return LogPage([], {})
    ref, archive = JobRef.from_dict(job.get("ref") or job["last"]), log_archive()
    try:
        if not job.get("ref") and archive.exists(ref):
            return archive.open(ref).page(limit, LogFilter(), {})
        return _live(backend_for_group(nb.resource_group_id), ref).page(limit, LogFilter(), {})
    except BackendError as exc:
        raise DomainError(f"logs of notebook {nb.name} unavailable: {exc}", kind=Kind.UNAVAILABLE) from exc


def read_metrics(attempt: TaskRun) -> list[dict[str, Any]]:
    """CPU, memory and GPU samples as plain data: live while running, the stored ones after."""
    if attempt.is_finished or not attempt.backend_ref:
        return list(attempt.metrics or [])
    try:
        samples = _backend(attempt).metrics(JobRef.from_dict(attempt.backend_ref))
    except BackendError as exc:
        raise _unavailable(attempt, "metrics", exc) from exc
    return [asdict(sample) for sample in samples]


@runtime_checkable
class _RecentLogs(Protocol):
    """A backend that reads only the end of each container's log (Kubernetes: tailLines, limitBytes)."""

    def recent_logs(self, ref: JobRef, lines: int, limit_bytes: int) -> list[LogLine]: ...


def read_recent_lines(resource_group_id: int | None, refs: list[Mapping[str, Any]], lines: int,
                      limit_bytes: int) -> list[LogLine]:
    """The last lines of the pods of running jobs (an inference service's model servers) on a resource
    group's cluster, each container's read bounded by ``lines`` and ``limit_bytes``; oldest first per job."""
    backend = backend_for_group(resource_group_id)
    out: list[LogLine] = []
    for entry in refs:
        ref = JobRef.from_dict(dict(entry))
        try:
            if isinstance(backend, _RecentLogs):
                out.extend(backend.recent_logs(ref, lines, limit_bytes))
            else:  # no bounded read there: the whole log, its end kept
                out.extend(list(backend.logs(ref, follow=False))[-lines:])
        except BackendError as exc:
            raise DomainError(f"logs of {ref.job_name} unavailable: {exc}", kind=Kind.UNAVAILABLE) from exc
    return out
