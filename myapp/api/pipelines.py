"""Pipelines, their tasks and edges, and the runs they produce."""
from __future__ import annotations

import uuid
from typing import Any

import sqlalchemy as sa
from croniter import croniter
from dataclasses import asdict

from flask import current_app, jsonify, request
from marshmallow import ValidationError, fields, validate

from ..extensions import db
from ..models.base import utcnow
from ..pipelines.dag import find_cycle
from ..rendering import ArgumentError, RenderError
from ..models import (
    ConcurrencyPolicy, Edge, JobTemplate, Pipeline, PipelineRun, Project, ProjectRole, ResourceGroup, RunTrigger,
    Task, TaskRun, TriggerRule,
)
from .base import Ref, ResourceApi, bounded_int, column_names, query_args, to_json_value
from .errors import ApiError, FieldError
from .fields import DnsLabel, Int, ResourcesSchema, StrictSchema
from .routing import json_body, on_commit, route
from .scope import check_project, current_user


def enqueue(task_name: str, *args) -> None:
    """Hand work to the Celery workers (the web process never runs jobs itself)."""
    current_app.extensions["celery"].send_task(task_name, args=list(args))


def enum_field(enum_cls: type, **kwargs: Any) -> fields.Enum:
    return fields.Enum(enum_cls, by_value=True, **kwargs)


def cron_expression(value: str) -> None:
    if not croniter.is_valid(value):
        raise ValidationError(f"'{value}' is not a cron expression (e.g. '0 2 * * *')")


class PipelineSchema(StrictSchema):
    project_id = Int(1, required=True)
    name = DnsLabel(required=True)
    description = fields.String(validate=validate.Length(max=10_000))
    parameters = fields.Dict(keys=fields.String(validate=validate.Regexp(r"^[A-Za-z_][A-Za-z0-9_]*$")))
    schedule = fields.String(allow_none=True, validate=[validate.Length(max=128), cron_expression])
    paused = fields.Boolean()
    max_active_runs = Int(1, 100)
    concurrency_policy = enum_field(ConcurrencyPolicy)
    depends_on_past = fields.Boolean()
    webhook_url = fields.Url(allow_none=True, require_tld=False, schemes={"http", "https"})


class PipelineYamlSchema(StrictSchema):
    yaml = fields.String(required=True, validate=validate.Length(1, 1_000_000))


class CloneSchema(StrictSchema):
    name = DnsLabel(required=True)


class BackfillSchema(StrictSchema):
    start = fields.Date(required=True)
    end = fields.Date(required=True)


class TaskFields(StrictSchema):
    name = DnsLabel(required=True)
    template_id = Int(1, required=True)
    args = fields.Dict(keys=fields.String())
    resources = fields.Nested(ResourcesSchema)
    resource_group_id = Int(1, allow_none=True)
    retries = Int(0, 100)
    retry_delay = Int(0, 86_400)
    timeout = Int(1, 30 * 86_400, allow_none=True)
    trigger_rule = enum_field(TriggerRule)
    position = fields.Dict(keys=fields.String(validate=validate.OneOf(["x", "y"])), values=fields.Float())


class TaskSchema(TaskFields):
    pipeline_id = Int(1, required=True)


class GraphTaskSchema(TaskFields):
    key = fields.String(required=True, validate=validate.Length(1, 128))  # the client's id for new tasks
    id = Int(1)


class GraphEdgeSchema(StrictSchema):
    upstream = fields.String(required=True)
    downstream = fields.String(required=True)


class GraphSchema(StrictSchema):
    tasks = fields.List(fields.Nested(GraphTaskSchema), required=True, validate=validate.Length(max=5000))
    edges = fields.List(fields.Nested(GraphEdgeSchema), load_default=list, validate=validate.Length(max=20000))


def present_row(obj: Any) -> dict[str, Any]:
    return {c: to_json_value(getattr(obj, c)) for c in column_names(type(obj))}


