"""Observing a task attempt: its log lines and metrics, wherever they are at the moment.

While an attempt runs, its lines and samples come live from the backend that runs it. Once it
has finished, cleanup has moved its log to the archive (`backends.registry.log_archive`) and
the controller kept its samples in `TaskRun.metrics`. The REST API, its event streams and the
CLI read through this module only; none of them talks to a backend or the archive itself.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Protocol, runtime_checkable

from .backends import Backend, BackendError, JobRef, LogLine, MetricSample
from .backends.registry import backend_for, backend_for_group, log_archive
from .errors import DomainError, Kind
from .extensions import db
from .models import Notebook, Task, TaskRun

# The shapes of what is read, for the API's answers (it does not import myapp.backends).
__all__ = ["LogFilter", "LogLine", "LogTail", "MetricSample", "line_json", "read_lines", "read_metrics",
           "read_notebook_lines", "read_recent_lines"]


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


def read_lines(attempt: TaskRun, after: Mapping[str, int] | None = None) -> list[LogLine]:
    """Every replica's lines after the cursor (replica -> last seq seen), oldest first.

    A finished attempt reads its archive, even an empty one (its pods / files are gone by
    then). With no archive yet (cleanup failed before archiving) the backend still has them."""
    if not attempt.backend_ref:
        return []  # never submitted: no log anywhere yet
    cursor = dict(after or {})
    ref, archive = JobRef.from_dict(attempt.backend_ref), log_archive()
    if attempt.is_finished and archive.exists(ref):
        lines = archive.read(ref)
    else:
        try:
            lines = list(_backend(attempt).logs(ref, follow=False, after=cursor or None))
        except BackendError as exc:
            raise _unavailable(attempt, "logs", exc) from exc
    # Backends honour `after` already; the archive does not. Filtering here covers both.
    return [line for line in lines if line.seq > cursor.get(line.replica, 0)]


class LogTail:
    """New lines of one attempt on each read, for followers that poll (event streams, the CLI).

    The cursor advances over every line read, kept by the filter or not, so a filter never
    makes lines come back on the next read; `cursor` is what a reconnecting client resumes from.
    """

    def __init__(self, after: Mapping[str, int] | None = None, keep: LogFilter | None = None):
        self.cursor: dict[str, int] = dict(after or {})
        self.keep = keep or LogFilter()

    def read(self, attempt: TaskRun) -> list[LogLine]:
        lines = read_lines(attempt, self.cursor)
        for line in lines:
            self.cursor[line.replica] = max(self.cursor.get(line.replica, 0), line.seq)
        return [line for line in lines if self.keep(line)]


def read_notebook_lines(nb: Notebook) -> list[LogLine]:
    """A notebook's JupyterLab log: live while it runs, the archive of its last attempt once stopped."""
    job = nb.job or {}
    if not (job.get("ref") or job.get("last")):
        return []
    ref, archive = JobRef.from_dict(job.get("ref") or job["last"]), log_archive()
    if not job.get("ref") and archive.exists(ref):
        return archive.read(ref)
    try:
        return list(backend_for_group(nb.resource_group_id).logs(ref, follow=False))
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
