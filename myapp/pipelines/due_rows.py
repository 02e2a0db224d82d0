"""Rows of work due at a time (an ended attempt's cleanup, a deleted run's checkpoint folders) taken by one
worker: ``take_due`` moves their due time on and returns them in one statement, so two workers asking at once
never take the same row, and a worker that dies holding some leaves them due again when the hold ends."""
from __future__ import annotations

import datetime as dt
from typing import Any

import sqlalchemy as sa

from ..extensions import db


def take_due(model: Any, due: Any, now: dt.datetime, hold_seconds: float, limit: int) -> list[int]:
    """The ids of up to ``limit`` rows of ``model`` whose ``due`` column has come by ``now``, theirs to work on:
    due again ``hold_seconds`` on; committed. A second worker waiting on one of those rows finds the condition
    false once it can look again, and takes none of them."""
    candidates = sa.select(model.id).where(due <= now).order_by(model.id).limit(limit)
    ids = db.session.scalars(
        sa.update(model).where(model.id.in_(candidates.scalar_subquery()), due <= now)
        .values({due: now + dt.timedelta(seconds=hold_seconds)}).returning(model.id)
        .execution_options(synchronize_session=False)).all()
    db.session.commit()
    return sorted(ids)
