"""Inference services: the services that serve a project's model versions (the versions themselves are
api/registry.py's, the stable URL ``/serving/<project>/<service>/...`` api/serving_proxy.py's).

The web stores intent (the split, the shadow, replicas, deletion) and enqueues
``myapp.reconcile_service``; the worker's serving controller (myapp/serving/controller.py) makes it
so. Bad input answers 400/404 naming the field and changes nothing, so the traffic stays as it was.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import sqlalchemy as sa
from flask import current_app, jsonify
from marshmallow import ValidationError, fields, validate, validates_schema

from ..errors import FieldError
from ..extensions import db
from ..inputs.fields import DnsLabel, Int, ResourcesSchema, StrictSchema
from ..models import (
    InferenceService,
    ModelVersion,
    Project,
    ProjectRole,
    ResourceGroup,
    ServiceState,
)
from ..pipelines import observation
from ..serving import placement, prometheus, request_logs, storage
from ..serving import traffic as split
from ..serving.router_client import RouterUnavailable, control, router_token
from . import pipelines
from .base import Ref, ResourceApi, query_args
from .errors import ApiError
from .responses import INTEGER, MESSAGE, NUMBER, STRING, array, component, nullable, obj
from .routing import json_body, on_commit, route


def release_services(items: list[dict[str, Any]]) -> None:
    """After a project's deletion: a worker stops each service's servers (myapp/serving/release.py)."""
    for item in items:
        pipelines.enqueue("myapp.serving_release", item)


# ---- inference services -----------------------------------------------------------------------------

class InferenceServiceSchema(StrictSchema):
    project_id = Int(1, required=True)
    name = DnsLabel(required=True)
    model_version_id = Int(1, required=True)
    resource_group_id = Int(1, allow_none=True)  # its cluster runs it; none: the platform's default backend
    min_replicas = Int(0, 100)
    max_replicas = Int(1, 100)
    resources = fields.Nested(ResourcesSchema)
    traffic = fields.Dict(keys=fields.String(), values=fields.Raw())
    shadow_version_id = Int(1, allow_none=True)
    mirror_percent = Int(0, 100)
    autoscale_metric = fields.String(validate=validate.OneOf(["cpu", "gpu", "rps"]))
    autoscale_target = Int(1, 100_000)

    @validates_schema
    def replicas_in_order(self, data: dict[str, Any], **_: Any) -> None:
        if data.get("min_replicas", 1) > data.get("max_replicas", max(1, data.get("min_replicas", 1))):
            raise ValidationError("must be at least min_replicas", "max_replicas")


class CanarySchema(StrictSchema):
    version_id = Int(1, required=True)
    weight = Int(0, 100, required=True)


class PromoteSchema(StrictSchema):
    version_id = Int(1, allow_none=True)


class EmptySchema(StrictSchema):
    pass


SERVICE_OUT = {"endpoint": STRING, "model_name": nullable(STRING)}
VERSION_FIGURES = obj({"requests": INTEGER, "errors": INTEGER, "rps": NUMBER, "p50": nullable(NUMBER),
                       "p95": nullable(NUMBER), "p99": nullable(NUMBER)})
POINT = obj({"t": INTEGER, "n": INTEGER, "errors": INTEGER, "p50": nullable(NUMBER), "p95": nullable(NUMBER),
             "p99": nullable(NUMBER)})
SERVICE_METRICS = component("ServiceMetrics", obj({
    "window": INTEGER, "versions": {"type": "object", "additionalProperties": VERSION_FIGURES},
    "series": {"type": "object", "additionalProperties": array(POINT)}}))
SERVICE_LOGS = component("ServiceLogs", obj({"items": array(obj({
    "time": NUMBER, "version": STRING, "status": INTEGER, "ms": NUMBER, "request": STRING, "response": STRING}))}))


class InferenceServiceApi(ResourceApi):
    resource_name = "inference_service"
    class_permission_name = "InferenceService"
    model = InferenceService
    schema = InferenceServiceSchema
    label = "inference service"
    parent = ("project_id", Project)
    refs = {"model_version_id": Ref(ModelVersion, "model version"),
            "shadow_version_id": Ref(ModelVersion, "model version"),
            "resource_group_id": Ref(ResourceGroup, "resource group", same_project=False)}
    filters = ("project_id", "name", "state")
    orders = ("id", "name")
    immutable = ("name", "model_version_id", "resource_group_id")
    output_fields = SERVICE_OUT

    def present(self, obj: Any) -> dict[str, Any]:
        out = super().present(obj)
        project = db.session.get(Project, obj.project_id)
        out["endpoint"] = f"/serving/{project.name}/{obj.name}/" if project else ""
        out["model_name"] = self._model(obj) or None
        return out

    # ---- intent ------------------------------------------------------------------------------
    def _versions(self, ids: set[int]) -> dict[int, split.VersionInfo | None]:
        rows = db.session.execute(sa.select(ModelVersion.id, ModelVersion.project_id, ModelVersion.name,
                                            ModelVersion.version).where(ModelVersion.id.in_(ids))).all()
        found = {r.id: split.VersionInfo(r.id, r.project_id, r.name, r.version) for r in rows}
        return {i: found.get(i) for i in ids}

    def _model(self, obj: InferenceService) -> str:
        return db.session.scalar(sa.select(ModelVersion.name).where(ModelVersion.id == obj.model_version_id)) or ""

    def before_save(self, obj: InferenceService, data: dict, creating: bool) -> None:
        # Read before any query here autoflushes the change (and with it the attribute's history).
        metric_before = next(iter(sa.inspect(obj).attrs.autoscale_metric.history.deleted), None)
        model = self._model(obj)
        if "traffic" in data or creating:
            given = data.get("traffic") or {str(obj.model_version_id): 100}
            ids = {int(k) for k in given if str(k).isdigit()}
            obj.traffic = split.check_split(given, self._versions(ids), obj.project_id, model)
            if str(obj.model_version_id) not in obj.traffic:
                raise FieldError("traffic", f"must include the stable version {obj.model_version_id} "
                                            "(promote a canary to replace it)")
        if obj.shadow_version_id is not None and "shadow_version_id" in data:
            info = self._versions({obj.shadow_version_id})[obj.shadow_version_id]
            split.check_version("shadow_version_id", obj.shadow_version_id, info, obj.project_id, model)
        self._check_placement(obj, metric_before)
        self._changed(obj)

    def _check_placement(self, obj: InferenceService, metric_before: str | None = None) -> None:
        """What the service's cluster cannot do, refused before anything is stored (400 naming the field)."""
        cluster = placement.service_cluster(obj)
        wanted = split.wanted_versions(obj.traffic, obj.shadow_version_id) | {obj.model_version_id}
        if placement.runs_locally(cluster):
            for vid, uri in db.session.execute(sa.select(ModelVersion.id, ModelVersion.uri)
                                               .where(ModelVersion.id.in_(wanted))).all():
                if storage.is_remote(uri):
                    raise FieldError("uri", f"model version {vid} is at {storage.scheme(uri)}://, which only a "
                                            "Kubernetes cluster fetches; this service runs locally (give it a "
                                            "resource_group_id on a Kubernetes cluster)")
            return
        if placement.engine(cluster) != "kserve":
            return
        if obj.autoscale_metric == "gpu" and not (cluster and cluster.prometheus_url):
            raise FieldError("autoscale_metric", "KServe scales on GPU utilisation through KEDA from the cluster's "
                                                 "Prometheus, and this cluster has no prometheus_url (cpu or rps)")
        if metric_before and (metric_before == "gpu") != (obj.autoscale_metric == "gpu"):
            # KEDA (an annotation, autoScaling) and KServe's own autoscaler (scaleMetric) do not replace each
            # other in place: a merge patch keeps the other's keys.
            raise FieldError("autoscale_metric", f"KServe cannot switch this service between {metric_before} and "
                                                 f"{obj.autoscale_metric} in place (KEDA against its own "
                                                 "autoscaler): deploy a new service")
        if sum(1 for w in obj.traffic.values() if w > 0) > 2:
            raise FieldError("traffic", "KServe splits between the stable version and one canary only")

    def _changed(self, obj: InferenceService) -> None:
        """A new desired state: the worker looks at it now."""
        if obj.deleting:
            raise ApiError(f"inference service {obj.id} is being deleted", status=409)
        obj.generation = (obj.generation or 0) + 1
        obj.next_check_at = None
        # Pending until a worker's pass has made it so (the traffic flows as before meanwhile).
        obj.state = ServiceState.PENDING
        obj.reason = "waiting for a worker to apply the change"
        db.session.flush()
        service_id = obj.id
        on_commit(lambda: pipelines.enqueue("myapp.reconcile_service", service_id))

    def _set_traffic(self, obj: InferenceService, move: Any) -> Any:
        move(obj)
        obj.traffic = split.check_split(obj.traffic, self._versions({int(k) for k in obj.traffic}), obj.project_id,
                                        self._model(obj))
        self._check_placement(obj)
        self._changed(obj)
        return jsonify(self.present(obj))

    @route("/<int:pk>/canary", methods=("POST",), permission="write", body=CanarySchema, response="model",
           summary="Roll a version out as a canary: weight % of the traffic, the rest to the stable version")
    def canary(self, pk: int):
        obj = self.load(pk, ProjectRole.DEVELOPER)  # first: another project's service is 404 whatever the body
        data = CanarySchema().load(json_body())

        def move(obj: InferenceService) -> None:
            info = self._versions({data["version_id"]})[data["version_id"]]
            split.check_version("version_id", data["version_id"], info, obj.project_id, self._model(obj))
            obj.traffic = split.canary(obj.model_version_id, data["version_id"], data["weight"])
        return self._set_traffic(obj, move)

    @route("/<int:pk>/promote", methods=("POST",), permission="write", body=PromoteSchema, response="model",
           summary="Make the canary the stable version with all the traffic")
    def promote(self, pk: int):
        obj = self.load(pk, ProjectRole.DEVELOPER)
        data = PromoteSchema().load(json_body())

        def move(obj: InferenceService) -> None:
            obj.model_version_id, obj.traffic = split.promote(obj.traffic, obj.model_version_id, data.get("version_id"))
        return self._set_traffic(obj, move)

    @route("/<int:pk>/rollback", methods=("POST",), permission="write", body=EmptySchema, response="model",
           summary="Send all the traffic back to the stable version (the canary's server stops)")
    def rollback(self, pk: int):
        obj = self.load(pk, ProjectRole.DEVELOPER)
        EmptySchema().load(json_body())

        def move(obj: InferenceService) -> None:
            obj.traffic = split.rollback(obj.traffic, obj.model_version_id)
        return self._set_traffic(obj, move)

    @route("/<int:pk>", methods=("DELETE",), permission="write", response=MESSAGE,
           summary="Delete: the worker stops every server of the service, then removes it")
    def delete(self, pk: int):
        obj = self.load(pk, self.write_role)
        if not obj.deleting:
            self._changed(obj)
            obj.deleting = True
        return jsonify(message=f"inference service {pk} is being deleted")

    # ---- what the router saw ---------------------------------------------------------------------
    def _router(self, pk: int) -> tuple[str, str] | None:
        """The local router's URL and token; None while it runs nowhere (not yet, or on Kubernetes,
        where Prometheus has the figures): the answers are then empty, as for a service nobody called."""
        obj = self.load(pk)
        if not obj.url or not obj.url.startswith("http://127.0.0.1:"):
            return None
        return obj.url, router_token(current_app.config["SECRET_KEY"], obj.id)

    @route("/<int:pk>/metrics", summary="Requests/s, latency p50/p95/p99 and errors per version, per second",
           query={"window": "seconds back, 10..900 (default 300)"}, response=SERVICE_METRICS)
    def metrics(self, pk: int):
        args = query_args({"window"})
        window = args.get("window", "300")
        if not window.isdigit() or not 10 <= int(window) <= 900:
            raise FieldError("window", "must be a whole number of seconds from 10 to 900")
        router = self._router(pk)
        try:
            if router is not None:
                return jsonify(control(*router, "GET", f"/_router/stats?window={int(window)}"))
        except RouterUnavailable:
            pass  # restarting: its figures are gone with it
        obj = self.load(pk)
        cluster = placement.service_cluster(obj)  # its cluster's Prometheus, else the platform's
        base_url = (cluster.prometheus_url if cluster else None) or current_app.config.get("MYAPP_PROMETHEUS_URL")
        if base_url and obj.url and not obj.url.startswith("http://127.0.0.1:"):  # on Kubernetes: Istio's counts
            project = db.session.get(Project, obj.project_id)
            numbers = dict(db.session.execute(sa.select(ModelVersion.id, ModelVersion.version).where(
                ModelVersion.id.in_({int(k) for k in obj.traffic} | {obj.shadow_version_id or 0}))).all())
            shadow = obj.shadow_version_id if str(obj.shadow_version_id) not in obj.traffic else None
            shadows = frozenset({f"v{numbers[shadow]}"} if shadow in numbers else set())
            return jsonify(prometheus.figures(base_url, project.namespace, obj.name, int(window), shadows))
        return jsonify(window=int(window), versions={}, series={})


    @route("/<int:pk>/logs", summary="Sampled request logs (every error, one in ten of the rest), newest first",
           query={"q": "text the entry contains", "limit": "at most this many (1..500, default 100)"},
           response=SERVICE_LOGS)
    def request_logs(self, pk: int):
        args = query_args({"q", "limit"})
        limit = args.get("limit", "100")
        if not limit.isdigit() or not 1 <= int(limit) <= 500:
            raise FieldError("limit", "must be a whole number from 1 to 500")
        router = self._router(pk)
        try:
            if router is not None:
                query = urlencode({"q": args.get("q", ""), "limit": limit})
                return jsonify(control(*router, "GET", f"/_router/logs?{query}"))
        except RouterUnavailable:
            pass
        obj = self.load(pk)
        # On Kubernetes the model servers write the samples to their own logs: the end of each one's.
        # Local servers' refs are left out: there the router keeps them (restarting: gone with it).
        refs = [ref for ref in request_logs.server_refs(obj) if ref["backend"] != "local"]
        if not refs:
            return jsonify(items=[])
        lines = observation.read_recent_lines(obj.resource_group_id, refs, request_logs.TAIL_LINES,
                                              request_logs.TAIL_BYTES)
        return jsonify(items=request_logs.search((line.line for line in lines), args.get("q", ""), int(limit),
                                                 self._shadow_labels(obj)))

    @staticmethod
    def _shadow_labels(obj: InferenceService) -> frozenset[str]:
        """The label ("vN") of a shadow version that takes no share of the split: its answers are copies."""
        shadow = obj.shadow_version_id if str(obj.shadow_version_id) not in obj.traffic else None
        number = db.session.get(ModelVersion, shadow).version if shadow else None
        return frozenset({f"v{number}"} if number is not None else set())
