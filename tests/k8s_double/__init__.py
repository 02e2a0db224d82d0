"""A Kubernetes API-server test double: a real threaded HTTP server on 127.0.0.1 that the
official `kubernetes` client talks to unmodified, with strict validation (CRDs from
myapp/rendering/crds, built-ins via kubernetes-validate), watches, pod logs, PodMetrics, and
a Python control API for tests (statuses, pods, log lines, fault injection).

    with ApiServerDouble() as double:
        api = kubernetes.client.CustomObjectsApi(double.api_client())
"""
from .double import ApiServerDouble, Deletion, Request
from .faults import Fault
from .pods import format_timestamp, make_pod, running_state, terminated_state

__all__ = ["ApiServerDouble", "Deletion", "Fault", "Request", "format_timestamp", "make_pod",
           "running_state", "terminated_state"]
