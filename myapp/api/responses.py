"""What the API answers, as JSON schemas in the OpenAPI spec (the UI's types are generated from them).

Objects of a ResourceApi are described from their SQLAlchemy columns (`model_schema`, what
`ResourceApi.present` writes), refined by the API's request schema where a JSON column has a
field there (`resources` -> Resources), plus the keys an API's `present` adds (`output_fields`).
Custom routes name their answer with `route(..., response=...)`: one of the components below,
a marshmallow schema, or a JSON-schema dict. Components registered with `component()` are put
into every spec, also those no route references (the session endpoints of myapp/web/ui_routes.py).

The spec is OpenAPI 3.0: a null value is `nullable: true`, and a `$ref` that may be null is
wrapped in `allOf`.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import functools
import types
import typing
from collections.abc import Iterable, Mapping
from typing import Any

import sqlalchemy as sa
from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from marshmallow import Schema
from sqlalchemy.orm import Mapped

from ..admission.usage import Amount
from ..models import PipelineRun, ProjectRole, TaskRun, TaskState
from ..pipelines.observation import LogLine, MetricSample
from ..rendering.args import ITEM_KEYWORDS, PROPERTY_KEYWORDS, TYPES

REF_PREFIX = "#/components/schemas/"
STRING: dict[str, Any] = {"type": "string"}
INTEGER: dict[str, Any] = {"type": "integer"}
NUMBER: dict[str, Any] = {"type": "number"}
BOOLEAN: dict[str, Any] = {"type": "boolean"}
ANY: dict[str, Any] = {}
OBJECT: dict[str, Any] = {"type": "object", "additionalProperties": {}}


def ref(name: str) -> dict[str, Any]:
    return {"$ref": REF_PREFIX + name}


def array(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:  # OpenAPI 3.0 ignores siblings of $ref
        return {"allOf": [schema], "nullable": True}
    return {**schema, "nullable": True}


def enum_of(values: Iterable[Any]) -> dict[str, Any]:
    return {"type": "string", "enum": [v.value if isinstance(v, enum.Enum) else v for v in values]}


def obj(properties: Mapping[str, dict[str, Any]], optional: Iterable[str] = (), strict: bool = True) -> dict[str, Any]:
    """An object with these keys, every one present unless named in optional.

    strict: no other keys (what the server writes is exactly this; the contract test holds it to that)."""
    skip = set(optional)
    out: dict[str, Any] = {"type": "object", "properties": dict(properties)}
    required = [name for name in properties if name not in skip]
    if required:
        out["required"] = required
    if strict:
        out["additionalProperties"] = False
    return out


# ---- named components ---------------------------------------------------------------------------------
COMPONENTS: dict[str, dict[str, Any]] = {}


def component(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    """Register a named schema for every spec; returns a $ref to it."""
    if name in COMPONENTS and COMPONENTS[name] != schema:
        raise ValueError(f"response component {name} is defined twice, differently")
    COMPONENTS[name] = schema
    return ref(name)


def add_components(api_spec: APISpec) -> None:
    for name, schema in COMPONENTS.items():
        if name not in api_spec.components.schemas:
            api_spec.components.schema(name, component=schema)
    for name, description in ERROR_RESPONSES.values():
        if name not in api_spec.components.responses:
            api_spec.components.response(name, {
                "description": description, "content": {"application/json": {"schema": ERROR}}})
    api_spec.components.responses["400"] = FAB_BAD_REQUEST  # whichever view registers it first
    for (path, method), answers in FAB_ANSWERS.items():  # FAB's views add their paths before ours
        operation = api_spec._paths.get(path, {}).get(method)
        if operation is not None:
            operation["responses"].update(answers)


def error_responses(writes: bool, stream: bool = False, body: bool = False) -> dict[str, dict[str, str]]:
    """The failures an operation may answer, by status: $refs to the responses add_components adds
    (409 and 503 only where it writes: a unique name taken, a member's role in the way, SQLite still
    locked after the runs again of myapp/api/routing.py; 413 only with a body; 429 only streams)."""
    left_out = {"409": not writes, "413": not body, "429": not stream, "503": not writes}
    return {status: {"$ref": f"#/components/responses/{name}"} for status, (name, _) in ERROR_RESPONSES.items()
            if not left_out.get(status)}


# ---- Python types and SQLAlchemy columns -> JSON schema -------------------------------------------------
def python_schema(annotation: Any) -> dict[str, Any]:
    """JSON schema of a value of this Python type, as jsonify writes it."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        present = [a for a in args if a is not type(None)]
        inner = python_schema(present[0]) if len(present) == 1 else {"anyOf": [python_schema(a) for a in present]}
        return nullable(inner) if len(present) < len(args) else inner
    if origin is Mapped:
        return python_schema(args[0])
    if origin in (dict, Mapping) or annotation is dict:
        return {"type": "object", "additionalProperties": python_schema(args[1]) if args else {}}
    if origin in (list, tuple, set, frozenset) or annotation is list:
        return array(python_schema(args[0]) if args else {})
    if annotation is Any or annotation is object:
        return {}
    if isinstance(annotation, type):
        if issubclass(annotation, enum.Enum):
            return enum_of(annotation)
        if issubclass(annotation, bool):
            return dict(BOOLEAN)
        if issubclass(annotation, int):
            return dict(INTEGER)
        if issubclass(annotation, float):
            return dict(NUMBER)
        if issubclass(annotation, str):
            return dict(STRING)
        if issubclass(annotation, dt.datetime):
            return {"type": "string", "format": "date-time"}
        if issubclass(annotation, dt.date):
            return {"type": "string", "format": "date"}
        if dataclasses.is_dataclass(annotation):
            return dataclass_schema(annotation)
    raise TypeError(f"no JSON schema for {annotation!r}: describe it in responses.py")


