"""A pipeline's settings and its tasks: the one table of defaults and the one writer of Task rows.

Every way of writing a task (the task API, the editor's graph save, YAML apply, clone) goes
through `save_task`, so a task is checked and defaulted the same way whichever door it came in by.
The defaults are the models' own column defaults, read once here: the database, the API and the
YAML export cannot disagree about them.
"""
from __future__ import annotations

import copy
import types
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa
from marshmallow import fields, validate

from ..errors import FieldError, Kind
from ..extensions import db
from ..inputs.fields import DnsLabel, Int, ResourcesSchema, StrictSchema, cron_expression, enum_field
from ..models import ConcurrencyPolicy, JobTemplate, Pipeline, ResourceGroup, Task, TriggerRule
from ..models.pipeline import WEBHOOK_EVENTS
from ..rendering import ArgumentError
from ..rendering.kinds import pipeline_refusal
from .images import check_task_image
from .manifests import check_task_inputs
from .notify import check_url, give_secret

# What a user sets on a pipeline besides its project and name (clone copies them, YAML carries them).
PIPELINE_SETTINGS = ("description", "schedule", "parameters", "paused", "max_active_runs", "concurrency_policy",
                     "depends_on_past", "webhook_url", "webhook_events")
# What a task is besides its name and template; each has a default.
TASK_SETTINGS = ("args", "resources", "resource_group_id", "image", "retries", "retry_delay", "timeout", "trigger_rule",
                 "position")
TASK_FIELDS = ("name", "template_id", *TASK_SETTINGS)


def _column_defaults(model: type, names: tuple[str, ...]) -> Mapping[str, Any]:
    mapper: sa.orm.Mapper[Any] = sa.inspect(model)
    out: dict[str, Any] = {}
    for name in names:
        default = mapper.columns[name].default
        if default is None:
            out[name] = None
        elif not isinstance(default, sa.ColumnDefault):  # a Sequence or the like: no value to show or compare
            raise TypeError(f"{model.__name__}.{name}: only plain column defaults are read here")
        elif default.is_callable:  # e.g. default=dict; SQLAlchemy wraps it to take an execution context
            out[name] = default.arg(None)
        else:
            out[name] = default.arg
    return types.MappingProxyType(out)


PIPELINE_DEFAULTS = _column_defaults(Pipeline, PIPELINE_SETTINGS)
TASK_DEFAULTS = _column_defaults(Task, TASK_SETTINGS)


class PipelineSettingsSchema(StrictSchema):
    """The settings as input: shared by the API's pipeline schema and the YAML spec."""

    description = fields.String(validate=validate.Length(max=10_000))
    schedule = fields.String(allow_none=True, validate=[validate.Length(max=128), cron_expression])
    parameters = fields.Dict(keys=fields.String(validate=validate.Regexp(r"^[A-Za-z_][A-Za-z0-9_]*$")))
    paused = fields.Boolean()
    max_active_runs = Int(1, 100)
    concurrency_policy = enum_field(ConcurrencyPolicy)
    depends_on_past = fields.Boolean()
    webhook_url = fields.Url(allow_none=True, require_tld=False, schemes={"http", "https"},
                             validate=validate.Length(max=2048))
    # Which events call the webhook; check_webhook stores them once each, in WEBHOOK_EVENTS' order.
    webhook_events = fields.List(fields.String(validate=validate.OneOf(WEBHOOK_EVENTS)),
                                 validate=validate.Length(min=1, error="name at least one event"))


class TaskSettingsSchema(StrictSchema):
    """A task's name and settings as input; the API adds template_id and resource_group_id, YAML adds
    template and resource_group by name and depends_on."""

    name = DnsLabel(required=True)
    args = fields.Dict(keys=fields.String())
    resources = fields.Nested(ResourcesSchema)
    # `repository:tag` of a catalog image or one of the project's (an environment it built); null: the
    # template's image. Only templates running the user's code may choose (rendering/image_choice.py).
    image = fields.String(allow_none=True, validate=validate.Length(1, 512))
    retries = Int(0, 100)
    retry_delay = Int(0, 86_400)
    timeout = Int(1, 30 * 86_400, allow_none=True)
    trigger_rule = enum_field(TriggerRule)
    position = fields.Dict(keys=fields.String(validate=validate.OneOf(["x", "y"])), values=fields.Float())


