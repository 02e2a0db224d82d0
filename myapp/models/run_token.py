"""RunToken: the platform API credential of one pipeline run (see myapp.auth.run_tokens)."""
from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from flask_appbuilder import Model
from sqlalchemy.orm import Mapped, mapped_column

from .base import IdMixin, utcnow


class RunToken(IdMixin, Model):
    """One per run. The JWT is derived from this row (jti, times, identity, claims) and never stored:
    a request with it is accepted only while the row is not revoked and its run has not finished."""

    __tablename__ = "run_token"
    __table_args__ = (
        # The run's own project: a token can never claim a run of another project.
        sa.ForeignKeyConstraint(["project_id", "pipeline_run_id"], ["pipeline_run.project_id", "pipeline_run.id"],
                                ondelete="CASCADE"),
    )

    jti: Mapped[str] = mapped_column(sa.String(36), unique=True, nullable=False)
    project_id: Mapped[int] = mapped_column(sa.Integer, nullable=False)
    pipeline_run_id: Mapped[int] = mapped_column(sa.Integer, unique=True, nullable=False)
    # The project's bot: the identity the token acts as (FAB needs a user; it never signs in).
    user_id: Mapped[int] = mapped_column(sa.ForeignKey("ab_user.id", ondelete="CASCADE"), nullable=False)
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow, nullable=False)
    expires_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), nullable=False)
    revoked_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    # When the run's Secrets were deleted from the backends; NULL while some may be left (the sweep's work).
    released_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True), index=True)
