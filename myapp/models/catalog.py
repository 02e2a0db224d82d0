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
    # True for templates shipped in job-templates/ (refreshed by `myapp init`).
    builtin: Mapped[bool] = mapped_column(sa.Boolean, default=False, nullable=False)
