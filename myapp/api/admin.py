"""Clusters, resource groups and quotas: admins manage them (FAB role permissions)."""
from __future__ import annotations

from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from flask import jsonify
from marshmallow import ValidationError, fields, post_load, validate, validates_schema

from ..extensions import db
from ..fields import DnsLabel, Int, Quantity, StrictSchema, StringMap, TolerationSchema
from ..models import Cluster, ClusterKind, Project, Quota, ResourceGroup, Task
from ..rendering.quantity import format_cpu, format_memory, parse_quantity
from .base import Ref, ResourceApi
from .errors import ApiError
from .responses import CAPACITY_FIELDS, USAGE
from .routing import route


class CapacityFields(StrictSchema):
    """cpu/memory as Kubernetes quantities in the API, canonical integers in SQL."""

    cpu = Quantity()
    memory = Quantity()
    gpus = Int(0, 100_000)

    @post_load
    def canonical(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        if "cpu" in data:
            data["cpu_millicores"] = int(parse_quantity(data.pop("cpu")) * 1000)
        if "memory" in data:
            data["memory_bytes"] = int(parse_quantity(data.pop("memory")))
        return data


def present_capacity(out: dict[str, Any], obj: Any) -> dict[str, Any]:
    out["cpu"] = format_cpu(Decimal(obj.cpu_millicores) / 1000)
    out["memory"] = format_memory(Decimal(obj.memory_bytes))
    return out


class ClusterSchema(StrictSchema):
    name = DnsLabel(required=True)
    kind = fields.String(required=True, validate=validate.OneOf([k.value for k in ClusterKind]))
    kube_context = fields.String(allow_none=True, validate=validate.Length(max=253))
    in_cluster = fields.Boolean()
    prometheus_url = fields.Url(allow_none=True, require_tld=False, schemes={"http", "https"})
    enabled = fields.Boolean()

    @post_load
    def to_enum(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        if "kind" in data:
            data["kind"] = ClusterKind(data["kind"])
        return data

    @validates_schema
    def kubernetes_needs_a_config(self, data: dict[str, Any], partial: Any = None, **_: Any) -> None:
        if data.get("kube_context") and data.get("in_cluster"):
            raise ValidationError("give kube_context or in_cluster, not both", "kube_context")


class ClusterApi(ResourceApi):
    resource_name = "cluster"
    class_permission_name = "Cluster"
    model = Cluster
    schema = ClusterSchema
    label = "cluster"
    scope = "admin"
    filters = ("name", "kind", "enabled")
    orders = ("id", "name")
    immutable = ("kind",)

    def before_delete(self, obj: Cluster) -> None:
        if db.session.scalar(sa.select(ResourceGroup.id).filter_by(cluster_id=obj.id).limit(1)):
            raise ApiError("cluster still has resource groups; delete them first", status=409)


class ResourceGroupSchema(CapacityFields):
    name = DnsLabel(required=True)
    cluster_id = Int(1, required=True)
    node_selector = StringMap()
    tolerations = fields.List(fields.Nested(TolerationSchema))
    gpu_type = fields.String(allow_none=True, validate=validate.Length(max=128))
    queue = DnsLabel(allow_none=True)
    gang_scheduling = fields.Boolean()


class ResourceGroupApi(ResourceApi):
    resource_name = "resource_group"
    class_permission_name = "ResourceGroup"
    model = ResourceGroup
    schema = ResourceGroupSchema
    label = "resource group"
    scope = "catalog"
    refs = {"cluster_id": Ref(Cluster, "cluster", same_project=False)}
    filters = ("name", "cluster_id", "gpu_type")
    orders = ("id", "name")
    output_fields = CAPACITY_FIELDS

    def present(self, obj: ResourceGroup) -> dict[str, Any]:
        return present_capacity(super().present(obj), obj)

    def before_delete(self, obj: ResourceGroup) -> None:
        if db.session.scalar(sa.select(Task.id).filter_by(resource_group_id=obj.id).limit(1)):
            raise ApiError("tasks still use this resource group", status=409)


class QuotaSchema(CapacityFields):
    project_id = Int(1, required=True)
    resource_group_id = Int(1, required=True)


class QuotaApi(ResourceApi):
    resource_name = "quota"
    class_permission_name = "Quota"
    model = Quota
    schema = QuotaSchema
    label = "quota"
    scope = "admin"
    refs = {
        "project_id": Ref(Project, "project", same_project=False),
        "resource_group_id": Ref(ResourceGroup, "resource group", same_project=False),
    }
    filters = ("project_id", "resource_group_id")
    immutable = ("project_id", "resource_group_id")
    output_fields = CAPACITY_FIELDS

    def present(self, obj: Quota) -> dict[str, Any]:
        return present_capacity(super().present(obj), obj)

    @route("/usage", summary="Capacity against use: per resource group and project, what running attempts "
                             "request (cpu millicores, memory bytes, gpus)", response=USAGE)
    def usage(self):
        from ..usage import usage_report

        return jsonify(items=usage_report())
