"""Platform bookkeeping: which Celery workers are alive."""
from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from flask_appbuilder import Model
from sqlalchemy.orm import Mapped, mapped_column

from .base import IdMixin, utcnow


class WorkerHeartbeat(IdMixin, Model):
    __tablename__ = "worker_heartbeat"

    hostname: Mapped[str] = mapped_column(sa.String(255), unique=True, nullable=False)
    last_seen: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow, nullable=False)
    beats: Mapped[int] = mapped_column(sa.BigInteger, default=0, nullable=False)
