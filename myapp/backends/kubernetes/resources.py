"""The kinds the platform submits and one thin, dict-in / dict-out layer over the official client.

Custom resources go through CustomObjectsApi, built-ins through the typed APIs (their pydantic
models reject unknown fields client-side; the server validates strictly as well). Responses
are read raw (``_preload_content=False``) and decoded as JSON: the status adapters work on
plain dicts exactly as the API server sent them, without a model round trip.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from kubernetes import client

from ...rendering.contract import JOB_NAME_LABEL
from ..base import ObjectRef, UnsupportedKind


@dataclass(frozen=True)
class Kind:
    api_version: str
    kind: str
    plural: str
    typed: tuple[str, str] | None = None  # (API class, snake_case resource) for built-ins
    workload: bool = False  # its status is the task's status
    namespaced: bool = True  # False: cluster-scoped (a resource group's Volcano Queue), custom resources only

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]


_KINDS = [
    Kind("batch/v1", "Job", "jobs", ("BatchV1Api", "job"), workload=True),
    Kind("apps/v1", "Deployment", "deployments", ("AppsV1Api", "deployment"), workload=True),
    Kind("v1", "Service", "services", ("CoreV1Api", "service")),
    Kind("v1", "ConfigMap", "configmaps", ("CoreV1Api", "config_map")),
    Kind("autoscaling/v2", "HorizontalPodAutoscaler", "horizontalpodautoscalers",
         ("AutoscalingV2Api", "horizontal_pod_autoscaler")),
    *(Kind("kubeflow.org/v1", kind, kind.lower() + "s", workload=True)
      for kind in ("TFJob", "PyTorchJob", "XGBoostJob", "MPIJob", "Notebook")),
    Kind("batch.volcano.sh/v1alpha1", "Job", "jobs", workload=True),
    Kind("scheduling.volcano.sh/v1beta1", "PodGroup", "podgroups"),
    Kind("scheduling.volcano.sh/v1beta1", "Queue", "queues", namespaced=False),
    *(Kind(f"networking.istio.io/{v}", "VirtualService", "virtualservices") for v in ("v1", "v1beta1", "v1alpha3")),
    # A notebook's member check (ext-authz) and its work folder.
    *(Kind(f"security.istio.io/{v}", "AuthorizationPolicy", "authorizationpolicies") for v in ("v1", "v1beta1")),
    # An inference service where KServe is installed (myapp/serving): the whole service in one object.
    Kind("serving.kserve.io/v1beta1", "InferenceService", "inferenceservices", workload=True),
    Kind("v1", "PersistentVolumeClaim", "persistentvolumeclaims", ("CoreV1Api", "persistent_volume_claim")),
]
KINDS: dict[tuple[str, str], Kind] = {(k.api_version, k.kind): k for k in _KINDS}
TRAINING_KINDS = frozenset({"TFJob", "PyTorchJob", "XGBoostJob", "MPIJob"})


def kind_of(api_version: str, kind: str) -> Kind:
    try:
        return KINDS[(api_version, kind)]
    except KeyError:
        raise UnsupportedKind(f"the Kubernetes backend does not submit {api_version} {kind}") from None


def pod_selector(ref_kind: str, api_version: str, name: str, job_name: str) -> str:
    """Label selector of every pod of an attempt. Notebook pods come from the notebook
    controller's StatefulSet, which labels them notebook-name=<name> (no pod template metadata)."""
    if (api_version, ref_kind) == ("kubeflow.org/v1", "Notebook"):
        return f"notebook-name={name}"
    return f"{JOB_NAME_LABEL}={job_name}"


def _json(response: Any) -> Any:
    data = response.data
    return json.loads(data) if data else {}


