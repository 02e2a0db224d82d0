"""Where an inference service runs: its resource group's cluster (backend, serving engine, Prometheus), else
the platform's default backend (local processes). No backend here: the API and the controller read this."""
from __future__ import annotations

from ..extensions import db
from ..models import Cluster, ClusterKind, InferenceService, ResourceGroup, ServingEngine


def service_cluster(service: InferenceService) -> Cluster | None:
    if service.resource_group_id is None:
        return None
    group = db.session.get(ResourceGroup, service.resource_group_id)
    return db.session.get(Cluster, group.cluster_id) if group else None


def engine(cluster: Cluster | None) -> str:
    """``kserve`` or ``deployments`` (also what a local service is: processes behind the router)."""
    if cluster is None or cluster.kind != ClusterKind.KUBERNETES:
        return ServingEngine.DEPLOYMENTS.value
    return cluster.serving_engine.value


def service_engine(service: InferenceService) -> str:
    return engine(service_cluster(service))


def runs_locally(cluster: Cluster | None) -> bool:
    return cluster is None or cluster.kind != ClusterKind.KUBERNETES
