"""A run's checkpoint folders go with the run: a finished run keeps them (the newest two checkpoints of each
task, as ``myapp.checkpoint.save`` left them) until it is deleted, by itself, with its pipeline or with its
project; then they are removed from every backend its attempts ran on (docs/checkpoints.md, "Lifetime").

The transaction that deletes the runs writes what is to remove (``mark``: a ``CheckpointCleanup`` row per run
and resource group its attempts were submitted to), so a platform stopped right after that commit leaves rows,
never a folder nothing names; after the commit a worker removes them (``remove_due``, the Celery task
``myapp.checkpoint_cleanup``), and beat's ``tick`` asks for it again while rows are due (``due``): a removal
that failed is tried again a minute on. A deleted project's unfinished runs are removed ``RELEASE_SECONDS``
on, once their jobs were stopped (``myapp.run_release``): a pod still starting would make its folder again.
"""
from __future__ import annotations

import datetime as dt
import logging
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from ..backends.base import Backend, BackendError, PermanentBackendError
from ..extensions import db
from ..models import CheckpointCleanup, PipelineRun, Task, TaskRun, utcnow
from ..models.states import RUN_TERMINAL
from .due_rows import take_due

log = logging.getLogger(__name__)
RETRY_SECONDS = 60.0  # a removal that failed is tried again then
TAKEN_SECONDS = 600.0  # rows a worker is removing: due again then (it died), beyond a reader pod's wait
GIVE_UP_SECONDS = 3600.0  # ... an hour on when trying again cannot help (a link on the way, refused)
RELEASE_SECONDS = 120.0  # a deleted project's unfinished runs: their jobs are stopped first
BATCH = 2000  # rows one removal takes


def mark(which: Any, namespace: str) -> int:
    """Call in the transaction that deletes the runs ``which`` selects (a condition on PipelineRun), before
    their rows go: what to remove afterwards, one row per run and resource group an attempt of it was
    submitted to (a run that submitted nothing made no folder). Returns how many rows."""
    now = utcnow()
    used = db.session.execute(
        sa.select(PipelineRun.id, PipelineRun.state, Task.resource_group_id).distinct()
        .join(TaskRun, TaskRun.pipeline_run_id == PipelineRun.id).join(Task, Task.id == TaskRun.task_id)
        .where(which, TaskRun.backend_ref.is_not(None))).all()
    rows = [{"namespace": namespace, "pipeline_run_id": run_id, "resource_group_id": group,
             "due_at": now if state in RUN_TERMINAL else now + dt.timedelta(seconds=RELEASE_SECONDS)}
            for run_id, state, group in used]
    if rows:
        db.session.execute(sa.insert(CheckpointCleanup), rows)
    return len(rows)


def due(now: dt.datetime | None = None) -> bool:
    """Are there folders to remove now (beat then asks a worker to)?"""
    return db.session.scalar(sa.select(CheckpointCleanup.id).where(CheckpointCleanup.due_at <= (now or utcnow()))
                             .limit(1)) is not None


def remove_due(backend_for_group: Callable[[int | None], Backend], now: dt.datetime | None = None) -> int:
    """Remove the due rows' folders, each namespace's runs at once per backend (on Kubernetes one pod removes
    them all). The rows are taken first (``take_due``: due again TAKEN_SECONDS on, so beat does not ask again
    meanwhile, no other worker takes them and one that dies leaves them due), deleted once their folders are
    gone; a failure is kept on its rows. Returns how many rows were done."""
    now = now or utcnow()
    ids = take_due(CheckpointCleanup, CheckpointCleanup.due_at, now, TAKEN_SECONDS, BATCH)
    taken = db.session.scalars(sa.select(CheckpointCleanup).where(CheckpointCleanup.id.in_(ids))
                               .order_by(CheckpointCleanup.id)).all()
    # Run ids are never reused: a run still here was not deleted (never so), and its folders stay.
    alive = set(db.session.scalars(sa.select(PipelineRun.id).where(
        PipelineRun.id.in_({row.pipeline_run_id for row in taken}))))
    batches: dict[tuple[int | None, str], list[CheckpointCleanup]] = defaultdict(list)
    for row in taken:
        batches[(row.resource_group_id, row.namespace)].append(row)
    done = 0
    for (group, namespace), batch in batches.items():
        runs = sorted({row.pipeline_run_id for row in batch} - alive)
        try:
            remove = getattr(backend_for_group(group), "delete_checkpoints", None)  # None: it keeps none
            if remove is not None and runs:
                remove(namespace, runs)
        except BackendError as exc:
            wait = GIVE_UP_SECONDS if isinstance(exc, PermanentBackendError) else RETRY_SECONDS
            log.warning("checkpoints of deleted runs %s in %s not removed yet: %s", runs, namespace, exc)
            for row in batch:
                row.due_at, row.error = now + dt.timedelta(seconds=wait), str(exc)[:2000]
            continue
        for row in batch:
            db.session.delete(row)
        done += len(batch)
    db.session.commit()
    return done
