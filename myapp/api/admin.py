"""Clusters, resource groups, quotas and limits: admins manage them (FAB role permissions)."""
from __future__ import annotations

from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from flask import current_app, jsonify
from marshmallow import ValidationError, fields, post_load, validate, validates_schema

from ..errors import FieldError
from ..extensions import db
from ..inputs.fields import DnsLabel, Int, Quantity, StrictSchema, StringMap, TolerationSchema
from ..models import (
    Cluster,
    ClusterKind,
    InferenceService,
    PipelineRun,
    PlatformSetting,
    Project,
    Quota,
    ResourceGroup,
    RunState,
    ServingEngine,
    Task,
    utcnow,
)
from ..pipelines import scheduling
from ..rendering.quantity import format_cpu, format_memory, parse_quantity
from ..scheduler.policy import POLICIES
from .base import Ref, ResourceApi
from .errors import ApiError
from .responses import (
    BOOLEAN,
    CAPACITY_FIELDS,
    INTEGER,
    LIMITS,
    PROJECT_LIMIT,
    STRING,
    USAGE,
    array,
    component,
    nullable,
    obj,
)
from .routing import json_body, route
from .scope import current_user


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
    # What its inference services render to (docs/serving.md); kserve needs KServe installed there.
    serving_engine = fields.String(validate=validate.OneOf([e.value for e in ServingEngine]))

    @post_load
    def to_enum(self, data: dict[str, Any], **_: Any) -> dict[str, Any]:
        if "kind" in data:
            data["kind"] = ClusterKind(data["kind"])
        if "serving_engine" in data:
            data["serving_engine"] = ServingEngine(data["serving_engine"])
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

    def before_save(self, obj: Cluster, data: dict[str, Any], creating: bool) -> None:
        if (creating and "serving_engine" not in data and obj.kind == ClusterKind.KUBERNETES
                and current_app.config.get("MYAPP_SERVING_KSERVE")):
            obj.serving_engine = ServingEngine.KSERVE  # the platform's default for new clusters
        if obj.serving_engine == ServingEngine.KSERVE and obj.kind != ClusterKind.KUBERNETES:
            raise FieldError("serving_engine", "kserve needs a kubernetes cluster")
        if not creating and "serving_engine" in data:
            _reconcile_services(obj.id)  # re-rendered by their next pass (the old objects go once the new are ready)
        if not creating and data.get("enabled") is True:
            scheduling.wake_unfinished()  # what waited for the cluster goes on at the next tick


class GroupNodeSchema(StrictSchema):
    """One node of a resource group, in canonical units (as stored and answered)."""

    name = fields.String(required=True, validate=validate.Length(min=1, max=253))
    gpus = Int(0, 100_000)
    cpu_millicores = Int(0, 2**40)
    memory_bytes = Int(0, 2**60)


