"""RunToken: the platform API credential of one pipeline run (see myapp.auth.run_tokens); CheckpointCleanup and
OutputsCleanup: what a deleted run leaves to remove (myapp/pipelines/checkpoint_cleanup.py, outputs_cleanup.py)."""
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


class CheckpointCleanup(IdMixin, Model):
    """A deleted run's checkpoint folders still to remove from one backend's checkpoints volume (the local
    folder, a cluster's claim): written in the transaction that deletes the run (or its project), so a
    platform stopped right after the commit leaves work to do, never a folder no row names; deleted once the
    folders are gone (myapp/pipelines/checkpoint_cleanup.py). No foreign keys: the run, its project and maybe
    its resource group are gone."""

    __tablename__ = "checkpoint_cleanup"

    namespace: Mapped[str] = mapped_column(sa.String(63), nullable=False)
    pipeline_run_id: Mapped[int] = mapped_column(sa.Integer, nullable=False)
    # Whose backend holds the folders (NULL: the platform's default, the local one).
    resource_group_id: Mapped[int | None] = mapped_column(sa.Integer)
    # Not before then: a deleted project's unfinished runs give their jobs time to stop first; a removal
    # that failed is tried again a minute on.
    due_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), nullable=False, index=True)
    error: Mapped[str | None] = mapped_column(sa.Text)


class OutputsCleanup(IdMixin, Model):
    """A deleted run's outputs still to remove (its folder in the platform's outputs folder, its objects in the
    S3-compatible store): written in the transaction that deletes the run, its pipeline or its project, deleted
    once they are gone (myapp/pipelines/outputs_cleanup.py). No foreign keys: the run and its project are gone."""

    __tablename__ = "outputs_cleanup"

    namespace: Mapped[str] = mapped_column(sa.String(63), nullable=False)
    pipeline_run_id: Mapped[int] = mapped_column(sa.Integer, nullable=False)
    # Not before then: a deleted project's unfinished runs give their jobs time to stop first; a removal
    # that failed is tried again a minute on.
    due_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), nullable=False, index=True)
    error: Mapped[str | None] = mapped_column(sa.Text)
