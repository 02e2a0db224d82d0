"""A finished attempt's cleanup (its log archived, its job's pods or folder removed) runs after the commit that
ended it, never inside: archiving a log that filled its cap takes seconds (64 MiB: ~15 s), and the pass's
transaction holds its run's row, on SQLite the database's one write lock, until it commits.

The transaction that ends the attempt marks it (``take``: ``TaskRun.cleanup_at``, due again TAKEN_SECONDS on);
after the commit the worker that ended it cleans up (``clean``) and clears the mark in a short transaction of its
own. A worker that dies between the two leaves the mark, never a job nothing names: beat's tick sees it due
(``due``) and a worker finishes it (``clean_due``, the Celery task ``myapp.attempt_cleanup``). Until the archive
is in place the log is read live from the job, which goes only after it (myapp/pipelines/observation.py).
"""
from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable

import sqlalchemy as sa

from ..backends import Backend, BackendError, JobRef, LogArchive
from ..extensions import db
from ..models import Task, TaskRun, utcnow
from .due_rows import take_due

log = logging.getLogger(__name__)
TAKEN_SECONDS = 600.0  # a worker is cleaning it up: due again then (it died), beyond a long archive's copy
BATCH = 100  # attempts one clean_due takes


def take(attempt: TaskRun, now: dt.datetime) -> None:
    """In the transaction that ends the attempt: its cleanup is this worker's, after the commit."""
    attempt.cleanup_at = now + dt.timedelta(seconds=TAKEN_SECONDS)


def clean(attempt_id: int, ref: JobRef, backend: Backend, archive: LogArchive) -> None:
    """Archive the attempt's log and remove its job (no transaction open meanwhile), then clear its mark. A
    backend error leaves the outcome as it is and says what was left behind (the mark is cleared all the same,
    as a cleanup in the ending transaction did); any other error leaves the mark for clean_due."""
    left = None
    try:
        backend.cleanup(ref, archive)
    except BackendError as exc:
        left = exc
    attempt = db.session.get(TaskRun, attempt_id, populate_existing=True)
    if attempt is not None:
        attempt.cleanup_at = None
        if left is not None:
            log.warning("task run %s: cleanup failed: %s", attempt_id, left)
            attempt.reason = f"{attempt.reason or attempt.state.value} (cleanup failed: {left})"
    db.session.commit()


def due(now: dt.datetime | None = None) -> bool:
    """Is a cleanup due that no live worker holds (beat then asks a worker to finish it)?"""
    return db.session.scalar(sa.select(TaskRun.id).where(TaskRun.cleanup_at <= (now or utcnow())).limit(1)) \
        is not None


def clean_due(backend_for: Callable[[Task], Backend], archive: LogArchive, now: dt.datetime | None = None) -> int:
    """Finish the cleanups left by workers that died after the commit that ended their attempts: taken first
    (due again TAKEN_SECONDS on, so beat does not ask again meanwhile), then each cleaned up. Returns how many."""
    ids = take_due(TaskRun, TaskRun.cleanup_at, now or utcnow(), TAKEN_SECONDS, BATCH)
    if not ids:
        return 0
    taken = db.session.execute(sa.select(TaskRun.id, TaskRun.backend_ref, Task).join(Task, Task.id == TaskRun.task_id)
                               .where(TaskRun.id.in_(ids)).order_by(TaskRun.id)).all()
    db.session.commit()  # nothing is held while the archives are written
    for attempt_id, ref, task in taken:  # only submitted attempts are taken (backend_calls)
        clean(attempt_id, JobRef.from_dict(ref), backend_for(task), archive)
    return len(ids)