def check_webhook(pipeline: Pipeline, previous_url: str | None) -> None:
    """Every writer of a pipeline's settings (the API, YAML apply, clone) calls this once they are set:
    a new or changed webhook URL must pass the address rules (FieldError naming webhook_url), the events
    take their one order (export -> apply -> export stays the identity), and a pipeline with a webhook
    has its signing secret (made here, kept when the URL changes: rotating it is its own action)."""
    if pipeline.webhook_url and pipeline.webhook_url != previous_url:
        check_url(pipeline.webhook_url)
    events = set(PIPELINE_DEFAULTS["webhook_events"] if pipeline.webhook_events is None else pipeline.webhook_events)
    pipeline.webhook_events = [event for event in WEBHOOK_EVENTS if event in events]
    if pipeline.webhook_url and not pipeline.webhook_secret:
        give_secret(pipeline)  # stored sealed


def pipeline_values(pipeline: Pipeline) -> dict[str, Any]:
    """The pipeline's settings, as copies (JSON values are mutable)."""
    return {name: copy.deepcopy(getattr(pipeline, name)) for name in PIPELINE_SETTINGS}


def task_values(task: Task) -> dict[str, Any]:
    """Everything save_task takes, as stored on task (copies)."""
    return {name: copy.deepcopy(getattr(task, name)) for name in TASK_FIELDS}


def save_task(pipeline: Pipeline, values: Mapping[str, Any], row: Task | None = None, prefix: str = "") -> Task:
    """Check one task and write it: to row, or to a new task of pipeline when row is None.

    values: name, template_id and any settings; a setting left out takes its default.
    prefix: how the caller names this task in errors, e.g. "tasks[2]." gives "tasks[2].args.epochs".
    """
    unknown = set(values) - set(TASK_FIELDS)
    if unknown:
        raise TypeError(f"save_task: not task fields: {sorted(unknown)}")  # a caller's bug, not bad input
    settings = {name: values[name] if name in values else copy.deepcopy(TASK_DEFAULTS[name])
                for name in TASK_SETTINGS}
    template = db.session.get(JobTemplate, values["template_id"])
    if template is None:
        raise FieldError(f"{prefix}template_id", f"job template {values['template_id']} not found", Kind.NOT_FOUND)
    if (refusal := pipeline_refusal(template.kind)) is not None:  # servers belong to inference services
        raise FieldError(f"{prefix}template_id", refusal)
    group_id = settings["resource_group_id"]
    if group_id is not None and db.session.get(ResourceGroup, group_id) is None:
        raise FieldError(f"{prefix}resource_group_id", f"resource group {group_id} not found", Kind.NOT_FOUND)
    check_task_image({"name": template.name, "kind": template.kind}, settings["image"], pipeline.project_id,
                     f"{prefix}image")
    try:
        check_task_inputs(template, settings["args"], settings["resources"], pipeline.parameters)
    except ArgumentError as exc:
        raise FieldError(f"{prefix}{exc.field}", exc.reason) from None
    clash = sa.select(Task.id).filter_by(pipeline_id=pipeline.id, name=values["name"])
    if row is not None and row.id is not None:
        clash = clash.where(Task.id != row.id)
    if db.session.scalar(clash.limit(1)) is not None:
        raise FieldError(f"{prefix}name", f"already exists (name={values['name']!r})", Kind.CONFLICT)

    if row is None:
        row = Task(project_id=pipeline.project_id, pipeline_id=pipeline.id)
        db.session.add(row)
    row.name = values["name"]
    row.template_id = template.id
    for name, value in settings.items():
        setattr(row, name, value)
    db.session.flush()
    return row
