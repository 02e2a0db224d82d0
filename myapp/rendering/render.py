"""render(): job template + arguments + context -> the exact manifests to submit."""
from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from ..outputs import checkpoints
from ..outputs import declarations as outputs
from .args import validate_args
from .context import RenderContext, check_context
from .contract import PRIORITY_CLASS
from .engine import render_object
from .errors import CatalogError
from .kinds import KINDS, Build
from .names import k8s_name
from .pod import (
    GPU_RESOURCE,
    PodTemplate,
    apply_object_policy,
    apply_pod_policy,
    common_labels,
    pod_templates,
)
from .quantity import format_cpu, format_memory, parse_quantity, resolve_resources
from .validate import validate_manifests
from .volcano_queue import render_queue

_GANG_RESOURCES = ("cpu", "memory", GPU_RESOURCE)


def render(template: Mapping[str, Any], args: Mapping[str, Any] | None, ctx: RenderContext,
           resources: Mapping[str, Any] | None = None, *, validate: bool = True) -> list[dict[str, Any]]:
    """Render a catalog template (a dict from ``load_catalog``) for one task attempt.

    Pure and deterministic. Raises ArgumentError for bad args/resources, ContextError for a
    bad context and (unless ``validate=False``) ManifestError if the result would be refused.
    """
    check_context(ctx)
    kind = KINDS.get(str(template.get("kind")))
    if kind is None:
        raise CatalogError(str(template.get("name")), "kind", f"unknown kind {template.get('kind')!r}")
    values = validate_args(template["args_schema"], args)
    res = resolve_resources(template["default_resources"], template["max_resources"], resources)
    name = k8s_name(ctx.task or template["name"], ctx.run_id, ctx.attempt)
    build = Build(template=template, args=values, ctx=ctx, resources=res, name=name)
    objects = kind.build(build)

    labels = common_labels(ctx, template["name"])
    keeps = bool(ctx.checkpoint_dir) and kind.batch and checkpoints.enabled(template, values)
    grace = (template.get("args_schema") or {}).get(checkpoints.GRACE_KEY)
    groups = []
    for obj in objects:
        apply_object_policy(obj, ctx, labels)
        pods = list(pod_templates(obj))
        total = sum(pod.replicas for pod in pods)
        podgroup = bool(pods) and kind.batch and kind.gang == "podgroup" and build.gang
        for pod in pods:
            apply_pod_policy(obj, pod, ctx, labels, template["env"], batch=kind.batch,
                             colocate=kind.batch and total > 1, podgroup=podgroup, template_name=template["name"])
            if ctx.output_dir and kind.batch:
                outputs.mount(pod.template["spec"], ctx.output_dir)
            if keeps:
                checkpoints.mount(pod.template["spec"], ctx.checkpoint_dir)
            if grace is not None and kind.batch:  # the template's SIGTERM -> SIGKILL time (a checkpoint's last save)
                pod.template["spec"]["terminationGracePeriodSeconds"] = grace
        if podgroup:
            groups.append(_pod_group(obj, pods, total, build))
    for group in groups:
        apply_object_policy(group, ctx, labels)
    manifests = groups + objects  # PodGroups first: they must exist before the pods
    if ctx.output_dir and kind.batch:
        # The project's outputs volume, made by the first attempt that mounts it (pods wait for their
        # claim); last, so that the workload stays where every reader of manifests looks for it.
        claim = outputs.claim_manifest(ctx.namespace)
        apply_object_policy(claim, ctx, labels)
        manifests.append(claim)
    if keeps:  # the project's checkpoints volume, adopted if it exists, like the outputs volume
        claim = checkpoints.claim_manifest(ctx.namespace)
        apply_object_policy(claim, ctx, labels)
        manifests.append(claim)
    queue = ctx.resource_group.volcano_queue if ctx.resource_group else None
    if groups and queue is not None:
        manifests.insert(0, render_queue(queue))  # the group's Queue before the PodGroups in it
    if validate:
        validate_manifests(manifests)
    return manifests


def _pod_requests(pod_spec: Mapping[str, Any]) -> dict[str, Decimal]:
    """Effective requests of one pod, as the scheduler counts them: the larger of the sum over
    its containers and the largest single init container (init containers run one at a time)."""
    def requests(container: Mapping[str, Any]) -> dict[str, Decimal]:
        given = container.get("resources", {}).get("requests", {})
        return {key: parse_quantity(given[key]) for key in _GANG_RESOURCES if key in given}

    total = {key: Decimal(0) for key in _GANG_RESOURCES}
    for container in pod_spec.get("containers") or []:
        for key, amount in requests(container).items():
            total[key] += amount
    for container in pod_spec.get("initContainers") or []:
        for key, amount in requests(container).items():
            total[key] = max(total[key], amount)
    return total


def _pod_group(obj: Mapping[str, Any], pods: list[PodTemplate], total: int, build: Build) -> dict[str, Any]:
    """Volcano PodGroup named like the workload; minResources = what all its pods request."""
    sums = {key: Decimal(0) for key in _GANG_RESOURCES}
    for pod in pods:
        for key, amount in _pod_requests(pod.template["spec"]).items():
            sums[key] += amount * pod.replicas
    min_resources = {"cpu": format_cpu(sums["cpu"]), "memory": format_memory(sums["memory"])}
    if sums[GPU_RESOURCE]:
        min_resources[GPU_RESOURCE] = str(int(sums[GPU_RESOURCE]))
    return render_object("podgroup.yaml.j2", {
        "name": obj["metadata"]["name"], "min_member": total, "queue": build.queue,
        "priority_class": PRIORITY_CLASS, "min_resources": min_resources,
    })
