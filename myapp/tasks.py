"""Celery tasks. Each runs in an app context (see celery_app.make_celery)."""
from __future__ import annotations

import socket

import sqlalchemy as sa
from celery import shared_task

from .extensions import db
from .models import WorkerHeartbeat, utcnow


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
