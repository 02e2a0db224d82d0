"""Notebooks, model versions, inference services and image builds of a project."""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from marshmallow import ValidationError, fields, validate, validates_schema

from ..extensions import db
from ..fields import DnsLabel, ImageRepository, ImageTag, Int, ResourcesSchema, StrictSchema
from ..models import (
    ImageBuild,
    InferenceService,
    ModelVersion,
    Notebook,
    Project,
    ResourceGroup,
    TaskRun,
)
from .base import Ref, ResourceApi
from .scope import current_user


class NotebookSchema(StrictSchema):
    project_id = Int(1, required=True)
    name = DnsLabel(required=True)
    image = fields.String(required=True, validate=validate.Length(1, 512))
    resources = fields.Nested(ResourcesSchema)
    resource_group_id = Int(1, allow_none=True)


class NotebookApi(ResourceApi):
    resource_name = "notebook"
    class_permission_name = "Notebook"
    model = Notebook
    schema = NotebookSchema
    label = "notebook"
    parent = ("project_id", Project)
    refs = {"resource_group_id": Ref(ResourceGroup, "resource group", same_project=False)}
    filters = ("project_id", "name", "state")
    orders = ("id", "name")
    immutable = ("name",)

    def before_save(self, obj: Notebook, data: dict, creating: bool) -> None:
        if creating:
            obj.created_by_id = current_user().id


class ModelVersionSchema(StrictSchema):
    project_id = Int(1, required=True)
    name = DnsLabel(required=True)
    version = Int(1)
    uri = fields.String(required=True, validate=validate.Length(1, 2048))
    framework = fields.String(validate=validate.OneOf(["pytorch", "tensorflow", "xgboost", "sklearn", "onnx"]))
    metrics = fields.Dict(keys=fields.String(), values=fields.Float())
    task_run_id = Int(1, allow_none=True)


class ModelVersionApi(ResourceApi):
    resource_name = "model_version"
    class_permission_name = "ModelVersion"
    model = ModelVersion
    schema = ModelVersionSchema
    label = "model version"
    parent = ("project_id", Project)
    refs = {"task_run_id": Ref(TaskRun, "task run")}
    filters = ("project_id", "name")
    orders = ("id", "name", "version")
    immutable = ("name", "version", "uri")

    def before_save(self, obj: ModelVersion, data: dict, creating: bool) -> None:
        if creating and obj.version is None:
            latest = db.session.scalar(
                sa.select(sa.func.max(ModelVersion.version)).filter_by(project_id=obj.project_id, name=obj.name)
            )
            obj.version = (latest or 0) + 1


class InferenceServiceSchema(StrictSchema):
    project_id = Int(1, required=True)
    name = DnsLabel(required=True)
    model_version_id = Int(1, required=True)
    min_replicas = Int(0, 100)
    max_replicas = Int(1, 100)
    resources = fields.Nested(ResourcesSchema)
    traffic = fields.Dict(keys=fields.String(validate=validate.Regexp(r"^[0-9]+$")), values=Int(0, 100))

    @validates_schema
    def replicas_in_order(self, data: dict[str, Any], **_: Any) -> None:
        if data.get("min_replicas", 1) > data.get("max_replicas", max(1, data.get("min_replicas", 1))):
            raise ValidationError("must be at least min_replicas", "max_replicas")
        if data.get("traffic") and sum(data["traffic"].values()) != 100:
            raise ValidationError("weights must add up to 100", "traffic")


class InferenceServiceApi(ResourceApi):
    resource_name = "inference_service"
    class_permission_name = "InferenceService"
    model = InferenceService
    schema = InferenceServiceSchema
    label = "inference service"
    parent = ("project_id", Project)
    refs = {"model_version_id": Ref(ModelVersion, "model version")}
    filters = ("project_id", "name", "state")
    orders = ("id", "name")
    immutable = ("name",)


class ImageBuildSchema(StrictSchema):
    project_id = Int(1, required=True)
    repository = ImageRepository(required=True)
    tag = ImageTag(required=True)
    base_image = fields.String(allow_none=True, validate=validate.Length(1, 512))
    dockerfile = fields.String(allow_none=True, validate=validate.Length(1, 100_000))
    packages = fields.List(fields.String(validate=validate.Regexp(
        r"^[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9,._-]+\])?([<>=!~]=?[A-Za-z0-9.*+!-]+)?$",
        error="must be a pip requirement such as numpy==2.1 (no options or URLs)")))

    @validates_schema
    def one_source(self, data: dict[str, Any], partial: Any = None, **_: Any) -> None:
        if partial:
            return
        if bool(data.get("dockerfile")) == bool(data.get("packages")):
            raise ValidationError("give either a dockerfile or a package list", "dockerfile")


class ImageBuildApi(ResourceApi):
    resource_name = "image_build"
    class_permission_name = "ImageBuild"
    model = ImageBuild
    schema = ImageBuildSchema
    label = "image build"
    parent = ("project_id", Project)
    filters = ("project_id", "state")
    exclude_route_methods = {"put"}

    def before_save(self, obj: ImageBuild, data: dict, creating: bool) -> None:
        obj.created_by_id = current_user().id
