"""Which resources the double serves: a few built-ins plus every CRD rendering validates against (myapp/rendering/crds).

A resource is identified the way the API server's storage does it, by (group, plural);
every served version of a CRD shares that storage (reads answer in the requested version).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

from myapp.rendering.schemas import crd_dir


@dataclass(frozen=True)
class ResourceType:
    group: str  # "" for the core group
    versions: tuple[str, ...]
    plural: str
    kind: str
    namespaced: bool = True
    status_subresource: bool = True  # status is written only through /status
    custom: bool = False  # CRD-backed: validated against the CRD schema
    read_only: bool = False  # e.g. PodMetrics: filled by the control API only

    def api_version(self, version: str | None = None) -> str:
        version = version or self.versions[0]
        return f"{self.group}/{version}" if self.group else version

    @property
    def qualified(self) -> str:  # "jobs.batch", "pods"
        return f"{self.plural}.{self.group}" if self.group else self.plural


BUILTINS = (
    ResourceType("", ("v1",), "pods", "Pod"),
    ResourceType("", ("v1",), "services", "Service"),
    ResourceType("", ("v1",), "configmaps", "ConfigMap", status_subresource=False),
    ResourceType("", ("v1",), "secrets", "Secret", status_subresource=False),
    ResourceType("", ("v1",), "persistentvolumeclaims", "PersistentVolumeClaim"),
    ResourceType("", ("v1",), "nodes", "Node", namespaced=False),  # read by node discovery (capacity.py)
    ResourceType("batch", ("v1",), "jobs", "Job"),
    ResourceType("apps", ("v1",), "deployments", "Deployment"),
    ResourceType("apps", ("v1",), "statefulsets", "StatefulSet"),
    ResourceType("autoscaling", ("v2",), "horizontalpodautoscalers", "HorizontalPodAutoscaler"),
    ResourceType("metrics.k8s.io", ("v1beta1",), "pods", "PodMetrics", status_subresource=False, read_only=True),
)


@lru_cache(maxsize=4)
def _custom(directory: str) -> tuple[ResourceType, ...]:
    from pathlib import Path

    out = []
    for path in sorted(Path(directory).glob("*.json")):
        crd = json.loads(path.read_text())
        if crd.get("kind") != "CustomResourceDefinition":
            continue
        spec = crd["spec"]
        served = [v for v in spec["versions"] if v.get("served")]
        storage = [v["name"] for v in served if v.get("storage")] + [v["name"] for v in served if not v.get("storage")]
        out.append(ResourceType(
            spec["group"], tuple(storage), spec["names"]["plural"], spec["names"]["kind"],
            namespaced=spec.get("scope") == "Namespaced",
            status_subresource=any("status" in (v.get("subresources") or {}) for v in served),
            custom=True,
        ))
    return tuple(out)


def all_types() -> tuple[ResourceType, ...]:
    return BUILTINS + _custom(str(crd_dir()))


def lookup(group: str, version: str, plural: str) -> ResourceType | None:
    for rtype in all_types():
        if rtype.group == group and rtype.plural == plural and version in rtype.versions:
            return rtype
    return None


def by_kind(api_version: str, kind: str) -> ResourceType:
    group, _, version = api_version.rpartition("/")
    for rtype in all_types():
        if rtype.group == group and rtype.kind == kind and version in rtype.versions:
            return rtype
    raise KeyError(f"the double serves no {api_version} {kind}")
