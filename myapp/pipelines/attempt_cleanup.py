"""A finished attempt's cleanup (its log archived, its job's pods or folder removed) runs after the commit that
ended it, never inside: archiving a log that filled its cap takes seconds (64 MiB: ~15 s), and the pass's
transaction holds its run's row, on SQLite the database's one write lock, until it commits.

The transaction that ends the attempt marks it (``take``: ``TaskRun.cleanup_at``, due again TAKEN_SECONDS on);
after the commit the worker that ended it cleans up (``clean``) and clears the mark in a short transaction of its
own. A worker that dies between the two leaves the mark, never a job nothing names: beat's tick sees it due
(``due``) and a worker finishes it (``clean_due``, the Celery task ``myapp.attempt_cleanup``). Until the archive
is in place the log is read live from the job, which goes only after it (myapp/pipelines/observation.py).

A preempted attempt (``preempted_at``) is ended by admission while its job still runs: its cleanup stops the job
first (``stop``: a cancel waits out the job's grace period, seconds, so it too runs after the commit). Until its
mark is cleared the group admits nothing (myapp/admission/gate.py: the room is not free yet); a stop that fails
is due again RETRY_SECONDS on.
"""
from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import asdict

import sqlalchemy as sa

from ..admission.checkpoints import resumes_after_stop
from ..backends import Backend, BackendError, JobRef, LogArchive
from ..extensions import db
from ..models import Task, TaskRun, utcnow
from .due_rows import take_due

log = logging.getLogger(__name__)
TAKEN_SECONDS = 600.0  # a worker is cleaning it up: due again then (it died), beyond a long archive's copy
BATCH = 100  # attempts one clean_due takes
RETRY_SECONDS = 30.0  # a preempted attempt whose stop failed: tried again then
MAX_SAMPLES = 720  # metrics samples kept per attempt (an hour at 5 s)


def take(attempt: TaskRun, now: dt.datetime) -> None:
    """In the transaction that ends the attempt: its cleanup is this worker's, after the commit."""
    attempt.cleanup_at = now + dt.timedelta(seconds=TAKEN_SECONDS)


def clean(attempt_id: int, ref: JobRef, backend: Backend, archive: LogArchive | None, stop: bool = False) -> None:
    """Archive the attempt's log and remove its job (no transaction open meanwhile), then clear its mark. A
    backend error leaves the outcome as it is and says what was left behind (the mark is cleared all the same,
    as a cleanup in the ending transaction did); any other error leaves the mark for clean_due. With ``stop``
    (preempted) the job is stopped first and its metrics kept; a stop that fails leaves it due again."""
    left, metrics = None, None
    if stop:
        try:
            backend.cancel(ref)
        except BackendError as exc:
            _stop_failed(attempt_id, exc)
            return
    try:
        if stop and archive is not None:  # as the pass does with every attempt it ends
            metrics = [asdict(sample) for sample in backend.metrics(ref)][-MAX_SAMPLES:]
        if archive is not None:
            backend.cleanup(ref, archive)
    except BackendError as exc:
        left = exc
    where = resumes_after_stop(attempt_id, backend) if stop else None
    attempt = db.session.get(TaskRun, attempt_id, populate_existing=True)
    if attempt is not None:
        attempt.cleanup_at = None
        if metrics is not None:
            attempt.metrics = metrics
        if where is not None:
            attempt.reason = f"{attempt.reason}; the task {where}"
        if left is not None:
            log.warning("task run %s: cleanup failed: %s", attempt_id, left)
            attempt.reason = f"{attempt.reason or attempt.state.value} (cleanup failed: {left})"
    db.session.commit()


def _stop_failed(attempt_id: int, exc: BackendError) -> None:
    """A preempted attempt's job could not be stopped: due again RETRY_SECONDS on (beat's tick asks), saying so."""
    log.warning("task run %s: stopping the preempted job failed: %s", attempt_id, exc)
    attempt = db.session.get(TaskRun, attempt_id, populate_existing=True)
    if attempt is not None:
        attempt.cleanup_at = utcnow() + dt.timedelta(seconds=RETRY_SECONDS)
        if "(stopping it failed" not in (attempt.reason or ""):
            attempt.reason = f"{attempt.reason} (stopping it failed, tried again every {RETRY_SECONDS:g} s: {exc})"
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
    taken = db.session.execute(sa.select(TaskRun.id, TaskRun.backend_ref, TaskRun.preempted_at, Task)
                               .join(Task, Task.id == TaskRun.task_id)
                               .where(TaskRun.id.in_(ids)).order_by(TaskRun.id)).all()
    backends = [backend_for(task) for *_, task in taken]
    db.session.commit()  # nothing is held while the jobs are stopped and the archives written
    for (attempt_id, ref, preempted, _), backend in zip(taken, backends, strict=True):  # only submitted ones
        clean(attempt_id, JobRef.from_dict(ref), backend, archive, stop=preempted is not None)
    return len(ids)
