"""Pipelines as code: YAML in and out. The rows (Pipeline, Task, Edge) stay the one copy of the DAG;
this module only translates, with errors that name the task and the field.

The YAML carries every setting of the pipeline and of its tasks; export leaves out what equals its
default (myapp.pipelines.tasks), and apply sets every field, so a field absent from the YAML goes
back to its default: export -> apply -> export gives the same text.
"""
from __future__ import annotations

import copy
import enum
import re
from typing import Any

import sqlalchemy as sa
import yaml
from marshmallow import ValidationError, fields, validate

from ..errors import DomainError, FieldError, Kind, flatten_messages
from ..extensions import db
from ..inputs.fields import DnsLabel
from ..inputs.plain_data import MAX_DEPTH, problem
from ..models import Edge, JobTemplate, Pipeline, Project, ResourceGroup, Task
from ..outputs.refs import check_references
from .dag import find_cycle
from .scheduling import check_schedule
from .tasks import (
    PIPELINE_DEFAULTS,
    PIPELINE_SETTINGS,
    TASK_DEFAULTS,
    PipelineSettingsSchema,
    TaskSettingsSchema,
    check_webhook,
    save_task,
)

# Task settings as the YAML names them: resource groups go by name, not id.
YAML_TASK_KEYS = {"resource_group_id": "resource_group"}