def dataclass_schema(cls: type) -> dict[str, Any]:
    """What dataclasses.asdict() of cls gives: every field, with its type."""
    hints = typing.get_type_hints(cls)
    return obj({f.name: python_schema(hints[f.name]) for f in dataclasses.fields(cls)})


def column_schema(column: sa.Column, annotation: Any = None) -> dict[str, Any]:
    """JSON schema of a column's value as ResourceApi.present writes it (base.to_json_value)."""
    ctype = column.type
    schema: dict[str, Any]
    if isinstance(ctype, sa.Enum):
        schema = {"type": "string", "enum": list(ctype.enums)}
    elif isinstance(ctype, sa.Boolean):
        schema = dict(BOOLEAN)
    elif isinstance(ctype, sa.Integer):
        schema = dict(INTEGER)
    elif isinstance(ctype, sa.Numeric):
        schema = dict(NUMBER)
    elif isinstance(ctype, sa.DateTime):
        schema = {"type": "string", "format": "date-time"}  # ISO 8601 with its UTC offset
    elif isinstance(ctype, sa.Date):
        schema = {"type": "string", "format": "date"}
    elif isinstance(ctype, sa.String):
        schema = dict(STRING)
    elif isinstance(ctype, sa.JSON):
        schema = python_schema(annotation) if annotation is not None else {}
        schema = {k: v for k, v in schema.items() if k != "nullable"}
        if "allOf" in schema and len(schema) == 1:
            schema = schema["allOf"][0]
    else:
        raise TypeError(f"no JSON schema for column {column} of type {ctype!r}: add it to responses.column_schema")
    return nullable(schema) if column.nullable and not column.primary_key else schema


@functools.cache
def _hints(model: type) -> dict[str, Any]:
    return typing.get_type_hints(model)


def model_schema(model: type, columns: Iterable[str] | None = None, extra: Mapping[str, dict[str, Any]] | None = None,
                 request: type[Schema] | None = None, spec: APISpec | None = None) -> dict[str, Any]:
    """An object of model as present() writes it: the columns (all, or these), then extra keys.

    request and spec: the API's request schema; a JSON column with a field of the same name there
    takes that field's schema (a Nested field becomes a $ref to its component)."""
    mapper: Any = sa.inspect(model)
    attrs: dict[str, Any] = {a.key: a for a in mapper.column_attrs}
    names = list(columns) if columns is not None else list(attrs)
    fields = request._declared_fields if request is not None else {}
    converter = _converter(spec) if spec is not None else None
    properties: dict[str, dict[str, Any]] = {}
    for name in names:
        column = attrs[name].columns[0]
        if isinstance(column.type, sa.JSON) and name in fields and converter is not None:
            prop = {k: v for k, v in converter.field2property(fields[name]).items()
                    if k not in ("nullable", "default", "readOnly", "writeOnly")}
            properties[name] = nullable(prop) if column.nullable else prop
        else:
            properties[name] = column_schema(column, _hints(model).get(name))
    properties.update(extra or {})
    return obj(properties)


def _converter(spec: APISpec) -> Any:
    plugin = next(p for p in spec.plugins if isinstance(p, MarshmallowPlugin))
    return plugin.converter


