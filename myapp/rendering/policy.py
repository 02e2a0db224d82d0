"""The platform's own contract for what it submits (checked on every render).

A manifest that breaks one of these is not necessarily invalid for Kubernetes, but the
platform relies on it: labels to find and bill objects, the env contract inside
containers, the project's own service account, secrets only through secretKeyRef.
"""
from __future__ import annotations

import re
from typing import Any, Iterable, Iterator, Mapping

from ..contract import GROUP_NAME_ANNOTATION, ISTIO_INJECT_ANNOTATION, MANAGED_BY, MANAGED_BY_LABEL, REQUIRED_LABELS
from .context import is_forbidden_service_account
from .pod import CONTRACT_ENV, containers, pod_templates

Problem = tuple[str, str]
# Env names that look like credentials must never carry a literal value.
SECRET_LIKE = re.compile(r"PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIAL", re.I)
LONG_RUNNING = frozenset({"Deployment", "Notebook"})  # pods that belong in the mesh


def _labels(meta: Mapping[str, Any], path: str) -> Iterator[Problem]:
    labels = meta.get("labels") or {}
    for key in REQUIRED_LABELS:
        if key not in labels:
            yield f"{path}.labels", f"missing platform label {key!r}"
    if labels.get(MANAGED_BY_LABEL, MANAGED_BY) != MANAGED_BY:
        yield f"{path}.labels", f"{MANAGED_BY_LABEL} must be {MANAGED_BY!r}"


def _container(container: Mapping[str, Any], path: str) -> Iterator[Problem]:
    env = container.get("env") or []
    names = [var.get("name") for var in env]
    for name in CONTRACT_ENV:
        if names.count(name) != 1:
            yield f"{path}.env", f"must set {name} exactly once"
    for index, var in enumerate(env):
        source = var.get("valueFrom") or {}
        if "secretKeyRef" not in source and SECRET_LIKE.search(var.get("name", "")):
            yield f"{path}.env[{index}]", f"{var['name']} looks like a secret: use valueFrom.secretKeyRef"
    for index, source in enumerate(container.get("envFrom") or []):
        if "secretRef" in source:
            yield f"{path}.envFrom[{index}]", "secrets may only be referenced per key (valueFrom.secretKeyRef)"
    for section in ("limits", "requests"):
        for key, value in ((container.get("resources") or {}).get(section) or {}).items():
            if not isinstance(value, str):
                yield f"{path}.resources.{section}.{key}", "quantities must be strings"


def check(obj: Mapping[str, Any]) -> Iterator[Problem]:
    yield from _labels(obj.get("metadata") or {}, "metadata")
    for pod in pod_templates(obj):
        meta = pod.template.get("metadata") or {}
        if pod.has_metadata:
            yield from _labels(meta, f"{pod.path}.metadata")
            inject = (meta.get("annotations") or {}).get(ISTIO_INJECT_ANNOTATION)
            if obj["kind"] not in LONG_RUNNING and inject != "false":
                yield f"{pod.path}.metadata.annotations", f'batch pods need {ISTIO_INJECT_ANNOTATION}: "false"'
        spec = pod.template.get("spec") or {}
        account = spec.get("serviceAccountName")
        if not account:
            yield f"{pod.path}.spec.serviceAccountName", "must be the project's service account"
        elif is_forbidden_service_account(account):
            yield f"{pod.path}.spec.serviceAccountName", f"{account!r} is a shared/admin account"
        if spec.get("serviceAccount") not in (None, account):
            yield f"{pod.path}.spec.serviceAccount", "must not differ from serviceAccountName"
        for where, container in containers(spec):
            yield from _container(container, f"{pod.path}.spec.{where}")


def check_set(objects: Iterable[Mapping[str, Any]]) -> Iterator[tuple[str, str, str]]:
    """Rules across one render's manifests: unique names, gang-scheduling consistency."""
    objects = list(objects)
    seen: set[tuple[str, str, str]] = set()
    groups = {o["metadata"]["name"]: o for o in objects if o.get("kind") == "PodGroup"}
    for obj in objects:
        ident = f"{obj.get('kind')}/{obj['metadata'].get('name')}"
        key = (obj.get("apiVersion"), obj.get("kind"), obj["metadata"].get("name"))
        if key in seen:
            yield ident, "metadata.name", "two manifests with the same kind and name"
        seen.add(key)
        members: dict[str, int] = {}
        for pod in pod_templates(obj):
            group = ((pod.template.get("metadata") or {}).get("annotations") or {}).get(GROUP_NAME_ANNOTATION)
            if group is not None:
                members[group] = members.get(group, 0) + pod.replicas
                if (pod.template.get("spec") or {}).get("schedulerName") != "volcano":
                    yield ident, f"{pod.path}.spec.schedulerName", "gang-scheduled pods need schedulerName volcano"
        for group, count in members.items():
            if group not in groups:
                yield ident, "metadata.annotations", f"pods reference PodGroup {group!r}, which is not rendered"
            elif groups[group]["spec"].get("minMember") != count:
                yield f"PodGroup/{group}", "spec.minMember", f"must equal the number of pods ({count})"