class TaskSpecSchema(TaskSettingsSchema):
    template = fields.String(required=True, validate=validate.Regexp(
        r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(@[0-9A-Za-z.+-]+)?$", error="must be a template name, optionally @version"))
    resource_group = DnsLabel(allow_none=True)
    depends_on = fields.List(DnsLabel())


class PipelineSpecSchema(PipelineSettingsSchema):
    name = DnsLabel(required=True)
    project = DnsLabel(required=True)
    tasks = fields.List(fields.Nested(TaskSpecSchema), required=True, validate=validate.Length(min=1))


def _task_label(spec: dict[str, Any], index: int) -> str:
    name = (spec.get("tasks") or [{}])[index].get("name") if isinstance(spec.get("tasks"), list) else None
    return f"tasks[{index}] ({name})" if name else f"tasks[{index}]"


MAX_YAML_CHARS = 1_000_000
MAX_YAML_NODES = 100_000  # scalars, sequences and mappings once aliases are expanded


def _yaml_node_count(root: yaml.Node) -> int:
    """Nodes the document expands to, aliases counted each time they are used; stops past the limit,
    so an alias bomb (billion laughs) is refused before anything constructs it."""
    count, stack = 0, [root]
    while stack and count <= MAX_YAML_NODES:
        node = stack.pop()
        count += 1
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                stack.extend((key, value))
    return count


def load_yaml(text: str) -> Any:
    """yaml.safe_load within limits: size, expanded node count, nesting (plain_data.MAX_DEPTH),
    and only values a database can store; errors name `yaml`."""
    if len(text) > MAX_YAML_CHARS:
        raise FieldError("yaml", f"is longer than {MAX_YAML_CHARS} characters")
    try:
        loader = yaml.SafeLoader(text)  # its reader refuses control characters here, before any parsing
    except yaml.YAMLError as exc:
        raise FieldError("yaml", f"is not valid YAML: {exc}") from None
    try:
        node = loader.get_single_node()
        if node is not None and _yaml_node_count(node) > MAX_YAML_NODES:
            raise FieldError("yaml", f"expands to more than {MAX_YAML_NODES} values (too many aliases?)")
        raw = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        raise FieldError("yaml", f"is not valid YAML: {exc}") from None
    except RecursionError:
        raise FieldError("yaml", f"is nested deeper than {MAX_DEPTH} levels") from None
    finally:
        loader.dispose()
    found = problem(raw, root="yaml")
    if found is not None:
        field, reason = found
        raise FieldError("yaml", reason if field == "yaml" else f"{field}: {reason}")
    return raw


def parse(text: str) -> dict[str, Any]:
    """YAML text -> validated spec dict. Errors name the task and the field."""
    raw = load_yaml(text)
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
        raise DomainError("Invalid pipeline: " + "; ".join(f"{e['field']}: {e['reason']}" for e in errors),
                          errors) from None
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


def unknown_project(name: str) -> FieldError:
    return FieldError("project", f"no project named {name!r}", Kind.NOT_FOUND)


def find_project(name: str) -> Project:
    project = db.session.scalar(sa.select(Project).filter_by(name=name))
    if project is None:
        raise unknown_project(name)
    return project


def _template(ref: str, label: str) -> JobTemplate:
    name, _, version = ref.partition("@")
    query = sa.select(JobTemplate).filter_by(name=name)
    if version:
        query = query.filter_by(version=version)
    template = db.session.scalars(query.order_by(JobTemplate.id.desc())).first()
    if template is None:
        raise FieldError(f"{label}.template", f"no job template {ref!r}", Kind.NOT_FOUND)
    return template


def _resource_group_id(name: str | None, label: str) -> int | None:
    if name is None:
        return None
    group_id = db.session.scalar(sa.select(ResourceGroup.id).filter_by(name=name))
    if group_id is None:
        raise FieldError(f"{label}.resource_group", f"no resource group named {name!r}", Kind.NOT_FOUND)
    return group_id


def apply(spec: dict[str, Any], project: Project, user_id: int | None) -> Pipeline:
    """Create or update the pipeline named in spec, in one transaction (the caller commits).

    Every setting is written: one the spec leaves out takes its default."""
    pipeline = db.session.scalar(sa.select(Pipeline).filter_by(project_id=project.id, name=spec["name"]))
    if pipeline is None:
        pipeline = Pipeline(project_id=project.id, name=spec["name"], created_by_id=user_id)
        db.session.add(pipeline)
    previous_url, previous_schedule = pipeline.webhook_url, pipeline.schedule
    for key in PIPELINE_SETTINGS:
        setattr(pipeline, key, spec[key] if key in spec else copy.deepcopy(PIPELINE_DEFAULTS[key]))
    check_webhook(pipeline, previous_url)  # the YAML never carries the secret: it stays, or is made here
    check_schedule(pipeline.schedule, previous_schedule)  # the admin's minimum schedule interval
    db.session.flush()
    existing = {t.name: t for t in db.session.scalars(sa.select(Task).filter_by(pipeline_id=pipeline.id))}
    db.session.execute(sa.delete(Edge).where(Edge.pipeline_id == pipeline.id))
    ids: dict[str, int] = {}
    for index, tspec in enumerate(spec["tasks"]):
        label = _task_label(spec, index)
        values = {key: value for key, value in tspec.items()
                  if key not in ("template", "resource_group", "depends_on")}
        values["template_id"] = _template(tspec["template"], label).id
        values["resource_group_id"] = _resource_group_id(tspec.get("resource_group"), label)
        task = save_task(pipeline, values, existing.pop(tspec["name"], None), f"{label}.")
        ids[task.name] = task.id
    for removed in existing.values():
        db.session.delete(removed)
    for tspec in spec["tasks"]:
        for dep in tspec.get("depends_on", []):
            db.session.add(Edge(project_id=project.id, pipeline_id=pipeline.id,
                                upstream_task_id=ids[dep], downstream_task_id=ids[tspec["name"]]))
    db.session.flush()
    check_references(pipeline.id, {ids[tspec["name"]]: _task_label(spec, index)
                                   for index, tspec in enumerate(spec["tasks"])})
    return pipeline


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, enum.Enum) else value


def export(pipeline: Pipeline) -> str:
    """The pipeline as YAML: every setting that differs from its default, tasks in id order."""
    project = db.session.get(Project, pipeline.project_id)
    tasks = db.session.scalars(sa.select(Task).filter_by(pipeline_id=pipeline.id).order_by(Task.id)).all()
    names = {t.id: t.name for t in tasks}
    deps: dict[int, list[str]] = {t.id: [] for t in tasks}
    for up, down in db.session.execute(sa.select(Edge.upstream_task_id, Edge.downstream_task_id)
                                       .filter_by(pipeline_id=pipeline.id).order_by(Edge.id)):
        deps[down].append(names[up])
    templates = {t.id: t for t in db.session.scalars(
        sa.select(JobTemplate).where(JobTemplate.id.in_({t.template_id for t in tasks})))}
    groups = dict(db.session.execute(sa.select(ResourceGroup.id, ResourceGroup.name).where(
        ResourceGroup.id.in_({t.resource_group_id for t in tasks if t.resource_group_id is not None}))).all())
    doc: dict[str, Any] = {"name": pipeline.name, "project": project.name}
    for key in PIPELINE_SETTINGS:
        if getattr(pipeline, key) != PIPELINE_DEFAULTS[key]:
            doc[key] = _plain(getattr(pipeline, key))
    doc["tasks"] = []
    for task in tasks:
        template = templates[task.template_id]
        entry: dict[str, Any] = {"name": task.name, "template": f"{template.name}@{template.version}"}
        for key, default in TASK_DEFAULTS.items():
            value = getattr(task, key)
            if value != default:
                entry[YAML_TASK_KEYS.get(key, key)] = groups[value] if key == "resource_group_id" else _plain(value)
        if deps[task.id]:
            entry["depends_on"] = deps[task.id]
        doc["tasks"].append(entry)
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