class KubeApi:
    """Single requests, no retries (the backend wraps each call in its RetryPolicy)."""

    def __init__(self, api_client: client.ApiClient, timeout: tuple[float, float]):
        self.api_client = api_client
        self.timeout = timeout
        self.custom = client.CustomObjectsApi(api_client)
        self.core = client.CoreV1Api(api_client)
        self._typed: dict[str, Any] = {}

    def _api(self, name: str) -> Any:
        if name not in self._typed:
            self._typed[name] = getattr(client, name)(self.api_client)
        return self._typed[name]

    def _opts(self, timeout: tuple[float, float] | None = None) -> dict[str, Any]:
        return {"_preload_content": False, "_request_timeout": timeout or self.timeout}

    # --- objects -------------------------------------------------------------------------

    def create(self, obj: dict[str, Any], dry_run: bool) -> dict[str, Any]:
        kind = kind_of(obj["apiVersion"], obj["kind"])
        namespace = obj["metadata"]["namespace"]
        options = {"dry_run": "All" if dry_run else None, "field_validation": "Strict", **self._opts()}
        if kind.typed:
            api, resource = kind.typed
            return _json(getattr(self._api(api), f"create_namespaced_{resource}")(namespace, body=obj, **options))
        return _json(self.custom.create_namespaced_custom_object(
            kind.group, kind.version, namespace, kind.plural, body=obj, **options))

    def get(self, ref: ObjectRef) -> dict[str, Any]:
        kind = kind_of(ref.api_version, ref.kind)
        if kind.typed:
            api, resource = kind.typed
            return _json(getattr(self._api(api), f"read_namespaced_{resource}")(ref.name, ref.namespace,
                                                                                 **self._opts()))
        return _json(self.custom.get_namespaced_custom_object(
            kind.group, kind.version, ref.namespace, kind.plural, ref.name, **self._opts()))

    def patch(self, ref: ObjectRef, body: dict[str, Any], dry_run: bool = False) -> dict[str, Any]:
        """JSON merge patch (valid for built-ins and custom resources alike)."""
        kind = kind_of(ref.api_version, ref.kind)
        options = {"dry_run": "All" if dry_run else None, "_content_type": "application/merge-patch+json",
                   **self._opts()}
        if kind.typed:
            api, resource = kind.typed
            return _json(getattr(self._api(api), f"patch_namespaced_{resource}")(ref.name, ref.namespace,
                                                                                  body=body, **options))
        return _json(self.custom.patch_namespaced_custom_object(
            kind.group, kind.version, ref.namespace, kind.plural, ref.name, body=body, **options))

    def delete(self, ref: ObjectRef, propagation: str) -> None:
        kind = kind_of(ref.api_version, ref.kind)
        if kind.typed:
            api, resource = kind.typed
            _json(getattr(self._api(api), f"delete_namespaced_{resource}")(
                ref.name, ref.namespace, propagation_policy=propagation, **self._opts()))
        else:
            _json(self.custom.delete_namespaced_custom_object(
                kind.group, kind.version, ref.namespace, kind.plural, ref.name,
                propagation_policy=propagation, **self._opts()))

    # --- cluster-scoped custom resources (a resource group's Volcano Queue) ----------------

    def create_cluster(self, obj: dict[str, Any], dry_run: bool) -> dict[str, Any]:
        kind = kind_of(obj["apiVersion"], obj["kind"])
        return _json(self.custom.create_cluster_custom_object(
            kind.group, kind.version, kind.plural, body=obj, dry_run="All" if dry_run else None,
            field_validation="Strict", **self._opts()))

    def get_cluster(self, api_version: str, kind_name: str, name: str) -> dict[str, Any]:
        kind = kind_of(api_version, kind_name)
        return _json(self.custom.get_cluster_custom_object(kind.group, kind.version, kind.plural, name,
                                                           **self._opts()))

    def replace_cluster(self, obj: dict[str, Any], dry_run: bool = False) -> dict[str, Any]:
        """PUT: the whole object (with the resourceVersion read, so a concurrent change is a 409)."""
        kind = kind_of(obj["apiVersion"], obj["kind"])
        return _json(self.custom.replace_cluster_custom_object(
            kind.group, kind.version, kind.plural, obj["metadata"]["name"], body=obj,
            dry_run="All" if dry_run else None, field_validation="Strict", **self._opts()))

    # --- secrets: the platform writes a run's token Secret and deletes it, never reads one ---

    def create_secret(self, body: dict[str, Any], dry_run: bool) -> None:
        _json(self._api("CoreV1Api").create_namespaced_secret(body["metadata"]["namespace"], body=body,
                                                              dry_run="All" if dry_run else None,
                                                              field_validation="Strict", **self._opts()))

    def replace_secret(self, body: dict[str, Any], dry_run: bool) -> None:
        meta = body["metadata"]
        _json(self._api("CoreV1Api").replace_namespaced_secret(meta["name"], meta["namespace"], body=body,
                                                               dry_run="All" if dry_run else None,
                                                               field_validation="Strict", **self._opts()))

    def delete_secret(self, namespace: str, name: str) -> None:
        _json(self.core.delete_namespaced_secret(name, namespace, **self._opts()))

    # --- pods ----------------------------------------------------------------------------

    def list_pods(self, namespace: str, selector: str) -> list[dict[str, Any]]:
        return _json(self.core.list_namespaced_pod(namespace, label_selector=selector, **self._opts()))["items"]

    def get_pod(self, namespace: str, name: str) -> dict[str, Any]:
        return _json(self.core.read_namespaced_pod(name, namespace, **self._opts()))

    def delete_pods(self, namespace: str, selector: str) -> None:
        _json(self.core.delete_collection_namespaced_pod(namespace, label_selector=selector,
                                                         propagation_policy="Background", **self._opts()))

    def read_log(self, namespace: str, pod: str, container: str, tail_lines: int | None = None,
                 limit_bytes: int | None = None) -> str:
        """The container's whole current log (or its last ``tail_lines`` within ``limit_bytes``), each line
        prefixed by its RFC3339Nano timestamp."""
        bounds: dict[str, Any] = {k: v for k, v in (("tail_lines", tail_lines), ("limit_bytes", limit_bytes))
                                  if v is not None}
        # With _preload_content=False (in _opts) the client returns the raw HTTP response, not a str.
        response: Any = self.core.read_namespaced_pod_log(pod, namespace, container=container, timestamps=True,
                                                          **bounds, **self._opts())
        return response.data.decode("utf-8", errors="replace")

    def stream_log(self, namespace: str, pod: str, container: str, *, follow: bool,
                   since_seconds: int | None = None) -> Any:
        """Raw urllib3 response (timestamps on) to stream; the read timeout doubles as a keep-alive
        check: a silent follow stream times out and is reopened without loss."""
        return self.core.read_namespaced_pod_log(
            pod, namespace, container=container, follow=follow, timestamps=True, since_seconds=since_seconds,
            **self._opts())

    def pod_metrics(self, namespace: str, selector: str) -> list[dict[str, Any]]:
        return _json(self.custom.list_namespaced_custom_object(
            "metrics.k8s.io", "v1beta1", namespace, "pods", label_selector=selector, **self._opts()))["items"]
