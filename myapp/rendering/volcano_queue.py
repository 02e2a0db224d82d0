"""A resource group as a Volcano Queue: plain data in, one validated manifest out.

`queue_spec` turns a group's capacity and its projects' quotas into a `VolcanoQueue`; `render_queue`
renders it (templates/volcano-queue.yaml.j2). Capability is the group's capacity; `deserved` is what
the quotas guarantee (capped at the capacity); `weight` is the guaranteed GPUs (CPU cores when the group
has no GPUs), so queues share a cluster in proportion to their guarantees; `reclaimable` says the group's
projects may borrow, and so what they hold beyond `deserved` may be taken back. Volcano's own `default`
queue is never rendered: a group that names it shares Volcano's default queue as it is.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from .contract import MANAGED_BY, MANAGED_BY_LABEL, RESOURCE_GROUP_LABEL
from .engine import render_object
from .errors import ContextError
from .names import is_dns1123_subdomain, is_label_value
from .quantity import GPU_RESOURCE, format_cpu, format_memory

VOLCANO_DEFAULT_QUEUE = "default"
MAX_WEIGHT = 65535  # the CRD's bound


@dataclass(frozen=True)
class Amount:
    """GPUs, CPU millicores, memory bytes."""

    gpus: int = 0
    cpu_millicores: int = 0
    memory_bytes: int = 0


@dataclass(frozen=True)
class QuotaShare:
    """One project's quota in the group, as the Queue sees it."""

    amount: Amount
    can_borrow: bool = True


@dataclass(frozen=True)
class VolcanoQueue:
    name: str
    group: str  # the resource group's name (a label on the Queue)
    capability: Amount
    deserved: Amount
    weight: int = 1
    reclaimable: bool = True


def queue_spec(name: str, group: str, capacity: Amount, quotas: Iterable[QuotaShare]) -> VolcanoQueue:
    quotas = list(quotas)
    total = Amount(sum(q.amount.gpus for q in quotas), sum(q.amount.cpu_millicores for q in quotas),
                   sum(q.amount.memory_bytes for q in quotas))
    deserved = Amount(min(total.gpus, capacity.gpus), min(total.cpu_millicores, capacity.cpu_millicores),
                      min(total.memory_bytes, capacity.memory_bytes))
    share = deserved.gpus if capacity.gpus else deserved.cpu_millicores // 1000
    return VolcanoQueue(name=name, group=group, capability=capacity, deserved=deserved,
                        weight=max(1, min(MAX_WEIGHT, share)),
                        reclaimable=not quotas or any(q.can_borrow for q in quotas))


def _resources(amount: Amount) -> dict[str, str]:
    """Kubernetes quantities of the amounts that are set: 0 means not bounded (a group whose capacity
    is not given is discovered, and a Queue without capability takes what the cluster has)."""
    out = {}
    if amount.cpu_millicores:
        out["cpu"] = format_cpu(Decimal(amount.cpu_millicores) / 1000)
    if amount.memory_bytes:
        out["memory"] = format_memory(Decimal(amount.memory_bytes))
    if amount.gpus:
        out[GPU_RESOURCE] = str(amount.gpus)
    return out


def check_queue(queue: VolcanoQueue) -> None:
    if not isinstance(queue, VolcanoQueue):
        raise ContextError("resource_group.volcano_queue", f"expected VolcanoQueue, got {type(queue).__name__}")
    if not is_dns1123_subdomain(queue.name) or queue.name == VOLCANO_DEFAULT_QUEUE:
        raise ContextError("resource_group.volcano_queue.name",
                           f"{queue.name!r} is not a queue name the platform may own (DNS-1123, not 'default')")
    if not is_label_value(queue.group):
        raise ContextError("resource_group.volcano_queue.group", f"{queue.group!r} is not a valid label value")
    for where, amount in (("capability", queue.capability), ("deserved", queue.deserved)):
        if min(amount.gpus, amount.cpu_millicores, amount.memory_bytes) < 0:
            raise ContextError(f"resource_group.volcano_queue.{where}", "must not be negative")
    if not 1 <= queue.weight <= MAX_WEIGHT:
        raise ContextError("resource_group.volcano_queue.weight", f"must be between 1 and {MAX_WEIGHT}")


def render_queue(queue: VolcanoQueue) -> dict[str, Any]:
    """The Queue manifest (cluster-scoped: no namespace). Validated by render() with the job's manifests,
    or by `validate_manifest` when rendered alone."""
    check_queue(queue)
    return render_object("volcano-queue.yaml.j2", {
        "name": queue.name, "labels": {MANAGED_BY_LABEL: MANAGED_BY, RESOURCE_GROUP_LABEL: queue.group},
        "weight": queue.weight, "reclaimable": queue.reclaimable,
        "capability": _resources(queue.capability), "deserved": _resources(queue.deserved),
    })
