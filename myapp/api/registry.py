"""The model registry: the versions of a project's models (registered with a uri, or uploaded into the
project's model store), their stages and lineage. The services serving them are api/serving.py's."""
from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa
from flask import current_app, jsonify, request
from marshmallow import fields, validate

from ..errors import FieldError
from ..extensions import db
from ..inputs.fields import DnsLabel, Int, StrictSchema
from ..inputs.plain_data import INT64_MAX, NonFinite, problem
from ..models import (
    InferenceService,
    ModelStage,
    ModelVersion,
    PipelineRun,
    Project,
    TaskRun,
)
from ..outputs import run_summary
from ..projects import caps as project_caps
from ..serving import local_uri, storage, store
from ..serving import traffic as split
from .base import Ref, ResourceApi
from .errors import ApiError
from .responses import INTEGER, NUMBER, array, component, nullable, obj
from .routing import on_commit, on_rollback, route
from .rows import column_names

FRAMEWORKS = ["sklearn", "pytorch", "torchscript", "onnx", "tensorflow", "xgboost", "custom"]
DTYPES = ["float32", "float64", "int32", "int64", "string"]


class SignatureSchema(StrictSchema):
    shape = fields.List(fields.Integer(strict=True, allow_none=True, validate=validate.Range(1, 1_000_000)),
                        validate=validate.Length(1, 8))
    dtype = fields.String(validate=validate.OneOf(DTYPES))


def plain_value(value: Any) -> None:
    """A parameter's value: a string (at most 1024 characters), a number, a boolean or null."""
    if value is None or isinstance(value, (bool, int, float)):
        return
    if not isinstance(value, str) or len(value) > 1024:
        raise validate.ValidationError("must be a string of at most 1024 characters, a number, a boolean or null")


class ModelFileSchema(StrictSchema):
    path = fields.String(required=True, validate=validate.Length(1, 1024))
    size = Int(0, INT64_MAX)  # bytes, kept in JSON


class ModelVersionSchema(StrictSchema):
    project_id = Int(1, required=True)
    name = DnsLabel(required=True)
    version = Int(1)
    uri = fields.String(required=True, validate=validate.Length(1, 2048))
    framework = fields.String(validate=validate.OneOf(FRAMEWORKS))
    metrics = fields.Dict(keys=fields.String(validate=validate.Length(1, 128)), values=fields.Float())
    params = fields.Dict(keys=fields.String(validate=validate.Length(1, 128)), values=fields.Raw(validate=plain_value),
                         validate=validate.Length(0, 200))
    task_run_id = Int(1, allow_none=True)
    stage = fields.String(validate=validate.OneOf([s.value for s in ModelStage]))
    signature = fields.Nested(SignatureSchema)
    files = fields.List(fields.Nested(ModelFileSchema), validate=validate.Length(0, 1000))
    description = fields.String(validate=validate.Length(0, 2000))
    image = fields.String(allow_none=True, validate=validate.Length(1, 512))


class ModelUploadSchema(StrictSchema):
    """The form of an upload (multipart/form-data): the file, and the version's fields as text
    (metrics and signature as JSON)."""
    project_id = Int(1, required=True)
    name = DnsLabel(required=True)
    framework = fields.String(validate=validate.OneOf(FRAMEWORKS))
    metrics = fields.String()
    signature = fields.String()
    description = fields.String(validate=validate.Length(0, 2000))
    file = fields.Raw(required=True, metadata={"type": "string", "format": "binary"})


UPLOAD_TEXT = ("project_id", "name", "framework", "description")
UPLOAD_JSON = ("metrics", "signature")


def upload_fields() -> dict[str, Any]:
    """The upload's form as ModelVersionSchema's input: JSON fields parsed (and bounded like any JSON
    body), unknown fields refused, each error naming its field."""
    unknown = sorted(set(request.form) - set(UPLOAD_TEXT) - set(UPLOAD_JSON))
    if unknown or set(request.files) - {"file"}:
        name = (unknown or sorted(set(request.files) - {"file"}))[0]
        raise FieldError(name, "unknown field")
    data: dict[str, Any] = {k: request.form[k] for k in UPLOAD_TEXT if k in request.form}
    for name in UPLOAD_JSON:
        if name not in request.form:
            continue
        try:
            data[name] = json.loads(request.form[name], parse_constant=NonFinite)
        except (ValueError, RecursionError):
            raise FieldError(name, "is not valid JSON") from None
    found = problem(data)
    if found is not None:
        raise FieldError(*found)
    if "project_id" in data:
        if not (data["project_id"].isascii() and data["project_id"].isdigit()):
            raise FieldError("project_id", "must be an integer")
        data["project_id"] = int(data["project_id"])
    return data


LINEAGE = {"run_id": nullable(INTEGER), "pipeline_id": nullable(INTEGER)}
METRIC_HISTORY = component("MetricHistory", obj({"metrics": {
    "type": "object", "additionalProperties": array(obj({"step": INTEGER, "value": NUMBER}))}}))


