"""Pipelines, their tasks and edges, and the runs they produce (their task runs: task_runs.py)."""
from __future__ import annotations

import functools
import uuid
from typing import Any

import sqlalchemy as sa
from flask import current_app, jsonify
from marshmallow import fields, validate

from ..extensions import db
from ..inputs.fields import DnsLabel, Int, StrictSchema
from ..models import Edge, Pipeline, PipelineRun, Project, ProjectRole, RunTrigger, Task
from ..models.base import utcnow
from ..outputs.refs import check_references
from ..pipelines import checkpoint_cleanup, outputs_cleanup
from ..pipelines.dag import find_cycle
from ..pipelines.macros import check_run_params
from ..pipelines.notify import give_secret, secret_of
from ..pipelines.scheduling import check_schedule
from ..pipelines.tasks import PipelineSettingsSchema, TaskSettingsSchema, check_webhook, save_task, task_values
from ..shared import reconcile_requests
from .base import Ref, ResourceApi
from .errors import ApiError, FieldError, domain_error
from .responses import (
    GRAPH,
    MANIFESTS,
    MESSAGE,
    PIPELINE_EXPORT,
    RUN_EVENTS,
    RUN_ID,
    RUN_IDS,
    WEBHOOK_SECRET,
)
from .routing import json_body, on_commit, route
from .rows import column_names, to_json_value
from .scope import check_project, current_user


def release_runs(items: list[dict[str, Any]]) -> None:
    """After a project's deletion: a worker stops each unfinished run's jobs (myapp/pipelines/release.py)."""
    for item in items:
        enqueue("myapp.run_release", item)


def enqueue(task_name: str, *args, queue: str = reconcile_requests.ACTIONS_QUEUE) -> None:
    """Hand work to the Celery workers (the web process never runs jobs itself), on the user actions'
    queue unless told; reconciles are de-duplicated (at most one pending per run)."""
    celery = current_app.extensions["celery"]
    if task_name == "myapp.reconcile_run":
        reconcile_requests.request(celery, args, queue)
    else:
        celery.send_task(task_name, args=list(args), queue=queue)


def forget_folders(which: Any, namespace: str) -> None:
    """Before the rows of the runs ``which`` selects go (the run, its pipeline or its project deleted): their
    outputs and checkpoint folders are written down to remove, and workers remove them after the commit
    (myapp/pipelines/outputs_cleanup.py, checkpoint_cleanup.py)."""
    if outputs_cleanup.mark(which, namespace):
        on_commit(lambda: enqueue("myapp.outputs_cleanup", queue=reconcile_requests.BACKGROUND_QUEUE))
    if checkpoint_cleanup.mark(which, namespace):
        on_commit(lambda: enqueue("myapp.checkpoint_cleanup", queue=reconcile_requests.BACKGROUND_QUEUE))


class PipelineSchema(PipelineSettingsSchema):
    project_id = Int(1, required=True)
    name = DnsLabel(required=True)


class PipelineYamlSchema(StrictSchema):
    yaml = fields.String(required=True, validate=validate.Length(1, 1_000_000))


class CloneSchema(StrictSchema):
    name = DnsLabel(required=True)
    paused = fields.Boolean(load_default=True)  # by default a copy does not fire its schedule by surprise


class BackfillSchema(StrictSchema):
    start = fields.Date(required=True)
    end = fields.Date(required=True)


class TaskFields(TaskSettingsSchema):
    template_id = Int(1, required=True)
    resource_group_id = Int(1, allow_none=True)


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


def _no_store(response: Any) -> Any:
    response.headers["Cache-Control"] = "no-store"
    return response


def present_row(obj: Any) -> dict[str, Any]:
    model: Any = type(obj)
    return {c: to_json_value(getattr(obj, c)) for c in column_names(model)}