class ResourceGroupSchema(CapacityFields):
    name = DnsLabel(required=True)
    cluster_id = Int(1, required=True)
    node_selector = StringMap()
    tolerations = fields.List(fields.Nested(TolerationSchema))
    gpu_type = fields.String(allow_none=True, validate=validate.Length(max=128))
    queue = DnsLabel(allow_none=True)
    gang_scheduling = fields.Boolean()
    # Admission (myapp/admission/gate.py): the nodes the capacity is on (empty: one node of the totals), the
    # policy ordering the group's queue, and how often one task may be preempted.
    nodes = fields.List(fields.Nested(GroupNodeSchema), validate=validate.Length(max=10_000))
    policy = fields.String(validate=validate.OneOf(POLICIES))
    max_preemptions = Int(0, 100)
    # Capacity discovered on Kubernetes: the cluster's Nodes matching node_selector (backends/kubernetes/capacity.py).
    discover_nodes = fields.Boolean()

    @validates_schema
    def node_names_differ(self, data: dict[str, Any], partial: Any = None, **_: Any) -> None:
        names = [n["name"] for n in data.get("nodes") or []]
        if len(set(names)) != len(names):
            raise ValidationError("node names must differ", "nodes")


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

    def before_save(self, obj: ResourceGroup, data: dict[str, Any], creating: bool) -> None:
        cluster = db.session.get(Cluster, obj.cluster_id)
        if obj.discover_nodes and cluster is not None and cluster.kind != ClusterKind.KUBERNETES:
            raise FieldError("discover_nodes", "nodes are discovered on a kubernetes cluster only")
        if obj.nodes:  # the totals are the nodes' sums: one truth for admission and the usage report
            obj.gpus = sum(n.get("gpus", 0) for n in obj.nodes)
            obj.cpu_millicores = sum(n.get("cpu_millicores", 0) for n in obj.nodes)
            obj.memory_bytes = sum(n.get("memory_bytes", 0) for n in obj.nodes)
        if not creating:
            scheduling.wake_unfinished()  # more room, another policy: what waits is decided again soon

    def before_delete(self, obj: ResourceGroup) -> None:
        if db.session.scalar(sa.select(Task.id).filter_by(resource_group_id=obj.id).limit(1)):
            raise ApiError("tasks still use this resource group", status=409)
        if db.session.scalar(sa.select(InferenceService.id).filter_by(resource_group_id=obj.id).limit(1)):
            raise ApiError("inference services still run on this resource group", status=409)


def _reconcile_services(cluster_id: int) -> None:
    """The cluster's serving engine changed: its services are looked at now (beat's tick requests them)."""
    groups = sa.select(ResourceGroup.id).where(ResourceGroup.cluster_id == cluster_id)
    db.session.execute(sa.update(InferenceService).where(InferenceService.resource_group_id.in_(groups))
                       .values(next_check_at=None).execution_options(synchronize_session=False))


class QuotaSchema(CapacityFields):
    """The project's guaranteed share of the group; beyond it it may borrow what others leave idle
    (can_borrow), and others may borrow its idle share until it needs it back (can_lend)."""

    project_id = Int(1, required=True)
    resource_group_id = Int(1, required=True)
    can_borrow = fields.Boolean()
    can_lend = fields.Boolean()


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
        from ..admission.usage import usage_report

        return jsonify(items=usage_report())


_AMOUNT = {"gpus": INTEGER, "cpu_millicores": INTEGER, "memory_bytes": INTEGER}
_ATTEMPT = {"task_run_id": INTEGER, "run_id": INTEGER, "project": STRING, "pipeline": STRING, "task": STRING,
            **_AMOUNT}
GROUP_STATUS = component("ResourceGroupStatus", obj({
    "resource_group": obj({"id": INTEGER, "name": STRING, "cluster": STRING, "policy": STRING}),
    "discovery": obj({"enabled": BOOLEAN, "at": {**nullable(STRING), "format": "date-time"},
                      "error": nullable(STRING), "nodes": array(component("DiscoveredNode", obj({
                          "name": STRING, **_AMOUNT, "schedulable": BOOLEAN,
                          "why": {**nullable(STRING),
                                  "description": "null: schedulable; else cordoned, not ready or tainted ..."}})))}),
    "capacity": obj({**_AMOUNT, "nodes": array(obj({"name": STRING, **_AMOUNT}))}),
    "used": obj(_AMOUNT),
    "projects": array(component("GroupProjectStatus", obj({
        "project_id": INTEGER, "project": STRING, "quota": {**nullable(obj(_AMOUNT)), "description": "null: none"},
        "used": obj(_AMOUNT), "borrowed": obj(_AMOUNT), "waiting": INTEGER}))),
    "running": array(component("GroupRunningAttempt", obj({
        **_ATTEMPT, "borrowing": BOOLEAN, "started_at": {**STRING, "format": "date-time"}, "preemptions": INTEGER,
        "nodes": {"type": "object", "additionalProperties": INTEGER}}))),
    "queue": array(component("GroupWaitingAttempt", obj({
        **_ATTEMPT, "position": INTEGER, "reason": STRING, "waiting_since": {**STRING, "format": "date-time"}}))),
}))


