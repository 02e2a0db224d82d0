"""Images and job templates: the catalog users drag into pipelines."""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from flask_appbuilder import Model
from sqlalchemy.orm import Mapped, mapped_column

from .base import IdMixin, JSONType, TimestampMixin


class Image(IdMixin, TimestampMixin, Model):
    __tablename__ = "image"
    __table_args__ = (sa.UniqueConstraint("repository", "tag"),)

    repository: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    tag: Mapped[str] = mapped_column(sa.String(128), nullable=False)
    # Name of a Kubernetes Secret in the job's namespace; never the credential itself.
    pull_secret: Mapped[str | None] = mapped_column(sa.String(253))
    description: Mapped[str] = mapped_column(sa.Text, default="", nullable=False)
    # An image a build registered for one project (myapp/images/); None: the shared catalog.
    project_id: Mapped[int | None] = mapped_column(
        sa.ForeignKey("project.id", ondelete="CASCADE"), index=True
    )
    # Its local Python environment (MYAPP_HOME/environments/<hash>), which local jobs and notebooks
    # naming the image run with (myapp/images/environments.py).
    environment: Mapped[str | None] = mapped_column(sa.String(64))

    @classmethod
    def visible_to(cls, project_id: int) -> sa.ColumnElement[bool]:
        """The shared catalog's images and the project's own: what its tasks and notebooks may name."""
        return sa.or_(cls.project_id.is_(None), cls.project_id == project_id)


class JobTemplate(IdMixin, TimestampMixin, Model):
    __tablename__ = "job_template"
    __table_args__ = (sa.UniqueConstraint("name", "version"),)

    name: Mapped[str] = mapped_column(sa.String(63), nullable=False, index=True)
    version: Mapped[str] = mapped_column(sa.String(32), nullable=False)
    description: Mapped[str] = mapped_column(sa.Text, default="", nullable=False)
    category: Mapped[str] = mapped_column(sa.String(63), default="general", nullable=False)
    # The Kubernetes kind rendered for it: Job, PyTorchJob, TFJob, XGBoostJob, MPIJob, ...
    kind: Mapped[str] = mapped_column(sa.String(63), nullable=False)
    image: Mapped[str] = mapped_column(sa.String(512), nullable=False)
    command: Mapped[list[str]] = mapped_column(JSONType, default=list, nullable=False)
    args_schema: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict, nullable=False)
    default_resources: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict, nullable=False)
    max_resources: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict, nullable=False)
    env: Mapped[dict[str, str]] = mapped_column(JSONType, default=dict, nullable=False)
    # Its jobs resume from their own checkpoints when started again (template.yaml `checkpoints`):
    # admission preempts them first (myapp/admission/gate.py).
    checkpoints: Mapped[bool] = mapped_column(sa.Boolean, default=False, server_default=sa.false(), nullable=False)
    # True for templates shipped in job-templates/ (refreshed by `myapp init`).
    builtin: Mapped[bool] = mapped_column(sa.Boolean, default=False, nullable=False)