class PipelineApi(ResourceApi):
    resource_name = "pipeline"
    class_permission_name = "Pipeline"
    model = Pipeline
    schema = PipelineSchema
    label = "pipeline"
    parent = ("project_id", Project)
    filters = ("project_id", "name", "paused")
    orders = ("id", "name", "created_at", "updated_at")
    # The webhook's signing key is shown only by webhook_secret below, never in lists or objects.
    columns = tuple(c for c in column_names(Pipeline) if c != "webhook_secret")

    def before_save(self, obj: Pipeline, data: dict, creating: bool) -> None:
        if creating:
            obj.created_by_id = current_user().id
        stored: list[str | None] = list(sa.inspect(obj).attrs.webhook_url.history.deleted)  # before, if changed
        check_webhook(obj, None if creating else (stored or [obj.webhook_url])[0])
        old_schedule: list[str | None] = list(sa.inspect(obj).attrs.schedule.history.deleted)  # before, if changed
        check_schedule(obj.schedule, None if creating else (old_schedule or [obj.schedule])[0])

    def before_delete(self, obj: Pipeline) -> None:
        # Its runs go with it (foreign keys), and with them their outputs and their tasks' checkpoint folders.
        forget_folders(PipelineRun.pipeline_id == obj.id, db.session.get(Project, obj.project_id).namespace)

    # A POST, though it reads: the secret is for those who may write the pipeline (developers), and a
    # POST is CSRF-checked and never cached; answers say no-store too.
    @route("/<int:pk>/webhook_secret", methods=("POST",), permission="write",
           summary="The webhook's signing secret (HMAC-SHA256 key of X-Myapp-Signature), for developers",
           response=WEBHOOK_SECRET)
    def webhook_secret(self, pk: int):
        pipeline = self.load(pk, ProjectRole.DEVELOPER)
        return _no_store(jsonify(secret=secret_of(pipeline)))  # a row stored plain is sealed now

    @route("/<int:pk>/webhook_secret/rotate", methods=("POST",), permission="write",
           summary="Replace the webhook's signing secret with a new one; deliveries from now on use it",
           response=WEBHOOK_SECRET)
    def rotate_webhook_secret(self, pk: int):
        pipeline = self.load(pk, ProjectRole.DEVELOPER)
        secret = give_secret(pipeline)
        pipeline.updated_at = utcnow()
        return _no_store(jsonify(secret=secret))

    @route("/import", methods=("POST",), permission="write", body=PipelineYamlSchema,
           summary="Create or update a pipeline from YAML (tasks, depends_on, schedule)", response="model")
    def import_yaml(self):
        from ..pipelines import spec as pipeline_spec

        text = PipelineYamlSchema().load(json_body())["yaml"]
        parsed = pipeline_spec.parse(text)
        project = pipeline_spec.find_project(parsed["project"])
        # Someone else's project answers as a missing one: its name reveals nothing.
        check_project(project.id, ProjectRole.DEVELOPER, domain_error(pipeline_spec.unknown_project(project.name)))
        pipeline = pipeline_spec.apply(parsed, project, current_user().id)
        return jsonify(self.present(pipeline))

    @route("/<int:pk>/backfill", methods=("POST",), permission="write", body=BackfillSchema, status=201,
           summary="One run per date from start to end, each with its ds; max_active_runs limits concurrency",
           response=RUN_IDS)
    def backfill(self, pk: int):
        from ..pipelines.scheduling import backfill

        pipeline = self.load(pk, ProjectRole.DEVELOPER)
        span = BackfillSchema().load(json_body())
        run_ids = backfill(pipeline, span["start"], span["end"])
        # Background work: a long backfill must not delay other users' runs and cancels.
        on_commit(functools.partial(enqueue, "myapp.reconcile_run", *run_ids,
                                    queue=reconcile_requests.BACKGROUND_QUEUE))
        return jsonify(run_ids=run_ids), 201

    @route("/<int:pk>/clone", methods=("POST",), permission="write", body=CloneSchema, status=201,
           summary="Copy the pipeline (settings, tasks, edges) under a new name in the same project; "
                   "the copy is paused unless the body says \"paused\": false", response="model")
    def clone(self, pk: int):
        from ..pipelines.clone import clone_pipeline

        source = self.load(pk, ProjectRole.DEVELOPER)
        body = CloneSchema().load(json_body())
        pipeline = clone_pipeline(source, body["name"], current_user().id, body["paused"])
        return jsonify(self.present(pipeline)), 201

    @route("/<int:pk>/graph", summary="The pipeline with all its tasks and edges, for the editor", response=GRAPH)
    def graph(self, pk: int):
        return jsonify(self._graph(self.load(pk)))

    @route("/<int:pk>/graph", methods=("PUT",), permission="write", body=GraphSchema,
           summary="Replace the whole DAG in one transaction: tasks by id (existing) or key (new), edges by key",
           response=GRAPH)
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

    @route("/<int:pk>/export", summary="The pipeline as YAML, ready for `myapp pipeline apply`",
           response=PIPELINE_EXPORT)
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
    filters = ("pipeline_id", "name", "template_id")
    orders = ("id", "name")

    # Tasks are written by save_task, like the graph save, YAML apply and clone do: it checks the template,
    # the resource group, the arguments and resources against the template, and the name.
    @route("/", methods=("POST",), permission="write", body="schema", status=201, summary="Create",
           response="model")
    def post(self):
        data = self.body_schema().load(json_body())
        self.resolve_parent(data)
        pipeline = db.session.get(Pipeline, data.pop("pipeline_id"))
        task = save_task(pipeline, data)
        check_references(pipeline.id)
        return jsonify(self.present(task)), 201

    @route("/<int:pk>", methods=("PUT",), permission="write", body="schema-partial",
           summary="Update the fields given", response="model")
    def put(self, pk: int):
        task = self.load(pk, self.write_role)
        data = self.body_schema(partial=True).load(json_body())
        if "pipeline_id" in data:
            raise FieldError("pipeline_id", "cannot be changed after creation")
        pipeline = db.session.get(Pipeline, task.pipeline_id)
        task = save_task(pipeline, task_values(task) | data, task)
        check_references(pipeline.id)
        return jsonify(self.present(task))

    @route("/<int:pk>/run", methods=("POST",), permission="write", status=201,
           summary="Run this task alone (debug): a run of one task, its upstream ignored", response=RUN_ID)
    def run_alone(self, pk: int):
        task = self.load(pk, ProjectRole.DEVELOPER)
        run = PipelineRun(project_id=task.project_id, pipeline_id=task.pipeline_id, trigger=RunTrigger.DEBUG,
                          run_key=f"debug-{uuid.uuid4().hex}", only_task_id=task.id, created_by_id=current_user().id)
        db.session.add(run)
        db.session.flush()
        run_id = run.id
        on_commit(lambda: enqueue("myapp.reconcile_run", run_id))
        return jsonify(run_id=run_id), 201

    @route("/<int:pk>/manifests", summary="Preview the manifests this task would submit, validated",
           response=MANIFESTS)
    def manifests(self, pk: int):
        from ..pipelines.manifests import preview_task

        return jsonify(items=preview_task(self.load(pk)))


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
    parameters = fields.Dict(keys=fields.String(), metadata={
        "description": "values of the pipeline's parameters for this run ({{ params.<name> }}); the pipeline's "
                       "`parameters` give the rest"})
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
        obj.parameters = check_run_params(db.session.get(Pipeline, obj.pipeline_id), obj.parameters or {})

    def after_create(self, obj: PipelineRun) -> None:
        run_id = obj.id
        on_commit(lambda: enqueue("myapp.reconcile_run", run_id))

    @route("/<int:pk>/rerun", methods=("POST",), permission="write", status=201,
           summary="A new run that keeps this run's succeeded tasks and runs the failed ones and what follows",
           response="model")
    def rerun(self, pk: int):
        source = self.load(pk, ProjectRole.DEVELOPER)
        if not source.is_finished:
            raise ApiError(f"run {pk} is {source.state.value}; it can be rerun when it has finished", status=409)
        run = PipelineRun(project_id=source.project_id, pipeline_id=source.pipeline_id, trigger=source.trigger,
                          run_key=f"rerun-{pk}-{uuid.uuid4().hex[:12]}", logical_date=source.logical_date,
                          parameters=source.parameters, rerun_of_id=source.id, created_by_id=current_user().id)
        db.session.add(run)
        db.session.flush()
        run_id = run.id
        on_commit(lambda: enqueue("myapp.reconcile_run", run_id))
        return jsonify(self.present(run)), 201

    @route("/<int:pk>/cancel", methods=("POST",), permission="write", status=202,
           summary="Cancel the run: its running jobs are stopped in the backend", response=MESSAGE)
    def cancel(self, pk: int):
        run = self.load(pk, ProjectRole.DEVELOPER)
        if run.is_finished:
            raise ApiError(f"run {pk} already {run.state.value}", status=409)
        on_commit(lambda: enqueue("myapp.cancel_run", pk))
        return jsonify(message=f"cancelling run {pk}"), 202

    @route("/<int:pk>/events", summary="Server-sent events: `run` (the run and its task runs) on every change, "
                                       "`end` once it has finished",
           response=RUN_EVENTS, media_type="text/event-stream")
    def events(self, pk: int):
        from .streams import run_events, sse_response

        self.load(pk)
        return sse_response(run_events(pk, self.present))

    def before_delete(self, obj: PipelineRun) -> None:
        if not obj.is_finished:
            raise ApiError(f"run {obj.id} is {obj.state.value}; cancel it before deleting", status=409)
        # Its attempts' outputs go with it (a rerun that copied some of them loses those too), and its tasks'
        # checkpoint folders.
        forget_folders(PipelineRun.id == obj.id, db.session.get(Project, obj.project_id).namespace)
