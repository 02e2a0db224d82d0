"""Platform-wide limits an admin sets (myapp/api/admin.py); a missing row means the config default."""
from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from flask_appbuilder import Model
from sqlalchemy.orm import Mapped, mapped_column

from .base import utcnow


class PlatformSetting(Model):
    """One integer setting by name (myapp.pipelines.scheduling.LIMITS says which names exist)."""

    __tablename__ = "platform_setting"

    name: Mapped[str] = mapped_column(sa.String(63), primary_key=True)
    value: Mapped[int] = mapped_column(sa.BigInteger, nullable=False)
    updated_at: Mapped[dt.datetime] = mapped_column(
        sa.DateTime(timezone=True), default=utcnow, onupdate=utcnow, nullable=False
    )
    updated_by_id: Mapped[int | None] = mapped_column(sa.ForeignKey("ab_user.id", ondelete="SET NULL"))
