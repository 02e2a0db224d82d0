"""Per-project workspace objects: notebooks, model versions, inference services, image builds."""
from __future__ import annotations

import enum
from typing import Any

import sqlalchemy as sa
from flask_appbuilder import Model
from sqlalchemy.orm import Mapped, mapped_column

from .base import IdMixin, JSONType, TimestampMixin, enum_column, project_fk


class ServiceState(str, enum.Enum):
    """Long-running things (notebooks, inference services) and builds."""

    PENDING = "pending"
    RUNNING = "running"
    STOPPED = "stopped"
    SUCCEEDED = "succeeded"
    FAILED = "failed"


class Notebook(IdMixin, TimestampMixin, Model):
    __tablename__ = "notebook"
    __table_args__ = (sa.UniqueConstraint("project_id", "name"),)

    project_id: Mapped[int] = mapped_column(
        sa.ForeignKey("project.id", ondelete="CASCADE"), nullable=False, index=True
    )
    name: Mapped[str] = mapped_column(sa.String(63), nullable=False)
    image: Mapped[str] = mapped_column(sa.String(512), nullable=False)
    resources: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict, nullable=False)
    resource_group_id: Mapped[int | None] = mapped_column(
        sa.ForeignKey("resource_group.id", ondelete="SET NULL")
    )
    state: Mapped[ServiceState] = mapped_column(
        enum_column(ServiceState, "notebook_state"), default=ServiceState.PENDING, nullable=False
    )
    url: Mapped[str | None] = mapped_column(sa.String(2048))
    created_by_id: Mapped[int | None] = mapped_column(sa.ForeignKey("ab_user.id", ondelete="SET NULL"))


class ModelVersion(IdMixin, TimestampMixin, Model):
    __tablename__ = "model_version"
    __table_args__ = (
        sa.UniqueConstraint("project_id", "name", "version"),
        sa.UniqueConstraint("project_id", "id"),
    )

    project_id: Mapped[int] = mapped_column(
        sa.ForeignKey("project.id", ondelete="CASCADE"), nullable=False, index=True
    )
    name: Mapped[str] = mapped_column(sa.String(63), nullable=False)
    version: Mapped[int] = mapped_column(sa.Integer, nullable=False)
    uri: Mapped[str] = mapped_column(sa.String(2048), nullable=False)
    framework: Mapped[str] = mapped_column(sa.String(32), default="pytorch", nullable=False)
    metrics: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict, nullable=False)
    task_run_id: Mapped[int | None] = mapped_column(sa.ForeignKey("task_run.id", ondelete="SET NULL"))


class InferenceService(IdMixin, TimestampMixin, Model):
    __tablename__ = "inference_service"
    __table_args__ = (sa.UniqueConstraint("project_id", "name"), project_fk("model_version"))

    project_id: Mapped[int] = mapped_column(sa.Integer, nullable=False, index=True)
    name: Mapped[str] = mapped_column(sa.String(63), nullable=False)
    model_version_id: Mapped[int] = mapped_column(sa.Integer, nullable=False)
    min_replicas: Mapped[int] = mapped_column(sa.Integer, default=1, nullable=False)
    max_replicas: Mapped[int] = mapped_column(sa.Integer, default=1, nullable=False)
    resources: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict, nullable=False)
    # Traffic split between model versions for canary rollouts: {"<version id>": weight}.
    traffic: Mapped[dict[str, int]] = mapped_column(JSONType, default=dict, nullable=False)
    state: Mapped[ServiceState] = mapped_column(
        enum_column(ServiceState, "service_state"), default=ServiceState.PENDING, nullable=False
    )
    url: Mapped[str | None] = mapped_column(sa.String(2048))


class ImageBuild(IdMixin, TimestampMixin, Model):
    """A Kaniko build from a Dockerfile or a package list; never `docker commit`."""

    __tablename__ = "image_build"

    project_id: Mapped[int] = mapped_column(
        sa.ForeignKey("project.id", ondelete="CASCADE"), nullable=False, index=True
    )
    repository: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    tag: Mapped[str] = mapped_column(sa.String(128), nullable=False)
    base_image: Mapped[str | None] = mapped_column(sa.String(512))
    dockerfile: Mapped[str | None] = mapped_column(sa.Text)
    packages: Mapped[list[str]] = mapped_column(JSONType, default=list, nullable=False)
    state: Mapped[ServiceState] = mapped_column(
        enum_column(ServiceState, "build_state"), default=ServiceState.PENDING, nullable=False
    )
    reason: Mapped[str | None] = mapped_column(sa.Text)
    image_id: Mapped[int | None] = mapped_column(sa.ForeignKey("image.id", ondelete="SET NULL"))
    created_by_id: Mapped[int | None] = mapped_column(sa.ForeignKey("ab_user.id", ondelete="SET NULL"))
