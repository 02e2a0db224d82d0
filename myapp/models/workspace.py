"""Per-project workspace objects: notebooks, model versions, inference services, image builds."""
from __future__ import annotations

import datetime as dt
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


class ModelStage(str, enum.Enum):
    """Where a registered version stands; members with the developer role move it."""

    NONE = "none"
    STAGING = "staging"
    PRODUCTION = "production"
    ARCHIVED = "archived"


class NotebookState(str, enum.Enum):
    """Where a notebook is (myapp/notebooks/lifecycle.py moves it; `reason` says why)."""

    PENDING = "pending"  # stored intent, no worker has acted yet
    PULLING = "pulling"  # its image is pulled (Kubernetes) or its environment prepared (local)
    WAITING = "waiting"  # waiting for resources (admission, quota, GPUs)
    RUNNING = "running"
    IDLE = "idle"  # running, no kernel or terminal activity for a while (culled after the project's timeout)
    STOPPING = "stopping"
    STOPPED = "stopped"  # nothing runs; the work folder is kept
    FAILED = "failed"


class NotebookIntent(str, enum.Enum):
    """What the owner asked for; the worker makes the state follow."""

    RUNNING = "running"
    STOPPED = "stopped"
    DELETED = "deleted"  # stop, then delete the row and the work folder


class Notebook(IdMixin, TimestampMixin, Model):
    __tablename__ = "notebook"
    __table_args__ = (sa.UniqueConstraint("project_id", "name"),)

    project_id: Mapped[int] = mapped_column(
        sa.ForeignKey("project.id", ondelete="CASCADE"), nullable=False, index=True
    )
    name: Mapped[str] = mapped_column(sa.String(63), nullable=False)
    # A catalog image ("repository:tag"); locally its environment (myapp.images.environments) is the Python it runs.
    image: Mapped[str] = mapped_column(sa.String(512), nullable=False)
    resources: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict, nullable=False)
    resource_group_id: Mapped[int | None] = mapped_column(
        sa.ForeignKey("resource_group.id", ondelete="SET NULL")
    )
    # A volume (Kubernetes: a PersistentVolumeClaim; locally a folder of the project's data) for its work
    # folder; None: a folder of its own, deleted with the notebook.
    volume: Mapped[str | None] = mapped_column(sa.String(63))
    state: Mapped[NotebookState] = mapped_column(
        enum_column(NotebookState, "notebook_state"), default=NotebookState.PENDING, nullable=False
    )
    reason: Mapped[str | None] = mapped_column(sa.Text)
    desired: Mapped[NotebookIntent] = mapped_column(
        enum_column(NotebookIntent, "notebook_intent"), default=NotebookIntent.RUNNING, nullable=False
    )
    # Each start is a new attempt (its own job name), so a start never adopts a stopped attempt's leftovers.
    attempt: Mapped[int] = mapped_column(sa.Integer, default=0, nullable=False)
    # The backend's JobRef of the running attempt (JSON), None when nothing runs.
    job: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    # Where the platform's proxy reaches Jupyter, with its token: never shown to users (NotebookApi.columns).
    upstream: Mapped[str | None] = mapped_column(sa.String(2048))
    url: Mapped[str | None] = mapped_column(sa.String(2048))
    started_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    # Last kernel or terminal activity Jupyter reported (beat's idle check).
    last_activity_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    # When the worker last acted on it: a pending notebook nobody touched for long is requested again.
    requested_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
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
    # Registered from a run: its parameters, and each metric's values per step ({"<name>": [{"step", "value"}]},
    # myapp/outputs/run_summary.py); `metrics` then holds their last values.
    params: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict, nullable=False)
    metric_history: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict, nullable=False)
    task_run_id: Mapped[int | None] = mapped_column(sa.ForeignKey("task_run.id", ondelete="SET NULL"))
    stage: Mapped[ModelStage] = mapped_column(
        enum_column(ModelStage, "model_stage"), default=ModelStage.NONE, nullable=False
    )
    # {"shape": [null, 64], "dtype": "float32"}: what one request's "instances" must look like (null: any size).
    signature: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict, nullable=False)
    files: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list, nullable=False)
    description: Mapped[str] = mapped_column(sa.Text, default="", nullable=False)
    # The escape hatch: a server image of the user's own (Kubernetes only; it must answer POST /predict).
    image: Mapped[str | None] = mapped_column(sa.String(512))


