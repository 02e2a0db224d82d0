"""What a serving pass reads from the rows: the ``ServiceSpec`` and ``VersionSpec`` the manifests are
rendered from (a service and its project and cluster; a model version), a server's status as the row's
``versions_status`` shows it, and which shadow version needs its own KServe InferenceService. Plain
functions of rows, for ``controller.py``'s passes.
"""
from __future__ import annotations

from ..backends import Status
from ..models import Cluster, InferenceService, ModelVersion, Project
from ..pipelines.images import pull_secrets
from . import manifests


def _mirrored(service: InferenceService) -> int | None:
    """KServe: the shadow version needing its own InferenceService (one the split already weights does not)."""
    shadow = service.shadow_version_id
    weighted = {k for k, w in service.traffic.items() if w > 0}
    return shadow if shadow is not None and str(shadow) not in weighted else None


def _server_status(current: Status | None, label: str) -> dict:
    if current is None:
        return {"state": "pending", "reason": "", "url": None, "label": label}
    return {"state": current.state.value, "reason": current.reason, "url": current.url, "label": label}


def _spec(service: InferenceService, project: Project, cluster: Cluster | None = None) -> manifests.ServiceSpec:
    return manifests.ServiceSpec(id=service.id, name=service.name, project=project.name, namespace=project.namespace,
                                 service_account=project.service_account, min_replicas=service.min_replicas,
                                 max_replicas=service.max_replicas, autoscale_metric=service.autoscale_metric,
                                 autoscale_target=service.autoscale_target, resources=dict(service.resources or {}),
                                 prometheus_url=(cluster.prometheus_url if cluster else None) or "",
                                 pull_secrets=pull_secrets(project.id))


def _version_spec(row: ModelVersion) -> manifests.VersionSpec:
    return manifests.VersionSpec(id=row.id, version=row.version, framework=row.framework, uri=row.uri,
                                 signature=dict(row.signature or {}), image=row.image)
