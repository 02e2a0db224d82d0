"""What a render needs to know about where and for whom the task runs.

Plain frozen dataclasses so the API / scheduler can build them from SQL rows without
importing Flask or SQLAlchemy here.
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .errors import ContextError
from .names import is_dns1123_label, is_dns1123_subdomain, is_label_value, is_qualified_key
from .volcano_queue import VolcanoQueue, check_queue

# A project's pods must run as the project's own service account. These names are either
# the namespace default (shared by everything in the namespace) or conventionally bound to
# cluster-wide admin roles, so a render that asks for them is refused.
FORBIDDEN_SERVICE_ACCOUNTS = frozenset({"default", "admin", "cluster-admin", "root"})
_ADMIN_LIKE = re.compile(r"(^|[-.])(cluster-admin|admin|root)([-.]|$)")
MAX_IDENTITY = 253
# Namespaces no project may run in: the cluster's own, the add-ons' the platform relies on (their
# controllers, webhooks and gateways live there) and the platform's own (its database secrets and
# service account). A job there could read or replace what protects every other project.
RESERVED_NAMESPACES = frozenset({"default", "kubeflow", "cert-manager", "knative-serving", "kserve"})
RESERVED_PREFIXES = ("kube-", "istio-", "volcano-")  # kube-system, istio-system, volcano-system, ...
DEFAULT_PLATFORM_NAMESPACE = "myapp"
OUTPUT_DIR = re.compile(r"[A-Za-z0-9_-]{1,64}/[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?/[0-9]{1,6}")
MAX_AVOIDED_NODES = 64
CHECKPOINT_DIR = re.compile(r"[A-Za-z0-9_-]{1,64}/[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
_TOLERATION_KEYS = frozenset({"key", "operator", "value", "effect", "tolerationSeconds"})


@dataclass(frozen=True)
class ResourceGroup:
    """A pool of nodes (e.g. a GPU partition) a project may schedule onto."""

    name: str
    node_selector: Mapping[str, str] = field(default_factory=dict)
    tolerations: Sequence[Mapping[str, object]] = ()
    gpu_type: str | None = None
    queue: str = "default"
    gang_scheduling: bool = False
    # Where Volcano runs (Kubernetes): the group's own Queue, rendered before its gangs' PodGroups.
    volcano_queue: VolcanoQueue | None = None


@dataclass(frozen=True)
class RenderContext:
    """Identity of one task attempt. ``run_id`` may be an int (SQL id) or a string."""

    project: str
    namespace: str
    pipeline: str = ""
    run_id: str | int = ""
    task: str = ""
    attempt: int = 1
    service_account: str = ""
    resource_group: ResourceGroup | None = None
    # Nodes an earlier attempt of the task lost (evicted, NotReady): its pods are kept off them by node
    # affinity (kubernetes.io/hostname NotIn), so a restarted gang runs on healthy capacity.
    avoid_nodes: tuple[str, ...] = ()
    # The Secret with this run's platform API token: templates' ``secret://myapp-api-token/<key>``
    # mounts it (myapp.rendering.contract.run_token_secret). Empty outside a run: the logical name stays.
    api_token_secret: str = ""
    # The attempt's folder on the project's outputs volume (myapp/outputs/declarations.py: "<run>/<task>/<attempt>"),
    # mounted in batch pods as MYAPP_OUTPUT_DIR. Empty outside a run: nothing is mounted.
    output_dir: str = ""
    # The task's checkpoint folder, kept across its attempts (myapp/outputs/checkpoints.py: "<run>/<task>"),
    # mounted in batch pods of templates that checkpoint as MYAPP_CHECKPOINT_DIR. Empty: nothing is mounted.
    checkpoint_dir: str = ""
    # Image reference ("repository:tag") -> the Secret (kubernetes.io/dockerconfigjson, in the namespace) the
    # kubelet pulls it with: the catalog's `pull_secret` of the images the project may use. A pod running one
    # of these images gets imagePullSecrets naming its Secret (myapp/rendering/pod.py).
    pull_secrets: Mapping[str, str] = field(default_factory=dict)


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates
        return False
    return True


def platform_namespace() -> str:
    """The platform's own namespace: ``MYAPP_NAMESPACE`` (install/ sets it from the pod's own
    namespace), read at call time, else ``myapp``."""
    return os.environ.get("MYAPP_NAMESPACE") or DEFAULT_PLATFORM_NAMESPACE


def reserved_namespace(name: str) -> str | None:
    """Why ``name`` may not be a project's namespace, or None if it may."""
    if name == platform_namespace():
        return f"{name!r} is the platform's own namespace (MYAPP_NAMESPACE)"
    if name in RESERVED_NAMESPACES or name.startswith(RESERVED_PREFIXES):
        return (f"{name!r} is reserved for the cluster and its add-ons "
                f"({', '.join(sorted(RESERVED_NAMESPACES))}, {', '.join(p + '*' for p in RESERVED_PREFIXES)})")
    return None


def is_forbidden_service_account(name: object) -> bool:
    return not isinstance(name, str) or name in FORBIDDEN_SERVICE_ACCOUNTS or _ADMIN_LIKE.search(name) is not None