class ModelVersionApi(ResourceApi):
    resource_name = "model_version"
    class_permission_name = "ModelVersion"
    model = ModelVersion
    schema = ModelVersionSchema
    label = "model version"
    parent = ("project_id", Project)
    refs = {"task_run_id": Ref(TaskRun, "task run")}
    filters = ("project_id", "name", "stage", "framework")
    orders = ("id", "name", "version")
    immutable = ("name", "version", "uri", "framework", "task_run_id")
    output_fields = LINEAGE
    # Each metric's curve is read on its own (metric_history below): a list of versions stays small.
    columns = tuple(c for c in column_names(ModelVersion) if c != "metric_history")

    def present(self, obj: Any) -> dict[str, Any]:
        """The columns, and the lineage: the run (and its pipeline) whose task registered it."""
        out = super().present(obj)
        out["run_id"] = out["pipeline_id"] = None
        if obj.task_run_id is not None:
            row = db.session.execute(sa.select(TaskRun.pipeline_run_id, PipelineRun.pipeline_id)
                                     .join(PipelineRun, PipelineRun.id == TaskRun.pipeline_run_id)
                                     .where(TaskRun.id == obj.task_run_id)).first()
            if row is not None:
                out["run_id"], out["pipeline_id"] = row
        return out

    def before_save(self, obj: ModelVersion, data: dict, creating: bool) -> None:
        if creating:
            storage.check_uri(obj.uri)
            local_uri.check(obj.uri, obj.project_id, db.session.get(Project, obj.project_id).namespace)
        if "stage" in data:
            obj.stage = ModelStage(data["stage"])
        if creating and obj.task_run_id is not None:
            # Registered from a run: its parameters and metrics, the call's own over them.
            summary = run_summary.merge(run_summary.summarize_run(db.session.get(TaskRun, obj.task_run_id), obj.uri),
                                        data.get("metrics") or {}, data.get("params") or {})
            obj.params, obj.metrics, obj.metric_history = summary.params, summary.metrics, summary.history
        if creating and obj.version is None:
            latest = db.session.scalar(
                sa.select(sa.func.max(ModelVersion.version)).filter_by(project_id=obj.project_id, name=obj.name)
            )
            obj.version = (latest or 0) + 1
        if obj.stage == ModelStage.PRODUCTION and "stage" in data:
            # One production version per model: the one it replaces is archived.
            db.session.execute(sa.update(ModelVersion).where(
                ModelVersion.project_id == obj.project_id, ModelVersion.name == obj.name,
                ModelVersion.stage == ModelStage.PRODUCTION, ModelVersion.id != obj.id,
            ).values(stage=ModelStage.ARCHIVED).execution_options(synchronize_session=False))

    @route("/<int:pk>/metric_history", response=METRIC_HISTORY,
           summary="Each metric's values per step, as the run that registered the version reported them")
    def metric_history(self, pk: int):
        return jsonify(metrics=self.load(pk).metric_history or {})

    def create_blueprint(self, appbuilder: Any, *args: Any, **kwargs: Any) -> Any:
        blueprint = super().create_blueprint(appbuilder, *args, **kwargs)
        blueprint.before_request(self._upload_limit)
        return blueprint

    @staticmethod
    def _upload_limit() -> None:
        """An upload's body may be as large as a model file may be (every other body is bounded by
        MAX_CONTENT_LENGTH); set before anything (the CSRF check) parses the form."""
        if request.endpoint and request.endpoint.endswith(".upload"):
            request.max_content_length = current_app.config["MYAPP_MAX_MODEL_BYTES"]

    @route("/upload", methods=("POST",), permission="write", body=ModelUploadSchema, status=201, response="model",
           summary="Upload a model file (multipart/form-data): stored in the project's model store, registered "
                   "as the next version of the model")
    def upload(self):
        data = upload_fields()
        upload = request.files.get("file")
        if upload is None:
            raise FieldError("file", "a file is required")
        data = ModelVersionSchema().load({**data, "uri": "/"})  # uri: set below, once the file is kept
        self.resolve_parent(data)  # a developer of the project, before anything is written
        project = db.session.get(Project, data["project_id"])
        limit, room = current_app.config["MYAPP_MAX_MODEL_BYTES"], project_caps.storage_room(project)
        why = f" (the room left of the project's {project_caps.STORAGE})" if room is not None and room < limit else ""
        upload.stream.seek(0)  # read whole again when the request runs again (SQLite was locked)
        path, size = store.save(upload.stream, project.namespace, data["name"], upload.filename or "",
                                min(limit, room or limit), why)
        on_rollback(lambda: store.discard(path))  # no version, no file
        on_commit(lambda: project_caps.written(project.namespace, size))
        obj = self.create({**data, "uri": str(path), "files": [{"path": path.name, "size": size}]})
        return jsonify(self.present(obj)), 201

    def _operation(self, path: str, spec: dict[str, Any], body_name: str | None,
                   response: dict[str, Any] | None = None) -> dict[str, Any]:
        operation = super()._operation(path, spec, body_name, response)
        if path.endswith("/upload"):
            operation["requestBody"]["content"] = {
                "multipart/form-data": operation["requestBody"]["content"]["application/json"]}
        return operation

    def before_delete(self, obj: ModelVersion) -> None:
        services = db.session.scalars(sa.select(InferenceService).where(
            InferenceService.project_id == obj.project_id)).all()
        using = [s.name for s in services if obj.id in split.wanted_versions(s.traffic, s.shadow_version_id)
                 or s.model_version_id == obj.id]
        if using:
            raise ApiError(f"model version {obj.id} is served by {', '.join(sorted(using))}: change or delete "
                           "those services first", status=409)