class PipelineApi(ResourceApi):
    resource_name = "pipeline"
    class_permission_name = "Pipeline"
    model = Pipeline
    schema = PipelineSchema
    label = "pipeline"
    parent = ("project_id", Project)
    filters = ("project_id", "name", "paused")
    orders = ("id", "name", "created_at", "updated_at")

    def before_save(self, obj: Pipeline, data: dict, creating: bool) -> None:
        if creating:
            obj.created_by_id = current_user().id

    @route("/import", methods=("POST",), permission="write", body=PipelineYamlSchema,
           summary="Create or update a pipeline from YAML (tasks, depends_on, schedule)")
    def import_yaml(self):
        from ..pipelines import spec as pipeline_spec

        text = PipelineYamlSchema().load(json_body())["yaml"]
        parsed = pipeline_spec.parse(text)
        project = db.session.scalar(sa.select(Project).filter_by(name=parsed["project"]))
        missing = FieldError("project", f"no project named {parsed['project']!r}", status=404)
        if project is None:
            raise missing
        check_project(project.id, ProjectRole.DEVELOPER, missing)
        pipeline = pipeline_spec.apply(parsed, project, current_user().id)
        return jsonify(self.present(pipeline))

    @route("/<int:pk>/backfill", methods=("POST",), permission="write", body=BackfillSchema, status=201,
           summary="One run per date from start to end, each with its ds; max_active_runs limits concurrency")
    def backfill(self, pk: int):
        from ..pipelines.scheduling import backfill

        pipeline = self.load(pk, ProjectRole.DEVELOPER)
        span = BackfillSchema().load(json_body())
        try:
            run_ids = backfill(pipeline, span["start"], span["end"])
        except ValueError as exc:
            raise FieldError("end", str(exc)) from None
        for run_id in run_ids:
            on_commit(lambda run_id=run_id: enqueue("myapp.reconcile_run", run_id))
        return jsonify(run_ids=run_ids), 201

    @route("/<int:pk>/clone", methods=("POST",), permission="write", body=CloneSchema, status=201,
           summary="Copy the pipeline (tasks and edges) under a new name in the same project")
    def clone(self, pk: int):
        import yaml

        from ..pipelines import spec as pipeline_spec

        source = self.load(pk, ProjectRole.DEVELOPER)
        name = CloneSchema().load(json_body())["name"]
        doc = yaml.safe_load(pipeline_spec.export(source)) | {"name": name}
        if db.session.scalar(sa.select(Pipeline.id).filter_by(project_id=source.project_id, name=name)):
            raise FieldError("name", f"already exists (name={name!r})", status=409)
        pipeline = pipeline_spec.apply(pipeline_spec.parse(yaml.safe_dump(doc)),
                                       db.session.get(Project, source.project_id), current_user().id)
        pipeline.paused = True  # a copy does not start firing its schedule by surprise
        return jsonify(self.present(pipeline)), 201

    @route("/<int:pk>/graph", summary="The pipeline with all its tasks and edges, for the editor")
    def graph(self, pk: int):
        return jsonify(self._graph(self.load(pk)))

    @route("/<int:pk>/graph", methods=("PUT",), permission="write", body=GraphSchema,
           summary="Replace the whole DAG in one transaction: tasks by id (existing) or key (new), edges by key")
    def put_graph(self, pk: int):
        from ..pipelines.graph import replace_graph

        pipeline = self.load(pk, ProjectRole.DEVELOPER)
        data = GraphSchema().load(json_body())
        ids = replace_graph(pipeline, data["tasks"], data["edges"])
        keys = {task_id: key for key, task_id in ids.items()}
        pipeline.updated_at = utcnow()  # the editor's save is a change of the pipeline
        db.session.flush()
        graph = self._graph(pipeline)
        for task in graph["tasks"]:
            task["key"] = keys[task["id"]]
        return jsonify(graph)

    def _graph(self, pipeline: Pipeline) -> dict[str, Any]:
        tasks = db.session.scalars(sa.select(Task).filter_by(pipeline_id=pipeline.id).order_by(Task.id)).all()
        edges = db.session.scalars(sa.select(Edge).filter_by(pipeline_id=pipeline.id).order_by(Edge.id)).all()
        return {"pipeline": self.present(pipeline), "tasks": [present_row(t) for t in tasks],
                "edges": [present_row(e) for e in edges]}

    @route("/<int:pk>/export", summary="The pipeline as YAML, ready for `myapp pipeline apply`")
    def export_yaml(self, pk: int):
        from ..pipelines import spec as pipeline_spec

        return jsonify(yaml=pipeline_spec.export(self.load(pk)))