class ResourceGroupStatusApi(ResourceApi):
    """What admission sees in a resource group (myapp/admission/gate.py), for admins: a permission of its own,
    which the User role does not have."""

    resource_name = "resource_group"
    class_permission_name = "ResourceGroupStatus"
    model = ResourceGroup
    label = "resource group"
    scope = "admin"
    include_route_methods = {"status"}

    @route("/<int:pk>/status", summary="Capacity, use, each project's quota, use and borrowing, the running "
                                       "attempts and the queue with reasons and positions", response=GROUP_STATUS)
    def status(self, pk: int):
        from ..admission.report import status

        group = db.session.get(ResourceGroup, pk)
        if group is None:
            raise ApiError(f"resource group {pk} not found", status=404)
        return jsonify(status(group, utcnow()))


class PlatformLimitsSchema(StrictSchema):
    """null: back to the config's default."""

    max_backfill_days = Int(*scheduling.LIMIT_RANGES["max_backfill_days"], allow_none=True)
    min_schedule_interval = Int(*scheduling.LIMIT_RANGES["min_schedule_interval"], allow_none=True)


class ProjectLimitSchema(StrictSchema):
    max_running_runs = Int(1, 10_000, required=True, allow_none=True)


class LimitApi(ResourceApi):
    """Platform-wide limits (backfill length, minimum schedule interval) and each project's limit of runs
    running at once; what they do is in myapp/pipelines/scheduling.py."""

    resource_name = "limits"
    class_permission_name = "Limits"
    model = PlatformSetting
    label = "limit"
    scope = "admin"
    include_route_methods = {"get_limits", "set_limits", "set_project_limit"}

    @route("/", summary="The platform's limits (value, config default) and each project's limit of running runs",
           response=LIMITS)
    def get_limits(self):
        return jsonify(_limits())

    @route("/", methods=("PUT",), permission="write", body=PlatformLimitsSchema,
           summary="Set platform limits; null goes back to the config default", response=LIMITS)
    def set_limits(self):
        values = PlatformLimitsSchema().load(json_body())
        for name, value in values.items():
            scheduling.set_limit(name, value, current_user().id)
        return jsonify(_limits())

    @route("/project/<int:pk>", methods=("PUT",), permission="write", body=ProjectLimitSchema,
           summary="Set a project's limit of runs running at once (null: none); runs beyond it wait queued",
           response=PROJECT_LIMIT)
    def set_project_limit(self, pk: int):
        project = db.session.get(Project, pk)
        if project is None:
            raise ApiError(f"project {pk} not found", status=404)
        project.max_running_runs = ProjectLimitSchema().load(json_body())["max_running_runs"]
        scheduling.wake_unfinished(project.id)  # a raised limit lets waiting runs start at the next tick
        return jsonify(_project_limits(project.id)[0])


def _project_limits(project_id: int | None = None) -> list[dict[str, Any]]:
    counts = sa.select(PipelineRun.project_id, PipelineRun.state, sa.func.count()).where(
        PipelineRun.state.in_([RunState.QUEUED, RunState.RUNNING])).group_by(PipelineRun.project_id, PipelineRun.state)
    projects = sa.select(Project.id, Project.name, Project.max_running_runs).order_by(Project.name)
    if project_id is not None:
        counts, projects = counts.where(PipelineRun.project_id == project_id), projects.where(Project.id == project_id)
    runs = {(pid, state): n for pid, state, n in db.session.execute(counts)}
    return [{"id": pid, "name": name, "max_running_runs": most, "running": runs.get((pid, RunState.RUNNING), 0),
             "queued": runs.get((pid, RunState.QUEUED), 0)} for pid, name, most in db.session.execute(projects)]


def _limits() -> dict[str, Any]:
    return {"platform": scheduling.limits(), "projects": _project_limits()}

