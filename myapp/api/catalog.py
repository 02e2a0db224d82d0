"""Images and job templates: every user reads the catalog, admins add to it."""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from marshmallow import ValidationError, fields, validate, validates

from ..inputs.fields import DnsLabel, ImageRepository, ImageTag, ResourcesSchema, StrictSchema, StringMap
from ..models import Image, JobTemplate, ProjectRole
from ..outputs.declarations import OUTPUTS_KEY, OutputError, check_declaration
from ..rendering.args import SchemaError, check_property
from ..rendering.catalog import template_resources
from ..rendering.kinds import KINDS, pipeline_refusal
from .base import ResourceApi
from .errors import FieldError, NotFound
from .id_list import in_ids
from .images import forget_environment
from .responses import ARGS_SCHEMA, BOOLEAN
from .scope import check_project, visible_project_ids


class ImageSchema(StrictSchema):
    repository = ImageRepository(required=True)
    tag = ImageTag(required=True)
    pull_secret = DnsLabel(allow_none=True)
    description = fields.String(validate=validate.Length(max=10_000))


class ImageApi(ResourceApi):
    resource_name = "image"
    class_permission_name = "Image"
    model = Image
    schema = ImageSchema
    label = "image"
    scope = "catalog"
    filters = ("repository", "tag", "project_id")
    orders = ("id", "repository")

    # A project's images (its builds registered them) are seen by its members alone; the rest by everyone.
    def scope_projects(self) -> list[int] | None:
        return visible_project_ids()

    @classmethod
    def scope_condition(cls) -> sa.ColumnElement:
        return sa.or_(Image.__table__.c.project_id.is_(None), in_ids(Image.__table__.c.project_id, "scope_projects"))

    def load(self, pk: int, needed: ProjectRole = ProjectRole.VIEWER) -> Any:
        image = super().load(pk, needed)
        if image.project_id is not None:
            check_project(image.project_id, needed, NotFound(self.label, pk))
        return image

    def before_delete(self, obj: Image) -> None:
        forget_environment(obj)  # its local environment's index entry goes with it (docs/images.md)


class JobTemplateSchema(StrictSchema):
    name = DnsLabel(required=True)
    version = fields.String(required=True, validate=validate.Regexp(
        r"^[0-9A-Za-z][0-9A-Za-z.+-]{0,31}$", error="must be a version such as 1.0.0"))
    description = fields.String(validate=validate.Length(max=10_000))
    category = DnsLabel()
    kind = fields.String(required=True, validate=validate.OneOf(sorted(KINDS)))
    image = fields.String(required=True, validate=validate.Length(1, 512))
    command = fields.List(fields.String())
    args_schema = fields.Dict()
    default_resources = fields.Nested(ResourcesSchema)
    max_resources = fields.Nested(ResourcesSchema)
    env = StringMap()

    @validates("args_schema")
    def valid_args_schema(self, value: dict[str, Any], **_: Any) -> None:
        properties = value.get("properties", {})
        if not isinstance(properties, dict):
            raise ValidationError("properties must be a mapping of argument name to schema")
        try:
            for name, prop in properties.items():
                check_property(name, prop)
        except SchemaError as exc:
            raise ValidationError(f"{exc.field}: {exc.reason}") from exc
        try:
            check_declaration(value.get(OUTPUTS_KEY))
        except OutputError as exc:
            raise ValidationError(f"{exc.field}: {exc.reason}") from exc


class JobTemplateApi(ResourceApi):
    resource_name = "job_template"
    class_permission_name = "JobTemplate"
    model = JobTemplate
    schema = JobTemplateSchema
    label = "job template"
    scope = "catalog"
    filters = ("name", "kind", "category", "builtin")
    orders = ("id", "name", "category")
    immutable = ("name", "version", "kind")
    # pipeline_step: whether a pipeline task may use it (the editor's palette offers only those).
    output_fields = {"args_schema": ARGS_SCHEMA, "pipeline_step": BOOLEAN}

    def present(self, obj: JobTemplate) -> dict[str, Any]:
        return super().present(obj) | {"pipeline_step": pipeline_refusal(obj.kind) is None}

    def before_save(self, obj: JobTemplate, data: dict[str, Any], creating: bool) -> None:
        # As strict as the catalog's files: a template without a default cpu and memory would only
        # fail later, at every task or notebook that uses it.
        def fail(field: str, reason: str) -> FieldError:
            section, _, rest = field.removeprefix("resources.").partition(".")
            return FieldError(f"{section}_resources" + (f".{rest}" if rest else ""), reason)
        # An empty maximum stays "no maximum".
        default, maximum = template_resources(
            {"default": obj.default_resources or {}, "max": obj.max_resources or obj.default_resources or {}}, fail)
        obj.default_resources, obj.max_resources = default, maximum if obj.max_resources else {}
