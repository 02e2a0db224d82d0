"""The platform's own contract for what it submits (checked on every render).

A manifest that breaks one of these is not necessarily invalid for Kubernetes, but the
platform relies on it: labels to find and bill objects, the env contract inside
containers, the project's own service account without an API token, secrets only through
secretKeyRef, and the restricted pod security of security.py (with its documented exceptions).
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .context import is_forbidden_service_account
from .contract import (
    GROUP_NAME_ANNOTATION,
    ISTIO_INJECT_ANNOTATION,
    MANAGED_BY,
    MANAGED_BY_LABEL,
    REQUIRED_LABELS,
    TEMPLATE_LABEL,
)
from .pod import CONTRACT_ENV, containers, pod_templates
from .security import KANIKO_CAPABILITIES, KANIKO_IMAGE, ROOT_TEMPLATES, operator_service_account

Problem = tuple[str, str]
# Env names that look like credentials must never carry a literal value.
SECRET_LIKE = re.compile(r"PASSWORD|PASSWD|SECRET|TOKEN|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIAL", re.I)
LONG_RUNNING = frozenset({"Deployment", "Notebook"})  # pods that belong in the mesh
# JupyterLab options that would open a notebook to anyone: an empty token, any origin.
JUPYTER_OPEN = re.compile(r"""\.token=(''|""|$)|allow_origin(_pat)?=['"]?(\*|\.\*)""")


# Cluster-scoped objects shared by every project (a resource group's Volcano Queue): only managed-by.
SHARED_KINDS = frozenset({("scheduling.volcano.sh/v1beta1", "Queue")})


def _labels(meta: Mapping[str, Any], path: str, shared: bool = False) -> Iterator[Problem]:
    labels = meta.get("labels") or {}
    for key in (MANAGED_BY_LABEL,) if shared else REQUIRED_LABELS:
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


def _is_root(context: Mapping[str, Any]) -> bool:
    return context.get("runAsNonRoot") is False or context.get("runAsUser") == 0


def _pod_security(spec: Mapping[str, Any], path: str, root_template: bool) -> Iterator[Problem]:
    context = spec.get("securityContext") or {}
    if (context.get("seccompProfile") or {}).get("type") != "RuntimeDefault":
        yield f"{path}.securityContext.seccompProfile", "must be {type: RuntimeDefault}"
    if not root_template:  # security.ROOT_TEMPLATES: images that run as root, decided per template
        if context.get("runAsNonRoot") is not True:
            yield f"{path}.securityContext.runAsNonRoot", "must be true"
        if context.get("runAsUser") == 0:
            yield f"{path}.securityContext.runAsUser", "must not be 0 (root)"
    for flag in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(flag):
            yield f"{path}.{flag}", "must not share the node's namespaces"


def _container_security(container: Mapping[str, Any], path: str) -> Iterator[Problem]:
    context = container.get("securityContext") or {}
    capabilities = context.get("capabilities") or {}
    # The Kaniko executor (pinned image) alone may be root with the capabilities it needs.
    kaniko = container.get("image") == KANIKO_IMAGE
    if context.get("allowPrivilegeEscalation") is not False:
        yield f"{path}.securityContext.allowPrivilegeEscalation", "must be false"
    if context.get("privileged"):
        yield f"{path}.securityContext.privileged", "must not be privileged"
    if "ALL" not in (capabilities.get("drop") or []):
        yield f"{path}.securityContext.capabilities.drop", "must drop ALL"
    added = capabilities.get("add") or []
    if added and not (kaniko and set(added) <= set(KANIKO_CAPABILITIES)):
        yield f"{path}.securityContext.capabilities.add", (
            f"only the Kaniko executor may add capabilities, and only {', '.join(KANIKO_CAPABILITIES)}")
    if _is_root(context) and not kaniko:
        yield f"{path}.securityContext", "only the Kaniko executor may run as root"
    if (context.get("seccompProfile") or {}).get("type") not in (None, "RuntimeDefault"):
        yield f"{path}.securityContext.seccompProfile", "must be RuntimeDefault (or inherit the pod's)"


def _jupyter(container: Mapping[str, Any], path: str) -> Iterator[Problem]:
    """A notebook's JupyterLab: its token from a Secret, never empty, no cross-origin access."""
    token = [var for var in container.get("env") or [] if var.get("name") == "JUPYTER_TOKEN"]
    if len(token) != 1 or "secretKeyRef" not in (token[0].get("valueFrom") or {}):
        yield f"{path}.env", "JUPYTER_TOKEN must be set once, from a Secret (valueFrom.secretKeyRef)"
    for key in ("command", "args"):
        for index, word in enumerate(container.get(key) or []):
            if isinstance(word, str) and JUPYTER_OPEN.search(word):
                yield f"{path}.{key}[{index}]", f"{word!r} opens JupyterLab (empty token or any origin)"


def check(obj: Mapping[str, Any]) -> Iterator[Problem]:
    yield from _labels(obj.get("metadata") or {}, "metadata", (obj.get("apiVersion"), obj.get("kind")) in SHARED_KINDS)
    if (obj.get("apiVersion"), obj.get("kind")) == ("kubeflow.org/v1", "Notebook"):
        for pod in pod_templates(obj):
            for where, container in containers(pod.template.get("spec") or {}):
                yield from _jupyter(container, f"{pod.path}.spec.{where}")
    for pod in pod_templates(obj):
        meta = pod.template.get("metadata") or {}
        if pod.has_metadata:
            yield from _labels(meta, f"{pod.path}.metadata")
            inject = (meta.get("annotations") or {}).get(ISTIO_INJECT_ANNOTATION)
            if obj["kind"] not in LONG_RUNNING and inject != "false":
                yield f"{pod.path}.metadata.annotations", f'batch pods need {ISTIO_INJECT_ANNOTATION}: "false"'
        spec = pod.template.get("spec") or {}
        account = spec.get("serviceAccountName")
        operator_account = operator_service_account(obj, pod.path)
        if not account:
            yield f"{pod.path}.spec.serviceAccountName", "must be the project's service account"
        elif is_forbidden_service_account(account):
            yield f"{pod.path}.spec.serviceAccountName", f"{account!r} is a shared/admin account"
        elif operator_account and account != operator_account:
            yield f"{pod.path}.spec.serviceAccountName", f"must be the operator's per-job {operator_account!r}"
        if spec.get("serviceAccount") not in (None, account):
            yield f"{pod.path}.spec.serviceAccount", "must not differ from serviceAccountName"
        if spec.get("automountServiceAccountToken") is not (operator_account is not None):
            yield f"{pod.path}.spec.automountServiceAccountToken", (
                "must be true: the operator's account is the pod's API access" if operator_account
                else "must be false: pods get no Kubernetes API token")
        template = ((obj.get("metadata") or {}).get("labels") or {}).get(TEMPLATE_LABEL)
        yield from _pod_security(spec, f"{pod.path}.spec", template in ROOT_TEMPLATES)
        for where, container in containers(spec):
            yield from _container(container, f"{pod.path}.spec.{where}")
            yield from _container_security(container, f"{pod.path}.spec.{where}")


def check_set(objects: Iterable[Mapping[str, Any]]) -> Iterator[tuple[str, str, str]]:
    """Rules across one render's manifests: unique names, gang-scheduling consistency."""
    objects = list(objects)
    seen: set[tuple[str, str, str]] = set()
    groups = {o["metadata"]["name"]: o for o in objects if o.get("kind") == "PodGroup"}
    for obj in objects:
        ident = f"{obj.get('kind')}/{obj['metadata'].get('name')}"
        key = (str(obj.get("apiVersion")), str(obj.get("kind")), str(obj["metadata"].get("name")))
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
