"""Pipelines as rows: tasks and edges. The DAG is stored once, here."""
from __future__ import annotations

import enum
from typing import Any

import sqlalchemy as sa
from flask_appbuilder import Model
from sqlalchemy.orm import Mapped, mapped_column, relationship

from .base import IdMixin, JSONType, TimestampMixin, enum_column, project_fk


class ConcurrencyPolicy(str, enum.Enum):
    """What a new run does while an earlier run of the same pipeline is still going."""

    WAIT = "wait"
    SKIP = "skip"
    CANCEL = "cancel"


class TriggerRule(str, enum.Enum):
    ALL_SUCCESS = "all_success"
    ALL_DONE = "all_done"
    ONE_FAILED = "one_failed"


# A pipeline's webhook events: a run's outcomes, and a task that failed for good (no retry left).
RUN_EVENTS = ("run.failed", "run.succeeded", "run.cancelled")
WEBHOOK_EVENTS = (*RUN_EVENTS, "task.failed")


class Pipeline(IdMixin, TimestampMixin, Model):
    __tablename__ = "pipeline"
    __table_args__ = (
        sa.UniqueConstraint("project_id", "name"),
        sa.UniqueConstraint("project_id", "id"),  # target of children's composite keys
    )

    project_id: Mapped[int] = mapped_column(
        sa.ForeignKey("project.id", ondelete="CASCADE"), nullable=False, index=True
    )
    name: Mapped[str] = mapped_column(sa.String(63), nullable=False)
    description: Mapped[str] = mapped_column(sa.Text, default="", nullable=False)
    parameters: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict, nullable=False)
    schedule: Mapped[str | None] = mapped_column(sa.String(128))
    paused: Mapped[bool] = mapped_column(sa.Boolean, default=False, nullable=False)
    max_active_runs: Mapped[int] = mapped_column(sa.Integer, default=1, nullable=False)
    concurrency_policy: Mapped[ConcurrencyPolicy] = mapped_column(
        enum_column(ConcurrencyPolicy, "concurrency_policy"),
        default=ConcurrencyPolicy.WAIT,
        nullable=False,
    )
    depends_on_past: Mapped[bool] = mapped_column(sa.Boolean, default=False, nullable=False)
    webhook_url: Mapped[str | None] = mapped_column(sa.String(2048))
    # Which events call the webhook (myapp.pipelines.notify.EVENTS); by default every run outcome.
    webhook_events: Mapped[list[str]] = mapped_column(
        JSONType, default=lambda: list(RUN_EVENTS), nullable=False)
    # HMAC key of the webhook's signature, made by the server and stored sealed (myapp/auth/sealed.py: 191
    # characters for a 64-character key; notify.give_secret / secret_of); never in YAML or lists.
    webhook_secret: Mapped[str | None] = mapped_column(sa.String(256))
    created_by_id: Mapped[int | None] = mapped_column(sa.ForeignKey("ab_user.id", ondelete="SET NULL"))

    tasks: Mapped[list[Task]] = relationship(
        back_populates="pipeline", cascade="all, delete-orphan", passive_deletes=True,
        foreign_keys="Task.pipeline_id", overlaps="pipeline",
    )


class Task(IdMixin, TimestampMixin, Model):
    __tablename__ = "task"
    __table_args__ = (
        sa.UniqueConstraint("pipeline_id", "name"),
        sa.UniqueConstraint("pipeline_id", "id"),  # edges reference (pipeline_id, id)
        project_fk("pipeline"),
    )

    project_id: Mapped[int] = mapped_column(sa.Integer, nullable=False, index=True)
    pipeline_id: Mapped[int] = mapped_column(sa.Integer, nullable=False, index=True)
    name: Mapped[str] = mapped_column(sa.String(63), nullable=False)
    template_id: Mapped[int] = mapped_column(
        sa.ForeignKey("job_template.id", ondelete="RESTRICT"), nullable=False, index=True
    )
    args: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict, nullable=False)
    resources: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict, nullable=False)
    resource_group_id: Mapped[int | None] = mapped_column(
        sa.ForeignKey("resource_group.id", ondelete="SET NULL")
    )
    retries: Mapped[int] = mapped_column(sa.Integer, default=0, nullable=False)
    retry_delay: Mapped[int] = mapped_column(sa.Integer, default=30, nullable=False)
    timeout: Mapped[int | None] = mapped_column(sa.Integer)
    trigger_rule: Mapped[TriggerRule] = mapped_column(
        enum_column(TriggerRule, "trigger_rule"), default=TriggerRule.ALL_SUCCESS, nullable=False
    )
    # Where the editor drew it; layout only, never semantics.
    position: Mapped[dict[str, float]] = mapped_column(JSONType, default=dict, nullable=False)
    # The image (`repository:tag`) its containers run instead of the template's: one of the catalog's or of
    # its project's (a built environment locally); None runs the template's (myapp/pipelines/images.py).
    image: Mapped[str | None] = mapped_column(sa.String(512))

    pipeline: Mapped[Pipeline] = relationship(
        back_populates="tasks", foreign_keys=[pipeline_id],
        primaryjoin="Task.pipeline_id == Pipeline.id", overlaps="tasks",
    )


class Edge(IdMixin, Model):
    """upstream -> downstream, both tasks of the same pipeline (enforced by composite keys)."""

    __tablename__ = "edge"
    __table_args__ = (
        sa.UniqueConstraint("upstream_task_id", "downstream_task_id"),
        sa.CheckConstraint("upstream_task_id <> downstream_task_id", name="edge_not_self"),
        project_fk("pipeline"),
        sa.ForeignKeyConstraint(
            ["pipeline_id", "upstream_task_id"], ["task.pipeline_id", "task.id"], ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["pipeline_id", "downstream_task_id"], ["task.pipeline_id", "task.id"], ondelete="CASCADE"
        ),
    )

    project_id: Mapped[int] = mapped_column(sa.Integer, nullable=False, index=True)
    pipeline_id: Mapped[int] = mapped_column(sa.Integer, nullable=False, index=True)
    upstream_task_id: Mapped[int] = mapped_column(sa.Integer, nullable=False)
    downstream_task_id: Mapped[int] = mapped_column(sa.Integer, nullable=False, index=True)
