"""API-server validation that JSON schemas cannot express (apimachinery / core validation):
name formats, label syntax, container names, env names, quantities, a few per-kind rules."""
from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from .names import is_dns1035_label, is_dns1123_label, is_label_value, is_qualified_key
from .pod import containers, pod_templates
from .quantity import parse_quantity

Problem = tuple[str, str]
_ENV_NAME = re.compile(r"[-._a-zA-Z][-._a-zA-Z0-9]*")
_PORT_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")  # IANA_SVC_NAME, <= 15 chars


def metadata(meta: Mapping[str, Any], path: str) -> Iterator[Problem]:
    for key, value in (meta.get("labels") or {}).items():
        if not is_qualified_key(key):
            yield f"{path}.labels", f"invalid label key {key!r}"
        if not is_label_value(value):
            yield f"{path}.labels.{key}", f"invalid label value {value!r} (<= 63 chars, alphanumeric ends)"
    for key in meta.get("annotations") or {}:
        if not is_qualified_key(key):
            yield f"{path}.annotations", f"invalid annotation key {key!r}"


def object_names(obj: Mapping[str, Any]) -> Iterator[Problem]:
    meta = obj.get("metadata") or {}
    name = meta.get("name")
    if obj.get("kind") == "Service":  # Service names become DNS names: must start with a letter
        if not is_dns1035_label(name):
            yield "metadata.name", f"{name!r} is not a DNS-1035 label"
    elif not is_dns1123_label(name):
        yield "metadata.name", f"{name!r} is not a DNS-1123 label (lower case, <= 63 chars)"
    if "namespace" in meta and not is_dns1123_label(meta["namespace"]):
        yield "metadata.namespace", f"{meta['namespace']!r} is not a DNS-1123 label"
    yield from metadata(meta, "metadata")


def pods(obj: Mapping[str, Any]) -> Iterator[Problem]:
    for pod in pod_templates(obj):
        yield from metadata(pod.template.get("metadata") or {}, f"{pod.path}.metadata")
        spec = pod.template.get("spec") or {}
        seen: set[Any] = set()  # names checked above; any value may repeat
        for where, container in containers(spec):
            path = f"{pod.path}.spec.{where}"
            name = container.get("name")
            if not is_dns1123_label(name):
                yield f"{path}.name", f"{name!r} is not a DNS-1123 label"
            elif name in seen:
                yield f"{path}.name", f"duplicate container name {name!r}"
            seen.add(name)
            yield from _env(container.get("env") or [], f"{path}.env")
            yield from _resources(container.get("resources") or {}, f"{path}.resources")
            for index, port in enumerate(container.get("ports") or []):
                if "name" in port and not (len(port["name"]) <= 15 and _PORT_NAME.fullmatch(port["name"])):
                    yield f"{path}.ports[{index}].name", "must be an IANA service name (<= 15 chars)"
                if not 1 <= port.get("containerPort", 0) <= 65535:
                    yield f"{path}.ports[{index}].containerPort", "must be 1..65535"


def _env(env: list[Mapping[str, Any]], path: str) -> Iterator[Problem]:
    for index, var in enumerate(env):
        if not _ENV_NAME.fullmatch(var.get("name", "")):
            yield f"{path}[{index}].name", f"invalid environment variable name {var.get('name')!r}"
        if "value" in var and "valueFrom" in var:
            yield f"{path}[{index}]", "value and valueFrom are mutually exclusive"


def _resources(resources: Mapping[str, Any], path: str) -> Iterator[Problem]:
    amounts: dict[str, dict[str, Any]] = {}
    for section in ("limits", "requests"):
        for key, value in (resources.get(section) or {}).items():
            try:
                amounts.setdefault(section, {})[key] = parse_quantity(value)
            except ValueError as exc:
                yield f"{path}.{section}.{key}", str(exc)
    for key, request in amounts.get("requests", {}).items():
        limit = amounts.get("limits", {}).get(key)
        if limit is not None and request > limit:
            yield f"{path}.requests.{key}", "must be less than or equal to the limit"


def kind_rules(obj: Mapping[str, Any]) -> Iterator[Problem]:
    kind, spec = obj.get("kind"), obj.get("spec") or {}
    if obj.get("apiVersion") == "batch/v1" and kind == "Job":
        restart = ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy")
        if restart not in ("Never", "OnFailure"):
            yield "spec.template.spec.restartPolicy", "must be Never or OnFailure for a Job"
    elif kind == "Deployment":
        selector = (spec.get("selector") or {}).get("matchLabels") or {}
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if not selector or any(labels.get(k) != v for k, v in selector.items()):
            yield "spec.selector", "must be non-empty and match the pod template labels"
    elif kind == "Service":
        for key, value in (spec.get("selector") or {}).items():
            if not is_qualified_key(key) or not is_label_value(value):
                yield "spec.selector", f"invalid selector {key!r}: {value!r}"
    elif kind == "HorizontalPodAutoscaler" and (
            spec.get("minReplicas", 1) > spec.get("maxReplicas", 0) or spec.get("minReplicas", 1) < 1):
        yield "spec.minReplicas", "must be >= 1 and <= maxReplicas"


def check(obj: Mapping[str, Any]) -> Iterator[Problem]:
    yield from object_names(obj)
    yield from pods(obj)
    yield from kind_rules(obj)
