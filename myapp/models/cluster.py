"""Clusters, resource groups and quotas: admin-managed capacity."""
from __future__ import annotations

import datetime as dt
import enum
from typing import Any

import sqlalchemy as sa
from flask_appbuilder import Model
from sqlalchemy.orm import Mapped, mapped_column, relationship

from .base import IdMixin, JSONType, TimestampMixin, enum_column


class ClusterKind(str, enum.Enum):
    KUBERNETES = "kubernetes"
    LOCAL = "local"


# What `myapp init` registers for this machine (setup_data.ensure_local_cluster): a local cluster and its
# default resource group, where the work that names no resource group counts when the platform's default
# backend is local (admission/usage.py).
LOCAL_CLUSTER = "local"
LOCAL_DEFAULT_GROUP = "default"


class ServingEngine(str, enum.Enum):
    """What an inference service on the cluster renders to (myapp/serving/controller.py)."""
    DEPLOYMENTS = "deployments"  # Deployment + Service + HPA per version, the platform's Istio split
    KSERVE = "kserve"  # KServe InferenceServices (KServe installed there)


class Cluster(IdMixin, TimestampMixin, Model):
    __tablename__ = "cluster"

    name: Mapped[str] = mapped_column(sa.String(63), unique=True, nullable=False)
    kind: Mapped[ClusterKind] = mapped_column(enum_column(ClusterKind, "cluster_kind"), nullable=False)
    # Kubernetes only: a kubeconfig context, or the in-cluster service account.
    kube_context: Mapped[str | None] = mapped_column(sa.String(253))
    in_cluster: Mapped[bool] = mapped_column(sa.Boolean, default=False, nullable=False)
    prometheus_url: Mapped[str | None] = mapped_column(sa.String(2048))
    enabled: Mapped[bool] = mapped_column(sa.Boolean, default=True, nullable=False)
    serving_engine: Mapped[ServingEngine] = mapped_column(
        enum_column(ServingEngine, "serving_engine"), default=ServingEngine.DEPLOYMENTS,
        server_default=ServingEngine.DEPLOYMENTS.value, nullable=False)


class ResourceGroup(IdMixin, TimestampMixin, Model):
    __tablename__ = "resource_group"

    name: Mapped[str] = mapped_column(sa.String(63), unique=True, nullable=False)
    cluster_id: Mapped[int] = mapped_column(
        sa.ForeignKey("cluster.id", ondelete="RESTRICT"), nullable=False, index=True
    )
    node_selector: Mapped[dict[str, str]] = mapped_column(JSONType, default=dict, nullable=False)
    tolerations: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list, nullable=False)
    gpu_type: Mapped[str | None] = mapped_column(sa.String(128))
    # Total capacity in canonical units: cpu millicores, memory bytes, gpus.
    cpu_millicores: Mapped[int] = mapped_column(sa.BigInteger, default=0, nullable=False)
    memory_bytes: Mapped[int] = mapped_column(sa.BigInteger, default=0, nullable=False)
    gpus: Mapped[int] = mapped_column(sa.Integer, default=0, nullable=False)
    # Volcano queue and gang scheduling, used where Volcano is installed.
    queue: Mapped[str | None] = mapped_column(sa.String(63))
    gang_scheduling: Mapped[bool] = mapped_column(sa.Boolean, default=False, nullable=False)
    # Admission (myapp/admission/gate.py): the nodes the capacity is on, [{name, gpus, cpu_millicores,
    # memory_bytes}]; empty: one node of the totals above, or, on a local cluster whose totals are all 0,
    # the machine's CPUs, memory and GPUs. `policy` orders the group's queue (myapp.scheduler.policy).
    nodes: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list, nullable=False)
    policy: Mapped[str] = mapped_column(sa.String(32), default="sieve", server_default="sieve", nullable=False)
    # How many times one task's attempts may be preempted (to give a quota back, or by the policy).
    max_preemptions: Mapped[int] = mapped_column(sa.Integer, default=2, server_default="2", nullable=False)
    # Capacity discovered on Kubernetes (myapp/backends/kubernetes/capacity.py): with discover_nodes, the
    # worker's tick lists the cluster's Nodes matching node_selector and stores them here ([{name, gpus,
    # cpu_millicores, memory_bytes, schedulable, why}]); once discovered, admission uses the schedulable ones
    # instead of `nodes`. discovery_error: why the last listing failed (the last good list is kept).
    discover_nodes: Mapped[bool] = mapped_column(sa.Boolean, default=False, server_default=sa.false(), nullable=False)
    discovered_nodes: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list, server_default="[]",
                                                                   nullable=False)
    discovered_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    discovery_error: Mapped[str | None] = mapped_column(sa.String(1024))

    cluster: Mapped[Cluster] = relationship()


class Quota(IdMixin, TimestampMixin, Model):
    """What one project may use of one resource group at a time."""

    __tablename__ = "quota"
    __table_args__ = (sa.UniqueConstraint("project_id", "resource_group_id"),)

    project_id: Mapped[int] = mapped_column(
        sa.ForeignKey("project.id", ondelete="CASCADE"), nullable=False, index=True
    )
    resource_group_id: Mapped[int] = mapped_column(
        sa.ForeignKey("resource_group.id", ondelete="CASCADE"), nullable=False, index=True
    )
    cpu_millicores: Mapped[int] = mapped_column(sa.BigInteger, default=0, nullable=False)
    memory_bytes: Mapped[int] = mapped_column(sa.BigInteger, default=0, nullable=False)
    gpus: Mapped[int] = mapped_column(sa.Integer, default=0, nullable=False)
    # Kueue's cohort semantics: the quota is the project's guaranteed share; beyond it the project may
    # borrow what others leave idle (can_borrow), and its own idle share may be lent (can_lend), to be
    # reclaimed by preempting the borrowers when the project needs it.
    can_borrow: Mapped[bool] = mapped_column(sa.Boolean, default=True, server_default=sa.true(), nullable=False)
    can_lend: Mapped[bool] = mapped_column(sa.Boolean, default=True, server_default=sa.true(), nullable=False)