def check_context(ctx: RenderContext) -> None:
    """Raise ContextError unless ``ctx`` can be rendered safely."""
    if not isinstance(ctx, RenderContext):
        raise ContextError("ctx", f"expected RenderContext, got {type(ctx).__name__}")
    for name in ("project", "pipeline", "task", "run_id"):
        value = getattr(ctx, name)
        if name == "run_id" and isinstance(value, int) and not isinstance(value, bool):
            continue
        if not isinstance(value, str):
            raise ContextError(name, "must be a string" + (" or an integer" if name == "run_id" else ""))
        # These end up in env values and (sanitised) labels: keep them plain text.
        if len(value) > MAX_IDENTITY or "\x00" in value or not _encodable(value):
            raise ContextError(name, f"must be at most {MAX_IDENTITY} characters of valid text without NUL")
    if not ctx.project:
        raise ContextError("project", "is required")
    if not is_dns1123_label(ctx.namespace):
        raise ContextError("namespace", f"{ctx.namespace!r} is not a DNS-1123 label")
    reserved = reserved_namespace(ctx.namespace)
    if reserved:  # whatever wrote the project row, nothing renders into these
        raise ContextError("namespace", reserved)
    if not isinstance(ctx.attempt, int) or isinstance(ctx.attempt, bool) or ctx.attempt < 1:
        raise ContextError("attempt", "must be an integer >= 1")
    _check_service_account(ctx.service_account)
    if not isinstance(ctx.avoid_nodes, tuple) or len(ctx.avoid_nodes) > MAX_AVOIDED_NODES or not all(
            isinstance(node, str) and is_dns1123_subdomain(node) for node in ctx.avoid_nodes):
        raise ContextError("avoid_nodes", f"must be at most {MAX_AVOIDED_NODES} node names")
    if not isinstance(ctx.api_token_secret, str) or (ctx.api_token_secret
                                                     and not is_dns1123_subdomain(ctx.api_token_secret)):
        raise ContextError("api_token_secret", f"{ctx.api_token_secret!r} is not a valid Secret name")
    if not isinstance(ctx.output_dir, str) or (ctx.output_dir and not OUTPUT_DIR.fullmatch(ctx.output_dir)):
        raise ContextError("output_dir", f"{ctx.output_dir!r} is not <run>/<task>/<attempt>")
    if not isinstance(ctx.checkpoint_dir, str) or (ctx.checkpoint_dir
                                                   and not CHECKPOINT_DIR.fullmatch(ctx.checkpoint_dir)):
        raise ContextError("checkpoint_dir", f"{ctx.checkpoint_dir!r} is not <run>/<task>")
    if not isinstance(ctx.pull_secrets, Mapping) or not all(
            isinstance(image, str) and image and isinstance(secret, str) and is_dns1123_subdomain(secret)
            for image, secret in ctx.pull_secrets.items()):
        raise ContextError("pull_secrets", "must map image references to Secret names")
    if ctx.resource_group is not None:
        _check_resource_group(ctx.resource_group)


def _check_service_account(name: object) -> None:
    if not name:
        raise ContextError("service_account", "is required (the project's service account)")
    if not is_dns1123_subdomain(name):
        raise ContextError("service_account", f"{name!r} is not a valid service account name")
    if is_forbidden_service_account(name):
        raise ContextError("service_account", f"{name!r} is a shared/admin account; use the project's own")


def _check_resource_group(group: ResourceGroup) -> None:
    if not isinstance(group, ResourceGroup):
        raise ContextError("resource_group", f"expected ResourceGroup, got {type(group).__name__}")
    for key, value in dict(group.node_selector).items():
        if not is_qualified_key(key) or not is_label_value(value):
            raise ContextError("resource_group.node_selector", f"invalid node label {key!r}={value!r}")
    for index, toleration in enumerate(group.tolerations):
        where = f"resource_group.tolerations[{index}]"
        if not isinstance(toleration, Mapping) or not set(toleration) <= _TOLERATION_KEYS:
            raise ContextError(where, f"must be a mapping with keys among {sorted(_TOLERATION_KEYS)}")
        if toleration.get("operator", "Equal") not in ("Equal", "Exists"):
            raise ContextError(where, "operator must be Equal or Exists")
        if toleration.get("effect", "") not in ("", "NoSchedule", "PreferNoSchedule", "NoExecute"):
            raise ContextError(where, "effect must be NoSchedule, PreferNoSchedule or NoExecute")
    if group.gpu_type is not None and (not group.gpu_type or not is_label_value(group.gpu_type)):
        raise ContextError("resource_group.gpu_type", f"{group.gpu_type!r} is not a valid node label value")
    if not is_dns1123_subdomain(group.queue):
        raise ContextError("resource_group.queue", f"{group.queue!r} is not a valid volcano queue name")
    if not isinstance(group.gang_scheduling, bool):
        raise ContextError("resource_group.gang_scheduling", "must be a boolean")
    if group.volcano_queue is not None:
        check_queue(group.volcano_queue)
        if group.volcano_queue.name != group.queue:
            raise ContextError("resource_group.volcano_queue.name", f"must be the group's queue {group.queue!r}")
