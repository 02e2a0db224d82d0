"""A run's outputs go with the run: deleting it, its pipeline or its project removes its folder in the platform's
outputs folder (``<namespace>/<run>``: what its local attempts wrote, the copies read off a Kubernetes claim,
the live reads beside them) and its objects in the S3-compatible store (``store.delete_run``; a cluster's claim
keeps its own files, docs/outputs.md).

As for checkpoints (checkpoint_cleanup.py), the transaction that deletes the runs writes what is to remove
(``mark``: an ``OutputsCleanup`` row per run that submitted an attempt; one that submitted nothing wrote no
folder), so a platform stopped right after that commit leaves rows, never a folder nothing names; after the
commit a worker removes them (``remove_due``, the Celery task ``myapp.outputs_cleanup``), and beat's ``tick``
asks for it again while rows are due (``due``): a removal that failed is tried again a minute on. A deleted
project's unfinished runs are removed once their jobs were stopped (``checkpoint_cleanup.RELEASE_SECONDS``): a
job still running would write its folder again.
"""
from __future__ import annotations

import datetime as dt
import logging
from typing import Any

import sqlalchemy as sa

from ..errors import DomainError, Kind
from ..extensions import db
from ..models import OutputsCleanup, PipelineRun, TaskRun, utcnow
from ..models.states import RUN_TERMINAL
from ..outputs import store as outputs_store
from .checkpoint_cleanup import GIVE_UP_SECONDS, RELEASE_SECONDS, RETRY_SECONDS
from .due_rows import take_due

log = logging.getLogger(__name__)
TAKEN_SECONDS = 600.0  # rows a worker is removing: due again then (it died)
BATCH = 500  # runs one removal takes


def mark(which: Any, namespace: str) -> int:
    """Call in the transaction that deletes the runs ``which`` selects (a condition on PipelineRun), before
    their rows go: one row per run that submitted an attempt. Returns how many rows."""
    now = utcnow()
    submitted = sa.exists().where(TaskRun.pipeline_run_id == PipelineRun.id, TaskRun.backend_ref.is_not(None))
    runs = db.session.execute(sa.select(PipelineRun.id, PipelineRun.state).where(which, submitted)).all()
    rows = [{"namespace": namespace, "pipeline_run_id": run_id,
             "due_at": now if state in RUN_TERMINAL else now + dt.timedelta(seconds=RELEASE_SECONDS)}
            for run_id, state in runs]
    if rows:
        db.session.execute(sa.insert(OutputsCleanup), rows)
    return len(rows)


def due(now: dt.datetime | None = None) -> bool:
    """Are there outputs to remove now (beat then asks a worker to)?"""
    return db.session.scalar(sa.select(OutputsCleanup.id).where(OutputsCleanup.due_at <= (now or utcnow()))
                             .limit(1)) is not None


def remove_due(now: dt.datetime | None = None) -> int:
    """Remove the due rows' outputs. The rows are taken first (``take_due``: due again TAKEN_SECONDS on, so
    beat does not ask again meanwhile, no other worker takes them and one that dies leaves them due), nothing
    is held while the folders go, and then a row done is deleted and a failure kept on its row. Returns how
    many rows were done."""
    now = now or utcnow()
    ids = take_due(OutputsCleanup, OutputsCleanup.due_at, now, TAKEN_SECONDS, BATCH)
    if not ids:
        return 0
    taken = db.session.execute(sa.select(OutputsCleanup.id, OutputsCleanup.namespace, OutputsCleanup.pipeline_run_id)
                               .where(OutputsCleanup.id.in_(ids)).order_by(OutputsCleanup.id)).all()
    # Run ids are never reused: a run still here was not deleted (never so), and its outputs stay.
    alive = set(db.session.scalars(sa.select(PipelineRun.id).where(
        PipelineRun.id.in_({run_id for _, _, run_id in taken}))))
    db.session.commit()
    done, failed = [], []
    for row_id, namespace, run_id in taken:
        if run_id not in alive:
            try:
                outputs_store.delete_run(namespace, run_id)
            except DomainError as exc:
                log.warning("outputs of deleted run %s in %s not removed yet: %s", run_id, namespace, exc.message)
                wait = RETRY_SECONDS if exc.kind == Kind.UNAVAILABLE else GIVE_UP_SECONDS
                failed.append((row_id, now + dt.timedelta(seconds=wait), exc.message[:2000]))
                continue
        done.append(row_id)
    if done:
        db.session.execute(sa.delete(OutputsCleanup).where(OutputsCleanup.id.in_(done)))
    for row_id, due_at, error in failed:
        db.session.execute(sa.update(OutputsCleanup).where(OutputsCleanup.id == row_id)
                           .values(due_at=due_at, error=error))
    db.session.commit()
    return len(done)