def output_name(model: type) -> str:
    """The component of a model's objects: PipelineOut (the request body is Pipeline)."""
    return f"{model.__name__}Out"


def page_of(item: dict[str, Any]) -> dict[str, Any]:
    """A page of a list endpoint: {count, page, page_size, items}."""
    return {"allOf": [PAGE_META, obj({"items": array(item)})]}


# ---- shared by every API ------------------------------------------------------------------------------------
FIELD_REASON = component("FieldReason", obj({"field": STRING, "reason": STRING}))
# Every error (myapp/api/errors.py ApiError.response); errors only when a field is to blame.
ERROR = component("Error", obj({"message": STRING, "errors": array(FIELD_REASON)}, optional=("errors",)))
MESSAGE = component("Message", obj({"message": STRING}))
# FAB's generic "400" (its /security/login) answers marshmallow's {field: [reasons]} as the message.
FAB_BAD_REQUEST = {"description": "Bad request", "content": {"application/json": {"schema": obj(
    {"message": {"anyOf": [STRING, {"type": "object", "additionalProperties": array(STRING)}]}}, strict=False)}}}
# What FAB's own operations answer beyond what FAB's spec of them says: its login predates the sign-in
# limits (myapp/auth/logins.py), and its menu is not granted to the User role (myapp/auth/security.py).
FAB_ANSWERS = {
    ("/api/v1/security/login", "post"): {"429": {
        "description": "Too many sign-in attempts from this address, or for this account from it (Retry-After)",
        "content": {"application/json": {"schema": obj({"message": STRING, "retry_after": INTEGER})}}}},
    ("/api/v1/menu/", "get"): {"403": {"$ref": "#/components/responses/403"}},
}
ERROR_RESPONSES = {
    "400": ("InvalidInput", "Invalid input: {message, errors: [{field, reason}]}"),
    "401": ("NotAuthenticated", "Not authenticated"),
    "403": ("NotAllowed", "Role does not allow this"),
    "404": ("NotFoundHere", "Not found, or not in your projects"),
    "409": ("Conflict", "Conflicts with stored data (errors name the field when one is to blame)"),
    "413": ("TooLarge", "The body is over MYAPP_MAX_BODY_BYTES"),
    "429": ("TooManyStreams", "Too many open streams (Retry-After): myapp/api/streams.py"),
    "503": ("Busy", "The database is busy with other writes (SQLite): try again after Retry-After"),
}
PAGE_META = component("PageMeta", obj({
    "count": {**INTEGER, "description": "rows matching the filters, on every page"},
    "page": {**INTEGER, "description": "0-based"},
    "page_size": INTEGER,
}))

# ---- sign-in and the signed-in user (myapp/web/ui_routes.py, myapp/api/me.py) ---------------------------------------
SESSION = component("Session", obj({"authenticated": BOOLEAN, "csrf_token": STRING}))
PROJECT_ROLE = enum_of(ProjectRole)
ME = component("Me", obj({
    "id": INTEGER, "username": STRING, "first_name": STRING, "last_name": STRING, "is_admin": BOOLEAN,
    "projects": array(component("MyProject", obj({"id": INTEGER, "name": STRING, "role": PROJECT_ROLE}))),
    "csrf_token": STRING,
}))
MEMBER = component("MemberOut", obj({"id": INTEGER, "user_id": INTEGER, "username": STRING, "role": PROJECT_ROLE}))
MEMBERS = component("MemberList", obj({"items": array(MEMBER)}))
WORK_ITEM = component("WorkItem", obj({"id": INTEGER, "name": STRING, "state": STRING}))
RUNNING_WORK = component("RunningWork", obj({"runs": array(WORK_ITEM), "notebooks": array(WORK_ITEM),
                                             "services": array(WORK_ITEM), "builds": array(WORK_ITEM)}))

# ---- users, admins only (myapp/api/users.py): a generated password is answered once, never a given one ---------
_GENERATED = {"generated_password": {**STRING, "description": "only when the server generated it; shown once"}}
NEW_USER = component("NewUser", {"allOf": [ref("UserOut"), obj(_GENERATED, optional=_GENERATED)]})
PASSWORD_CHANGED = component("PasswordChanged", obj({"message": STRING, **_GENERATED}, optional=_GENERATED))
_WAIT = {**INTEGER, "description": "seconds until the next attempt is let through (0: now)"}
LOGIN_LIMITS = component("LoginLimits", obj({  # myapp/auth/login_limits.py state()
    "addresses": array(obj({"address": STRING, "failures": {**INTEGER, "description": "in the current streak"},
                            "retry_after": _WAIT})),
    "new_addresses": obj({"attempts_left": INTEGER, "retry_after": _WAIT}),
    "known_addresses": array(obj({"address": STRING, "last_login_at": {**STRING, "format": "date-time"},
                                  "expires_at": {**STRING, "format": "date-time"}})),
}))

