"""Reconcile requests: at most one pending reconcile per run, whatever the broker.

A request is a conditional UPDATE (`reconcile_requested_at` set where it was NULL) and the
message is sent only by the call that set it; the worker clears it as its reconcile starts, so
an event during a pass requests another. Events request (a run created, a cancel's neighbours, a
run ended: the runs waiting for it); beat requests only the runs whose timer is due (the
controller's `next_reconcile_at`: next poll, a retry's backoff, a timeout) and re-sends old
requests only when the broker holds fewer messages than there are pending requests (some were
lost with a worker). The queue thus holds about one reconcile per unfinished run, plus user
actions on their own queue.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa

from ..config import ACTIONS_QUEUE, BACKGROUND_QUEUE
from ..extensions import db
from ..models import Pipeline, PipelineRun, RunState, utcnow

__all__ = ["ACTIONS_QUEUE", "BACKGROUND_QUEUE", "STALE", "queued_messages", "request", "request_due",
           "request_waiting", "send"]
RECONCILE = "myapp.reconcile_run"
STALE = dt.timedelta(seconds=30)  # a request this old may have been lost (request_due)
UNFINISHED = (RunState.QUEUED, RunState.RUNNING)


def send(celery: Any, run_ids: Iterable[int], queue: str) -> None:
    for run_id in run_ids:
        celery.send_task(RECONCILE, args=[run_id], queue=queue)


def _claim(where: Any, now: dt.datetime) -> list[int]:
    """Mark the matching unfinished runs requested; returns the ids this call marked (committed)."""
    ids = list(db.session.scalars(
        sa.update(PipelineRun).where(PipelineRun.state.in_(UNFINISHED), where)
        .values(reconcile_requested_at=now).returning(PipelineRun.id)
        .execution_options(synchronize_session=False)))
    db.session.commit()
    return ids


def request(celery: Any, run_ids: Iterable[int], queue: str = ACTIONS_QUEUE,
            now: dt.datetime | None = None) -> list[int]:
    """An event: reconcile these runs soon. Sends one message per run that had none pending; a run
    being reconciled right now is waited for (its row lock), then requested again."""
    ids = sorted(set(run_ids))
    if not ids:
        return []
    claimed = _claim(sa.and_(PipelineRun.id.in_(ids), PipelineRun.reconcile_requested_at.is_(None)),
                     now or utcnow())
    send(celery, claimed, queue)
    return claimed


def queued_messages(celery: Any) -> int:
    """Messages waiting in the broker's two queues (kombu's `_size`, which Redis's transport and the
    embedded one both implement)."""
    with celery.connection_for_read() as conn:
        return sum(conn.default_channel._size(queue) for queue in (ACTIONS_QUEUE, BACKGROUND_QUEUE))


def request_due(celery: Any, now: dt.datetime | None = None, queued: int | None = None) -> list[int]:
    """Beat: request the runs whose timer is due. Requests pending for over STALE are sent again only
    when the broker holds fewer messages (`queued`, else asked) than there are pending requests: some
    were lost (a worker killed mid-task); a long queue is only slow, and sending more would grow it.
    Rows a reconcile holds right now are skipped (on PostgreSQL): that pass sets their next timer."""
    now = now or utcnow()
    requested = PipelineRun.reconcile_requested_at
    unfinished = PipelineRun.state.in_(UNFINISHED)
    pending = db.session.scalar(sa.select(sa.func.count()).where(requested.is_not(None), unfinished)) or 0
    lost = pending - (queued_messages(celery) if queued is None else queued) if pending else 0
    claimed = []
    if lost > 0:
        stale = (sa.select(PipelineRun.id).where(requested < now - STALE, unfinished)
                 .order_by(requested).limit(lost).with_for_update(skip_locked=True))
        claimed += _claim(PipelineRun.id.in_(stale.scalar_subquery()), now)
    due = (sa.select(PipelineRun.id).where(PipelineRun.next_reconcile_at <= now, unfinished, requested.is_(None))
           .with_for_update(skip_locked=True))
    claimed += _claim(PipelineRun.id.in_(due.scalar_subquery()), now)
    send(celery, claimed, BACKGROUND_QUEUE)
    return claimed


def request_waiting(celery: Any, pipeline_id: int, now: dt.datetime | None = None) -> list[int]:
    """A run of this pipeline ended: its oldest queued runs may start now (as many as may run at once)."""
    limit = db.session.scalar(sa.select(Pipeline.max_active_runs).where(Pipeline.id == pipeline_id)) or 1
    oldest = list(db.session.scalars(
        sa.select(PipelineRun.id).where(PipelineRun.pipeline_id == pipeline_id, PipelineRun.state == RunState.QUEUED)
        .order_by(PipelineRun.id).limit(limit)))
    return request(celery, oldest, BACKGROUND_QUEUE, now)