class TaskApi(ResourceApi):
    resource_name = "task"
    class_permission_name = "Task"
    model = Task
    schema = TaskSchema
    label = "task"
    parent = ("pipeline_id", Pipeline)
    refs = {
        "template_id": Ref(JobTemplate, "job template", same_project=False),
        "resource_group_id": Ref(ResourceGroup, "resource group", same_project=False),
    }
    filters = ("pipeline_id", "name", "template_id")
    orders = ("id", "name")

    def before_save(self, obj: Task, data: dict, creating: bool) -> None:
        """Arguments and resources must fit the template now, not fail at run time."""
        from ..task_manifests import check_task_inputs

        try:
            check_task_inputs(db.session.get(JobTemplate, obj.template_id), obj.args, obj.resources)
        except ArgumentError as exc:
            raise FieldError(exc.field, exc.reason) from None

    @route("/<int:pk>/run", methods=("POST",), permission="write", status=201,
           summary="Run this task alone (debug): a run of one task, its upstream ignored")
    def run_alone(self, pk: int):
        task = self.load(pk, ProjectRole.DEVELOPER)
        run = PipelineRun(project_id=task.project_id, pipeline_id=task.pipeline_id, trigger=RunTrigger.DEBUG,
                          run_key=f"debug-{uuid.uuid4().hex}", only_task_id=task.id, created_by_id=current_user().id)
        db.session.add(run)
        db.session.flush()
        run_id = run.id
        on_commit(lambda: enqueue("myapp.reconcile_run", run_id))
        return jsonify(run_id=run_id), 201

    @route("/<int:pk>/manifests", summary="Preview the manifests this task would submit, validated")
    def manifests(self, pk: int):
        from ..task_manifests import render_task

        task = self.load(pk)
        try:
            return jsonify(items=render_task(task))
        except RenderError as exc:
            raise ApiError(f"cannot render task {task.name}: {exc}", status=422) from exc


class EdgeSchema(StrictSchema):
    pipeline_id = Int(1, required=True)
    upstream_task_id = Int(1, required=True)
    downstream_task_id = Int(1, required=True)


class EdgeApi(ResourceApi):
    resource_name = "edge"
    class_permission_name = "Edge"
    model = Edge
    schema = EdgeSchema
    label = "edge"
    parent = ("pipeline_id", Pipeline)
    refs = {
        "upstream_task_id": Ref(Task, "task", same="pipeline_id"),
        "downstream_task_id": Ref(Task, "task", same="pipeline_id"),
    }
    filters = ("pipeline_id",)
    immutable = ("upstream_task_id", "downstream_task_id")

    def before_save(self, obj: Edge, data: dict, creating: bool) -> None:
        if obj.upstream_task_id == obj.downstream_task_id:
            raise FieldError("downstream_task_id", "an edge cannot connect a task to itself")
        existing = db.session.execute(
            sa.select(Edge.upstream_task_id, Edge.downstream_task_id).where(Edge.pipeline_id == obj.pipeline_id)
        ).all()
        if find_cycle([tuple(e) for e in existing] + [(obj.upstream_task_id, obj.downstream_task_id)]):
            raise FieldError("downstream_task_id", "this edge would make a cycle; pipelines are acyclic")


class PipelineRunSchema(StrictSchema):
    pipeline_id = Int(1, required=True)
    params = fields.Dict(keys=fields.String())
    # Idempotency: a client retrying the same request gets a 409, not a second run.
    run_key = fields.String(validate=validate.Regexp(r"^[A-Za-z0-9_.:-]{1,128}$"))


class PipelineRunApi(ResourceApi):
    resource_name = "pipeline_run"
    class_permission_name = "PipelineRun"
    model = PipelineRun
    schema = PipelineRunSchema
    label = "pipeline run"
    parent = ("pipeline_id", Pipeline)
    filters = ("project_id", "pipeline_id", "state", "trigger")
    orders = ("id", "created_at", "started_at")
    exclude_route_methods = {"put"}

    def before_save(self, obj: PipelineRun, data: dict, creating: bool) -> None:
        obj.run_key = obj.run_key or f"manual-{uuid.uuid4().hex}"
        obj.created_by_id = current_user().id

    def after_create(self, obj: PipelineRun) -> None:
        run_id = obj.id
        on_commit(lambda: enqueue("myapp.reconcile_run", run_id))

    @route("/<int:pk>/rerun", methods=("POST",), permission="write", status=201,
           summary="A new run that keeps this run's succeeded tasks and runs the failed ones and what follows")
    def rerun(self, pk: int):
        source = self.load(pk, ProjectRole.DEVELOPER)
        if not source.is_finished:
            raise ApiError(f"run {pk} is {source.state.value}; it can be rerun when it has finished", status=409)
        run = PipelineRun(project_id=source.project_id, pipeline_id=source.pipeline_id, trigger=source.trigger,
                          run_key=f"rerun-{pk}-{uuid.uuid4().hex[:12]}", logical_date=source.logical_date,
                          params=source.params, rerun_of_id=source.id, created_by_id=current_user().id)
        db.session.add(run)
        db.session.flush()
        run_id = run.id
        on_commit(lambda: enqueue("myapp.reconcile_run", run_id))
        return jsonify(self.present(run)), 201

    @route("/<int:pk>/cancel", methods=("POST",), permission="write", status=202,
           summary="Cancel the run: its running jobs are stopped in the backend")
    def cancel(self, pk: int):
        run = self.load(pk, ProjectRole.DEVELOPER)
        if run.is_finished:
            raise ApiError(f"run {pk} already {run.state.value}", status=409)
        on_commit(lambda: enqueue("myapp.cancel_run", pk))
        return jsonify(message=f"cancelling run {pk}"), 202

    @route("/<int:pk>/events", summary="Server-sent events: `run` (the run and its task runs) on every change, "
                                       "`end` once it has finished")
    def events(self, pk: int):
        from .streams import run_events, sse_response

        self.load(pk)
        return sse_response(run_events(pk, self.present))

    def before_delete(self, obj: PipelineRun) -> None:
        if not obj.is_finished:
            raise ApiError(f"run {obj.id} is {obj.state.value}; cancel it before deleting", status=409)