# ---- capacity (myapp/api/admin.py present_capacity, myapp/admission/usage.py) ----------------------------------------
CAPACITY_FIELDS = {
    "cpu": {**STRING, "description": "cpu_millicores as a Kubernetes quantity, e.g. 500m or 4"},
    "memory": {**STRING, "description": "memory_bytes as a Kubernetes quantity, e.g. 512Mi or 8Gi"},
}
AMOUNT = component("Amount", dataclass_schema(Amount))
RUNNING_COUNTS = component("RunningCounts", obj({
    "tasks": {**INTEGER, "description": "attempts running (or pending on their backend)"},
    "notebooks": {**INTEGER, "description": "notebooks started"}, "services": {
        **INTEGER, "description": "inference services holding model servers"}}))
PROJECT_USAGE = component("ProjectUsage", obj({
    "project_id": INTEGER, "project": STRING, "quota": nullable(AMOUNT), "used": AMOUNT, "running": RUNNING_COUNTS}))
GROUP_USAGE = component("GroupUsage", obj({
    "resource_group_id": nullable(INTEGER), "name": STRING, "cluster_id": nullable(INTEGER),
    "gpu_type": nullable(STRING), "capacity": nullable(AMOUNT), "used": AMOUNT, "projects": array(PROJECT_USAGE),
}))
USAGE = component("UsageReport", obj({"items": array(GROUP_USAGE)}))

# ---- admin limits (myapp/api/admin.py LimitApi, myapp/pipelines/scheduling.py) -------------------------------
PLATFORM_LIMIT = component("PlatformLimitOut", obj({
    "value": INTEGER, "default": {**INTEGER, "description": "the config's (MYAPP_*), used when not set"},
    "set": BOOLEAN, "minimum": INTEGER, "maximum": INTEGER, "help": STRING}))
PROJECT_LIMIT = component("ProjectLimitOut", obj({
    "id": INTEGER, "name": STRING, "max_running_runs": {**nullable(INTEGER), "description": "null: no limit"},
    "running": INTEGER, "queued": INTEGER}))
LIMITS = component("LimitsOut", obj({
    "platform": obj({"max_backfill_days": PLATFORM_LIMIT, "min_schedule_interval": PLATFORM_LIMIT}),
    "projects": array(PROJECT_LIMIT)}))

# ---- job templates' argument schemas (myapp/rendering/args.py) ----------------------------------------------
_ARG_TYPE = enum_of(TYPES)
_ARG_KEYWORDS: dict[str, dict[str, Any]] = {
    "type": _ARG_TYPE, "description": STRING, "title": STRING, "default": ANY, "enum": array(ANY),
    "minimum": NUMBER, "maximum": NUMBER, "pattern": STRING, "minLength": INTEGER, "maxLength": INTEGER,
    "items": ref("ArgItems"), "minItems": INTEGER, "maxItems": INTEGER, "x-flag": STRING,
}
component("ArgItems", obj({k: ({**_ARG_TYPE, "enum": list(TYPES[:4])} if k == "type" else _ARG_KEYWORDS[k])
                           for k in sorted(ITEM_KEYWORDS)}, optional=set(ITEM_KEYWORDS) - {"type"}))
# Every keyword check_property allows, each with its schema (a KeyError here: describe the new keyword).
ARG_PROPERTY = component("ArgProperty", obj({k: _ARG_KEYWORDS[k] for k in sorted(PROPERTY_KEYWORDS)},
                                            optional=set(PROPERTY_KEYWORDS) - {"type"}))
ARGS_SCHEMA = component("ArgsSchema", obj({
    "type": enum_of(["object"]),
    "properties": {"type": "object", "additionalProperties": ARG_PROPERTY},
    "required": array(STRING),
    # The shipped catalog's schemas refuse unknown arguments (myapp/rendering/catalog.py).
    "additionalProperties": BOOLEAN,
    # The outputs a task of the template writes (myapp/outputs/declarations.py): key -> type, path, description.
    "x-outputs": {"type": "object", "additionalProperties": obj({"type": STRING, "path": STRING,
                                                                 "description": STRING})},
    # The template's grace period, SIGTERM -> SIGKILL in seconds (myapp/outputs/checkpoints.py).
    "x-grace-period": INTEGER,
    "x-elastic": obj({"min": INTEGER, "max": INTEGER}),
}, optional=("type", "properties", "required", "additionalProperties", "x-outputs", "x-grace-period",
             "x-elastic")))

