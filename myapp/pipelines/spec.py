"""Pipelines as code: YAML in and out. The rows (Pipeline, Task, Edge) stay the one copy of the DAG;
this module only translates, with errors that name the task and the field."""
from __future__ import annotations

import re
from typing import Any

import sqlalchemy as sa
import yaml
from marshmallow import ValidationError, fields, validate

from ..api.errors import ApiError, FieldError, flatten_messages
from ..api.fields import DnsLabel, Int, ResourcesSchema, StrictSchema
from ..api.pipelines import cron_expression
from .dag import find_cycle
from ..extensions import db
from ..models import Edge, JobTemplate, Pipeline, Project, Task, TriggerRule
from ..rendering import ArgumentError
from ..task_manifests import check_task_inputs


class TaskSpecSchema(StrictSchema):
    name = DnsLabel(required=True)
    template = fields.String(required=True, validate=validate.Regexp(
        r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(@[0-9A-Za-z.+-]+)?$", error="must be a template name, optionally @version"))
    args = fields.Dict(keys=fields.String())
    depends_on = fields.List(DnsLabel())
    resources = fields.Nested(ResourcesSchema)
    retries = Int(0, 100)
    retry_delay = Int(0, 86_400)
    timeout = Int(1, 30 * 86_400, allow_none=True)
    trigger_rule = fields.String(validate=validate.OneOf([r.value for r in TriggerRule]))


class PipelineSpecSchema(StrictSchema):
    name = DnsLabel(required=True)
    project = DnsLabel(required=True)
    description = fields.String()
    schedule = fields.String(validate=[validate.Length(max=128), cron_expression])
    parameters = fields.Dict(keys=fields.String())
    max_active_runs = Int(1, 100)
    tasks = fields.List(fields.Nested(TaskSpecSchema), required=True, validate=validate.Length(min=1))


def _task_label(spec: dict[str, Any], index: int) -> str:
    name = (spec.get("tasks") or [{}])[index].get("name") if isinstance(spec.get("tasks"), list) else None
    return f"tasks[{index}] ({name})" if name else f"tasks[{index}]"


def parse(text: str) -> dict[str, Any]:
    """YAML text -> validated spec dict. Errors name the task and the field."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise FieldError("yaml", f"is not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise FieldError("yaml", "must be a mapping with name, project and tasks")
    try:
        spec = PipelineSpecSchema().load(raw)
    except ValidationError as exc:
        errors = flatten_messages(exc.messages)
        for err in errors:  # "tasks[1].args" -> "tasks[1] (train).args"
            match = re.match(r"tasks\[(\d+)\]", err["field"])
            if match:
                err["field"] = _task_label(raw, int(match.group(1))) + err["field"][match.end():]
        raise ApiError("Invalid pipeline: " + "; ".join(f"{e['field']}: {e['reason']}" for e in errors), errors) from None
    names = [t["name"] for t in spec["tasks"]]
    for index, task in enumerate(spec["tasks"]):
        label = _task_label(spec, index)
        if task["name"] in names[:index]:
            raise FieldError(f"{label}.name", "is used by another task of this pipeline")
        for dep in task.get("depends_on", []):
            if dep not in names:
                raise FieldError(f"{label}.depends_on", f"unknown task {dep!r}")
    edges = [(dep, t["name"]) for t in spec["tasks"] for dep in t.get("depends_on", [])]
    if find_cycle(edges):
        raise FieldError("tasks", "depends_on makes a cycle; pipelines are acyclic")
    return spec


def _template(ref: str, label: str) -> JobTemplate:
    name, _, version = ref.partition("@")
    query = sa.select(JobTemplate).filter_by(name=name)
    if version:
        query = query.filter_by(version=version)
    template = db.session.scalars(query.order_by(JobTemplate.id.desc())).first()
    if template is None:
        raise FieldError(f"{label}.template", f"no job template {ref!r}", status=404)
    return template


def apply(spec: dict[str, Any], project: Project, user_id: int | None) -> Pipeline:
    """Create or update the pipeline named in spec, in one transaction (the caller commits)."""
    pipeline = db.session.scalar(sa.select(Pipeline).filter_by(project_id=project.id, name=spec["name"]))
    if pipeline is None:
        pipeline = Pipeline(project_id=project.id, name=spec["name"], created_by_id=user_id)
        db.session.add(pipeline)
    for key in ("description", "schedule", "parameters", "max_active_runs"):
        if key in spec:
            setattr(pipeline, key, spec[key])
    db.session.flush()
    existing = {t.name: t for t in db.session.scalars(sa.select(Task).filter_by(pipeline_id=pipeline.id))}
    db.session.execute(sa.delete(Edge).where(Edge.pipeline_id == pipeline.id))
    ids: dict[str, int] = {}
    for index, tspec in enumerate(spec["tasks"]):
        label = _task_label(spec, index)
        template = _template(tspec["template"], label)
        try:
            check_task_inputs(template, tspec.get("args"), tspec.get("resources"))
        except ArgumentError as exc:
            raise FieldError(f"{label}.{exc.field}", exc.reason) from None
        task = existing.pop(tspec["name"], None) or Task(project_id=project.id, pipeline_id=pipeline.id,
                                                         name=tspec["name"])
        task.template_id = template.id
        task.args = tspec.get("args") or {}
        task.resources = tspec.get("resources") or {}
        task.retries = tspec.get("retries", 0)
        task.retry_delay = tspec.get("retry_delay", 30)
        task.timeout = tspec.get("timeout")
        task.trigger_rule = TriggerRule(tspec.get("trigger_rule", "all_success"))
        db.session.add(task)
        db.session.flush()
        ids[task.name] = task.id
    for removed in existing.values():
        db.session.delete(removed)
    for tspec in spec["tasks"]:
        for dep in tspec.get("depends_on", []):
            db.session.add(Edge(project_id=project.id, pipeline_id=pipeline.id,
                                upstream_task_id=ids[dep], downstream_task_id=ids[tspec["name"]]))
    db.session.flush()
    return pipeline


def export(pipeline: Pipeline) -> str:
    project = db.session.get(Project, pipeline.project_id)
    tasks = db.session.scalars(sa.select(Task).filter_by(pipeline_id=pipeline.id).order_by(Task.id)).all()
    names = {t.id: t.name for t in tasks}
    deps: dict[int, list[str]] = {t.id: [] for t in tasks}
    for up, down in db.session.execute(sa.select(Edge.upstream_task_id, Edge.downstream_task_id)
                                       .filter_by(pipeline_id=pipeline.id).order_by(Edge.id)):
        deps[down].append(names[up])
    templates = {t.id: t for t in db.session.scalars(
        sa.select(JobTemplate).where(JobTemplate.id.in_({t.template_id for t in tasks})))}
    doc: dict[str, Any] = {"name": pipeline.name, "project": project.name}
    if pipeline.description:
        doc["description"] = pipeline.description
    if pipeline.schedule:
        doc["schedule"] = pipeline.schedule
    if pipeline.parameters:
        doc["parameters"] = pipeline.parameters
    doc["tasks"] = []
    for task in tasks:
        template = templates[task.template_id]
        entry: dict[str, Any] = {"name": task.name, "template": f"{template.name}@{template.version}"}
        for key, default in (("args", {}), ("resources", {}), ("retries", 0), ("retry_delay", 30), ("timeout", None)):
            if getattr(task, key) != default:
                entry[key] = getattr(task, key)
        if task.trigger_rule != TriggerRule.ALL_SUCCESS:
            entry["trigger_rule"] = task.trigger_rule.value
        if deps[task.id]:
            entry["depends_on"] = deps[task.id]
        doc["tasks"].append(entry)
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