MAX_LOG_LINES = 10_000


class TaskRunApi(ResourceApi):
    """Read-only: task runs are written by the run controller, never by hand."""

    resource_name = "task_run"
    class_permission_name = "TaskRun"
    model = TaskRun
    label = "task run"
    filters = ("project_id", "pipeline_run_id", "task_id", "state")
    orders = ("id", "created_at", "started_at")
    include_route_methods = {"get_list", "get", "logs", "log_stream", "metrics"}

    def _backend_and_ref(self, attempt: TaskRun):
        from ..backends import JobRef
        from ..backends.registry import backend_for

        return backend_for(db.session.get(Task, attempt.task_id)), JobRef.from_dict(attempt.backend_ref)

    def _read_lines(self, attempt: TaskRun, after: dict[str, int] | None = None) -> list:
        """Lines after the cursor (replica -> last seq): live while running, archived after."""
        from ..backends.registry import log_archive

        if not attempt.backend_ref:
            return []
        backend, ref = self._backend_and_ref(attempt)
        cursor = dict(after or {})
        archived = log_archive().read(ref) if attempt.is_finished else []
        if archived:
            return [ln for ln in archived if ln.seq > cursor.get(ln.replica, -1)]
        return list(backend.logs(ref, follow=False, after=cursor or None))

    @staticmethod
    def _log_filter(args: dict[str, str]):
        replica, search = args.get("replica"), args.get("search")
        return lambda ln: (not replica or ln.replica == replica) and (not search or search in ln.line)

    @route("/<int:pk>/logs", summary="Aggregated logs of every replica: live while running, archived after",
           query={"replica": "only this replica (e.g. worker-1)", "search": "only lines containing this text",
                  "limit": f"the last N lines (default 1000, at most {MAX_LOG_LINES})"})
    def logs(self, pk: int):
        attempt = self.load(pk)
        args = query_args({"replica", "search", "limit"})
        limit = bounded_int(args, "limit", 1000, 1, MAX_LOG_LINES)
        lines = self._read_lines(attempt)
        keep = self._log_filter(args)
        return jsonify(replicas=sorted({ln.replica for ln in lines}), items=[
            {"replica": ln.replica, "seq": ln.seq, "line": ln.line, "timestamp": ln.timestamp}
            for ln in lines if keep(ln)][-limit:])

    @route("/<int:pk>/log_stream", summary="Server-sent events: `lines` as they are written, `end` when finished",
           query={"replica": "only this replica", "search": "only lines containing this text"})
    def log_stream(self, pk: int):
        from .streams import log_events, parse_cursor, sse_response

        self.load(pk)
        args = query_args({"replica", "search"})
        after = parse_cursor(request.headers.get("Last-Event-ID"))
        return sse_response(log_events(pk, self._read_lines, self._log_filter(args), after, MAX_LOG_LINES))

    @route("/<int:pk>/metrics", summary="CPU, memory and GPU samples: live while running, kept after")
    def metrics(self, pk: int):
        attempt = self.load(pk)
        if attempt.is_finished or not attempt.backend_ref:
            return jsonify(items=attempt.metrics or [])
        backend, ref = self._backend_and_ref(attempt)
        return jsonify(items=[asdict(sample) for sample in backend.metrics(ref)])