class InferenceService(IdMixin, TimestampMixin, Model):
    __tablename__ = "inference_service"
    __table_args__ = (sa.UniqueConstraint("project_id", "name"), project_fk("model_version"))

    project_id: Mapped[int] = mapped_column(sa.Integer, nullable=False, index=True)
    name: Mapped[str] = mapped_column(sa.String(63), nullable=False)
    model_version_id: Mapped[int] = mapped_column(sa.Integer, nullable=False)
    # Where it runs (its cluster's backend and serving engine); none: the platform's default backend.
    # A plain integer like project_id: the resource groups API refuses to delete a group a service uses.
    resource_group_id: Mapped[int | None] = mapped_column(sa.Integer, index=True)
    min_replicas: Mapped[int] = mapped_column(sa.Integer, default=1, nullable=False)
    max_replicas: Mapped[int] = mapped_column(sa.Integer, default=1, nullable=False)
    resources: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict, nullable=False)
    # Traffic split between model versions for canary rollouts: {"<version id>": weight}.
    traffic: Mapped[dict[str, int]] = mapped_column(JSONType, default=dict, nullable=False)
    state: Mapped[ServiceState] = mapped_column(
        enum_column(ServiceState, "service_state"), default=ServiceState.PENDING, nullable=False
    )
    url: Mapped[str | None] = mapped_column(sa.String(2048))
    # Desired state beyond the split (myapp/serving): a shadow version receiving a copy of the traffic,
    # autoscaling, and deletion (the worker stops everything first, then deletes the row).
    shadow_version_id: Mapped[int | None] = mapped_column(sa.Integer)
    mirror_percent: Mapped[int] = mapped_column(sa.Integer, default=100, nullable=False)
    autoscale_metric: Mapped[str] = mapped_column(sa.String(16), default="cpu", nullable=False)
    autoscale_target: Mapped[int] = mapped_column(sa.Integer, default=70, nullable=False)
    deleting: Mapped[bool] = mapped_column(sa.Boolean, default=False, nullable=False)
    generation: Mapped[int] = mapped_column(sa.Integer, default=1, nullable=False)
    # Actual state, written by the worker only: why it is not running, each version's server
    # ({"<version id>": {"state", "reason", "url"}}) and the backend objects it holds ({"<key>": JobRef dict}).
    reason: Mapped[str] = mapped_column(sa.Text, default="", nullable=False)
    versions_status: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict, nullable=False)
    jobs: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict, nullable=False)
    next_check_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True), index=True)
    # A pass holds the service until then (myapp/serving/controller.py): two workers never act on it at once.
    claimed_until: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))


class BuildSource(str, enum.Enum):
    """What an image build starts from."""

    PACKAGES = "packages"  # a base image plus pip (and, on Kubernetes, apt) package lists
    DOCKERFILE = "dockerfile"  # a complete Dockerfile (Kubernetes only: Kaniko)
    NOTEBOOK = "notebook"  # the `pip freeze` of a running notebook, taken when the build is asked for


class ImageBuild(IdMixin, TimestampMixin, Model):
    """A build of an image: Kaniko on Kubernetes, a Python environment locally (myapp/images/);
    never `docker commit`. The web stores it pending; a worker builds it (docs/images.md)."""

    __tablename__ = "image_build"

    project_id: Mapped[int] = mapped_column(
        sa.ForeignKey("project.id", ondelete="CASCADE"), nullable=False, index=True
    )
    repository: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    tag: Mapped[str] = mapped_column(sa.String(128), nullable=False)
    source: Mapped[BuildSource] = mapped_column(
        enum_column(BuildSource, "build_source"), default=BuildSource.PACKAGES, nullable=False
    )
    base_image: Mapped[str | None] = mapped_column(sa.String(512))
    dockerfile: Mapped[str | None] = mapped_column(sa.Text)
    packages: Mapped[list[str]] = mapped_column(JSONType, default=list, nullable=False)
    apt_packages: Mapped[list[str]] = mapped_column(JSONType, default=list, nullable=False)
    # Which cluster builds it: a resource group on a Kubernetes cluster runs Kaniko; none builds locally.
    resource_group_id: Mapped[int | None] = mapped_column(
        sa.ForeignKey("resource_group.id", ondelete="SET NULL")
    )
    notebook_id: Mapped[int | None] = mapped_column(sa.ForeignKey("notebook.id", ondelete="SET NULL"))
    state: Mapped[ServiceState] = mapped_column(
        enum_column(ServiceState, "build_state"), default=ServiceState.PENDING, nullable=False
    )
    reason: Mapped[str | None] = mapped_column(sa.Text)
    # The local environment's content hash (MYAPP_HOME/environments/<hash>); None for Kaniko builds.
    environment: Mapped[str | None] = mapped_column(sa.String(64))
    cached: Mapped[bool] = mapped_column(sa.Boolean, default=False, nullable=False)
    # The Kaniko Job (myapp.backends.JobRef.as_dict) while it runs on Kubernetes.
    backend_ref: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    started_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    finished_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    image_id: Mapped[int | None] = mapped_column(sa.ForeignKey("image.id", ondelete="SET NULL"))
    created_by_id: Mapped[int | None] = mapped_column(sa.ForeignKey("ab_user.id", ondelete="SET NULL"))

    @property
    def reference(self) -> str:
        return f"{self.repository}:{self.tag}"

    @property
    def is_finished(self) -> bool:
        return self.state in (ServiceState.SUCCEEDED, ServiceState.FAILED)


class RegistryCredentials(TimestampMixin, Model):
    """A project's push credentials for Kaniko builds (myapp/images/credentials.py): a dockerconfigjson
    sealed at rest (myapp/auth/sealed.py, purpose "registry-credentials"), never answered; one per project."""

    __tablename__ = "registry_credentials"

    project_id: Mapped[int] = mapped_column(sa.ForeignKey("project.id", ondelete="CASCADE"), primary_key=True)
    server: Mapped[str] = mapped_column(sa.String(253), nullable=False)  # the registry host ("registry" is taken)
    username: Mapped[str] = mapped_column(sa.String(255), nullable=False)
    sealed_config: Mapped[str] = mapped_column(sa.Text, nullable=False)
