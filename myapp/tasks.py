"""Celery tasks. Each runs in an app context (see celery_app.make_celery)."""
from __future__ import annotations

import socket

import sqlalchemy as sa
from celery import shared_task

from .extensions import db
from .models import PipelineRun, RunState, WorkerHeartbeat, utcnow


@shared_task(name="myapp.heartbeat")
def heartbeat(hostname: str | None = None) -> dict:
    """Record that a worker is alive; the admin pages and `myapp run` read it."""
    hostname = hostname or socket.gethostname()
    row = db.session.scalar(sa.select(WorkerHeartbeat).filter_by(hostname=hostname))
    if row is None:
        row = WorkerHeartbeat(hostname=hostname, beats=0)
        db.session.add(row)
    row.last_seen = utcnow()
    row.beats += 1
    db.session.commit()
    return {"hostname": hostname, "beats": row.beats}


@shared_task(name="myapp.reconcile_run")
def reconcile_run(run_id: int) -> str | None:
    """Drive one run as far as it goes now. Safe to run twice at once or to repeat (acks_late)."""
    from .backends.registry import backend_for, log_archive
    from .pipelines.controller import RunController

    state = RunController(backend_for, on_finish=notify_run.delay, archive=log_archive()).reconcile(run_id)
    return state.value if state else None


@shared_task(name="myapp.cancel_run")
def cancel_run(run_id: int, reason: str = "cancelled by user") -> None:
    from .backends.registry import backend_for, log_archive
    from .pipelines.controller import RunController

    RunController(backend_for, on_finish=notify_run.delay, archive=log_archive()).cancel(run_id, reason)


@shared_task(name="myapp.tick")
def tick() -> int:
    """Beat: create due scheduled runs, then enqueue a reconcile for every unfinished run
    (status polling, retries, timeouts, queued runs waiting for their turn); and delete the token
    Secrets of runs that ended without it (a worker gone right after the commit that ended one)."""
    from .backends.registry import backend_for
    from .pipelines.controller import RunController
    from .pipelines.scheduling import schedule_due

    schedule_due(utcnow())
    RunController(backend_for).release_tokens()
    ids = db.session.scalars(
        sa.select(PipelineRun.id).where(PipelineRun.state.in_([RunState.QUEUED, RunState.RUNNING]))
    ).all()
    for run_id in ids:
        reconcile_run.delay(run_id)
    return len(ids)


@shared_task(name="myapp.notify_run", bind=True, max_retries=5)
def notify_run(self, run_id: int) -> int | None:
    """POST the finished run to its pipeline's webhook; retried with backoff on failure."""
    from .pipelines.notify import WebhookError, send_run_webhook

    try:
        return send_run_webhook(run_id)
    except WebhookError as exc:
        raise self.retry(exc=exc, countdown=min(300, 2 ** self.request.retries)) from exc
