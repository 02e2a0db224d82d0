"""The Kubernetes execution backend: rendered manifests -> objects on one cluster.

    backend = from_cluster(cluster_row)            # kubeconfig context or in-cluster
    ref = backend.submit(manifests)                # idempotent per task attempt
    backend.status(ref); backend.logs(ref, follow=True); backend.cleanup(ref, archive)

See docs/backends-kubernetes.md.
"""
from .adapters import (  # noqa: F401
    batch_job_status,
    combine,
    deployment_status,
    notebook_status,
    pod_problems,
    podgroup_waiting,
    replica_name,
    training_job_status,
    volcano_job_status,
    workload_status,
)
from .backend import KubernetesBackend, from_cluster
from .retry import KubeApiError, RetryPolicy

__all__ = ["KubeApiError", "KubernetesBackend", "RetryPolicy", "from_cluster"]
