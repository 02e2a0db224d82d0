"""A browser's way into one notebook's origin (myapp/notebooks/gate.py): a one-time code the platform
issues after the member check, then, once the notebook's origin redeemed it, that origin's session."""
from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from flask_appbuilder import Model
from sqlalchemy.orm import Mapped, mapped_column

from .base import IdMixin, utcnow


class NotebookAccess(IdMixin, Model):
    """Only digests of the code and of the session are kept: a dump of the table opens nothing.

    Issued with `code_hash` and `expires_at` the code's (a minute); redeemed once by one UPDATE that
    clears `code_hash` and sets `session_hash` and `expires_at` the platform session's end, so two web
    processes can never both redeem it. The session is also tied to the platform session it came from
    (`login_sid`): logging out there ends it."""

    __tablename__ = "notebook_access"

    code_hash: Mapped[str | None] = mapped_column(sa.String(64), unique=True)
    session_hash: Mapped[str | None] = mapped_column(sa.String(64), unique=True)
    notebook_id: Mapped[int] = mapped_column(sa.ForeignKey("notebook.id", ondelete="CASCADE"), nullable=False,
                                             index=True)
    user_id: Mapped[int] = mapped_column(sa.ForeignKey("ab_user.id", ondelete="CASCADE"), nullable=False)
    login_sid: Mapped[str] = mapped_column(sa.String(64), nullable=False, index=True)
    host: Mapped[str] = mapped_column(sa.String(253), nullable=False)  # the notebook's origin, bound at issue
    next_path: Mapped[str] = mapped_column(sa.String(2048), nullable=False)
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow, nullable=False)
    expires_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), nullable=False, index=True)