# ---- pipelines, runs and task runs (myapp/api/pipelines.py, task_runs.py, streams.py) ----------------------------
GRAPH = component("PipelineGraph", obj({
    "pipeline": ref("PipelineOut"),
    # PUT answers each task's key too: the client's key for new tasks, the id as text for the others.
    "tasks": array({"allOf": [ref("TaskOut"), obj({"key": STRING}, optional=("key",))]}),
    "edges": array(ref("EdgeOut")),
}))
PIPELINE_EXPORT = component("PipelineExport", obj({"yaml": STRING}))
WEBHOOK_SECRET = component("WebhookSecret", obj({"secret": {
    **nullable(STRING), "description": "HMAC-SHA256 key of X-Myapp-Signature; null until the pipeline has a webhook"}}))
RUN_ID = component("RunId", obj({"run_id": INTEGER}))
RUN_IDS = component("RunIds", obj({"run_ids": array(INTEGER)}))
MANIFESTS = component("TaskManifests", obj({"items": array(OBJECT)}))
LOG_LINE = component("LogLine", dataclass_schema(LogLine))
METRIC_SAMPLE = component("MetricSample", dataclass_schema(MetricSample))
TASK_LOGS = component("TaskLogs", obj({"replicas": array(STRING), "items": array(LOG_LINE)}))
TASK_METRICS = component("TaskMetrics", obj({"items": array(METRIC_SAMPLE)}))
REPORTED_METRIC = component("ReportedMetric", obj({"step": INTEGER, "name": STRING, "value": NUMBER}))
OUTPUT_FILE = component("OutputFile", obj({
    "path": STRING, "size": INTEGER, "preview": enum_of(["metrics", "csv", "text", "image", "none"]),
    "on_claim": {**BOOLEAN, "description": "true: left on the Kubernetes outputs claim beyond the platform's copy; "
                 "its download and preview answer 202 while the worker fetches it"}}, optional=["on_claim"]))
TASK_OUTPUTS = component("TaskOutputs", obj({"output_dir": nullable(STRING), "files": array(OUTPUT_FILE),
                                             "metrics": array(REPORTED_METRIC)}))
TASK_RUN_OUTPUT = {"metrics": nullable(array(METRIC_SAMPLE)), "outputs": nullable(array(OUTPUT_FILE)),
                   "reported_metrics": nullable(array(REPORTED_METRIC))}

# Server-sent events: the data of each event, by event name.
# streams.TASK_RUN_FIELDS (tests/api/test_openapi_types.py holds them equal; importing it here would be circular).
_ATTEMPT_FIELDS = ("id", "task_id", "attempt", "state", "reason", "exit_code", "backend",
                   "created_at", "submitted_at", "started_at", "finished_at", "queue_position", "preemptions",
                   "cause")
RUN_SNAPSHOT = component("RunSnapshot", obj({
    # reconciled_at changes on every controller pass; the stream leaves it out.
    "run": model_schema(PipelineRun, [a.key for a in sa.inspect(PipelineRun).column_attrs if a.key != "reconciled_at"]),
    "task_runs": array(component("AttemptSummary", model_schema(TaskRun, _ATTEMPT_FIELDS))),
}))
LOG_BATCH = component("LogBatch", obj({"state": enum_of(TaskState), "items": array(LOG_LINE)}))
STREAM_END = component("StreamEnd", obj({"reason": enum_of(["finished", "deleted"]), "state": enum_of(TaskState)},
                                        optional=("reason", "state")))
RUN_EVENTS = {"oneOf": [RUN_SNAPSHOT, STREAM_END], "description": "`run` events: RunSnapshot; `end`: StreamEnd"}
# A live read the backend could not answer (e.g. the cluster is unreachable); the stream keeps polling.
STREAM_PROBLEM = component("StreamProblem", obj({"state": enum_of(TaskState), "message": STRING}))
LOG_EVENTS = {"oneOf": [LOG_BATCH, STREAM_PROBLEM, STREAM_END],
              "description": "`lines` events: LogBatch; `problem`: StreamProblem; `end`: StreamEnd"}
