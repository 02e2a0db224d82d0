"""Image builds of a project: ask for one (Dockerfile, base + packages, a notebook's snapshot), follow
its state and log, see its history and which notebooks, templates and tasks use the image.

The web stores the build pending and enqueues ``myapp.build_image``; a worker builds it (myapp/images/).
Admission-free: a build is small and short.
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from flask import current_app, jsonify, request
from marshmallow import ValidationError, fields, validate, validates_schema

from ..errors import FieldError, Kind
from ..extensions import db
from ..images import credentials, environments
from ..images.dockerfile import APT_PACKAGE, IMAGE
from ..images.environments import check_requirements, parse_requirements
from ..images.logs import log_path, read_lines
from ..inputs.fields import ImageRepository, ImageTag, Int, StrictSchema
from ..models import (
    BuildSource,
    Image,
    ImageBuild,
    JobTemplate,
    Notebook,
    Project,
    ProjectRole,
    ResourceGroup,
    ServiceState,
    Task,
)
from .base import Ref, ResourceApi, bounded_int, query_args
from .errors import NotFound
from .pipelines import enqueue
from .responses import BOOLEAN, INTEGER, STRING, array, component, enum_of, nullable, obj
from .routing import json_body, on_commit, route
from .scope import check_project, current_user, visible_project_ids

MAX_LOG_LINES = 20_000
BUILD_LINE = component("BuildLogLine", obj({"seq": INTEGER, "line": STRING}))
_STATE = enum_of(ServiceState)
BUILD_LOG = component("BuildLog", obj({"state": _STATE, "reason": nullable(STRING), "items": array(BUILD_LINE)}))
BUILD_LOG_EVENTS = {"oneOf": [BUILD_LOG], "description": "`lines` events: BuildLog (new lines); `end`: BuildLog "
                                                         "(no lines) once the build has finished"}
REGISTRY_CREDENTIALS = component("RegistryCredentialsState", obj({
    "set": BOOLEAN, "registry": nullable(STRING), "updated_at": nullable(STRING)}))
IMAGE_USAGE = component("ImageUsage", obj({
    "image": STRING,
    "notebooks": array(obj({"id": INTEGER, "name": STRING, "project_id": INTEGER})),
    "templates": array(obj({"id": INTEGER, "name": STRING, "version": STRING})),
    "tasks": array(obj({"id": INTEGER, "name": STRING, "pipeline_id": INTEGER})),
}))


class ImageBuildSchema(StrictSchema):
    project_id = Int(1, required=True)
    repository = ImageRepository(required=True)
    tag = ImageTag(required=True)
    source = fields.String(validate=validate.OneOf([s.value for s in BuildSource]))
    base_image = fields.String(allow_none=True, validate=validate.Regexp(
        f"^(?:{IMAGE.pattern})$", error="must be an image such as python:3.11-slim"))
    dockerfile = fields.String(allow_none=True, validate=validate.Length(1, 100_000))
    packages = fields.List(fields.String(validate=validate.Length(1, 200)), validate=validate.Length(max=1000))
    requirements = fields.String(validate=validate.Length(max=100_000))  # a requirements.txt, merged into packages
    apt_packages = fields.List(fields.String(validate=validate.Regexp(
        f"^(?:{APT_PACKAGE.pattern})$", error="must be a Debian package name such as libgomp1")),
        validate=validate.Length(max=200))
    resource_group_id = Int(1, allow_none=True)
    notebook_id = Int(1, allow_none=True)

    @validates_schema
    def one_source(self, data: dict[str, Any], **_: Any) -> None:
        source = data.get("source") or _source_of(data)
        if source == BuildSource.DOCKERFILE.value and not data.get("dockerfile"):
            raise ValidationError("a dockerfile build needs the Dockerfile", "dockerfile")
        if source != BuildSource.DOCKERFILE.value and data.get("dockerfile"):
            raise ValidationError(f"a {source} build takes no dockerfile", "dockerfile")
        if source == BuildSource.NOTEBOOK.value and not data.get("notebook_id"):
            raise ValidationError("a notebook build names the notebook to snapshot", "notebook_id")
        if source != BuildSource.NOTEBOOK.value and data.get("notebook_id"):
            raise ValidationError(f"a {source} build takes no notebook", "notebook_id")
        if source != BuildSource.PACKAGES.value:
            extra = next((f for f in ("packages", "requirements", "apt_packages") if data.get(f)), None)
            if extra:
                raise ValidationError(f"a {source} build takes no {extra}: the {source} says what is installed",
                                      extra)
        if source == BuildSource.PACKAGES.value and not (data.get("packages") or data.get("requirements")
                                                         or data.get("apt_packages")):
            raise ValidationError("give packages, requirements or apt_packages (or a dockerfile)", "packages")


def _source_of(data: dict[str, Any]) -> str:
    if data.get("dockerfile"):
        return BuildSource.DOCKERFILE.value
    if data.get("notebook_id"):
        return BuildSource.NOTEBOOK.value
    return BuildSource.PACKAGES.value


class RegistryCredentialsSchema(StrictSchema):
    registry = fields.String(required=True, validate=validate.Length(1, 253))
    username = fields.String(required=True, validate=validate.Length(1, 255))
    password = fields.String(required=True, load_only=True, validate=validate.Length(1, 4096))


class ImageBuildApi(ResourceApi):
    resource_name = "image_build"
    class_permission_name = "ImageBuild"
    model = ImageBuild
    schema = ImageBuildSchema
    label = "image build"
    parent = ("project_id", Project)
    refs = {"resource_group_id": Ref(ResourceGroup, "resource group", same_project=False),
            "notebook_id": Ref(Notebook, "notebook")}
    filters = ("project_id", "state", "source", "repository", "tag")
    orders = ("id", "created_at")
    exclude_route_methods = {"put"}

    @route("/", methods=("POST",), permission="write", body="schema", status=201,
           summary="Ask for a build: stored pending, built by a worker", response="model")
    def post(self):
        data = self.body_schema().load(json_body())
        project_id = data["project_id"] = self.resolve_parent(data)
        assert project_id is not None  # the parent is a project
        self.check_refs(data, project_id)
        packages = list(data.pop("packages", None) or [])
        packages += parse_requirements(data.pop("requirements", None) or "")
        data["packages"] = check_requirements(packages, "packages")
        data["apt_packages"] = sorted(set(data.get("apt_packages") or []))
        data["source"] = BuildSource(data.get("source") or _source_of(data))
        self._check_name(data, project_id)
        build = ImageBuild(**data, created_by_id=current_user().id)
        db.session.add(build)
        db.session.flush()
        build_id = build.id
        on_commit(lambda: enqueue("myapp.build_image", build_id))
        return jsonify(self.present(build)), 201

    @staticmethod
    def _check_name(data: dict[str, Any], project_id: int) -> None:
        """The image's name is free or already the project's; one build of it at a time."""
        image = db.session.scalar(sa.select(Image).filter_by(repository=data["repository"], tag=data["tag"]))
        if image is not None and image.project_id != project_id:
            raise FieldError("tag", f"{data['repository']}:{data['tag']} is already in the catalog (of another "
                                    "project, or shared): choose another repository or tag", kind=Kind.CONFLICT)
        busy = db.session.scalar(sa.select(ImageBuild.id).filter_by(
            project_id=project_id, repository=data["repository"], tag=data["tag"])
            .where(ImageBuild.state.in_([ServiceState.PENDING, ServiceState.RUNNING])).limit(1))
        if busy is not None:
            raise FieldError("tag", f"image build {busy} of {data['repository']}:{data['tag']} is still going",
                             kind=Kind.CONFLICT)

    def before_delete(self, obj: ImageBuild) -> None:
        if not obj.is_finished:
            raise FieldError("state", f"build {obj.id} is {obj.state.value}: wait until it has finished",
                             kind=Kind.CONFLICT)
        path = log_path(current_app.config["INSTANCE_PATH"], obj.id)
        on_commit(lambda: path.unlink(missing_ok=True))

    @route("/<int:pk>/log", summary="The build's log (kept after it ended); ?after=N: the lines after line N",
           query={"after": "line number already seen (0: from the start)",
                  "limit": f"at most this many lines (default 5000, at most {MAX_LOG_LINES})"}, response=BUILD_LOG)
    def log(self, pk: int):
        build = self.load(pk)
        args = query_args({"after", "limit"})
        after = bounded_int(args, "after", 0, 0, 10**9)
        limit = bounded_int(args, "limit", 5000, 1, MAX_LOG_LINES)
        items = read_lines(log_path(current_app.config["INSTANCE_PATH"], pk), after, limit)
        return jsonify(state=build.state.value, reason=build.reason, items=items)

    @route("/<int:pk>/log_stream", summary="Server-sent events: `lines` as the build writes them, `end` when done",
           response=BUILD_LOG_EVENTS, media_type="text/event-stream")
    def log_stream(self, pk: int):
        from .streams import sse_response

        self.load(pk)
        after = request.headers.get("Last-Event-ID", "0")
        start = int(after) if after.isascii() and after.isdigit() and len(after) < 12 else 0
        return sse_response(build_log_events(pk, log_path(current_app.config["INSTANCE_PATH"], pk), start))

    @route("/<int:pk>/usage", summary="Which notebooks, job templates and pipeline tasks use the built image",
           response=IMAGE_USAGE)
    def usage(self, pk: int):
        build = self.load(pk)
        return jsonify(image_usage(build.reference, build.project_id))

    # A project's registry credentials (myapp/images/credentials.py): owners set or clear them, members
    # see whether they are set and for which registry; the credentials themselves are never answered.
    @route("/project/<int:pk>/registry_credentials", summary="Whether the project (pk) has push credentials, and for "
           "which registry", response=REGISTRY_CREDENTIALS)
    def registry_credentials(self, pk: int):
        _project(pk, ProjectRole.VIEWER)
        return _no_store(jsonify(credentials.describe(pk)))

    @route("/project/<int:pk>/registry_credentials", methods=("PUT",), permission="write",
           body=RegistryCredentialsSchema, response=REGISTRY_CREDENTIALS,
           summary="Set the project's (pk) push credentials for Kaniko builds (owners); stored sealed")
    def set_registry_credentials(self, pk: int):
        _project(pk, ProjectRole.OWNER)
        data = RegistryCredentialsSchema().load(json_body())
        credentials.store(pk, data["registry"], data["username"], data["password"])
        db.session.flush()
        return _no_store(jsonify(credentials.describe(pk)))

    @route("/project/<int:pk>/registry_credentials", methods=("DELETE",), permission="write",
           summary="Forget the project's (pk) push credentials (owners)", response=REGISTRY_CREDENTIALS)
    def clear_registry_credentials(self, pk: int):
        _project(pk, ProjectRole.OWNER)
        if not credentials.clear(pk):
            raise NotFound("registry credentials of project", pk)
        db.session.flush()
        return _no_store(jsonify(credentials.describe(pk)))


def _project(project_id: int, needed: ProjectRole) -> None:
    missing = NotFound("project", project_id)
    if db.session.get(Project, project_id) is None:
        raise missing
    check_project(project_id, needed, missing)


def _no_store(response: Any) -> Any:
    response.headers["Cache-Control"] = "no-store"
    return response


def forget_environment(image: Image) -> None:
    """A project's image leaves the catalog (`DELETE /api/v1/image/{id}`): once that commits, local jobs
    and notebooks no longer find its environment, which goes too when no other image has its content."""
    if image.project_id is None:
        return  # a shared image stands for no environment: builds register their project's images only
    namespace = db.session.get(Project, image.project_id).namespace
    root, reference = environments.default_root(), f"{image.repository}:{image.tag}"

    def forget() -> None:
        environments.forget(root, namespace, reference)

    on_commit(forget)


def image_usage(reference: str, project_id: int) -> dict[str, Any]:
    """Users of an image the caller may see: the project's notebooks and tasks (a task's chosen ``image``, or
    an ``image`` argument), the catalog's templates."""
    projects = visible_project_ids()
    notebooks = db.session.execute(sa.select(Notebook.id, Notebook.name, Notebook.project_id)
                                   .filter_by(image=reference, project_id=project_id).order_by(Notebook.id))
    templates = db.session.execute(sa.select(JobTemplate.id, JobTemplate.name, JobTemplate.version)
                                   .filter_by(image=reference).order_by(JobTemplate.name))
    tasks = []
    if projects is None or project_id in projects:
        rows = db.session.execute(sa.select(Task.id, Task.name, Task.pipeline_id, Task.args, Task.image)
                                  .filter_by(project_id=project_id).order_by(Task.id))
        tasks = [{"id": r.id, "name": r.name, "pipeline_id": r.pipeline_id} for r in rows
                 if r.image == reference or (isinstance(r.args, dict) and r.args.get("image") == reference)]
    return {"image": reference,
            "notebooks": [{"id": r.id, "name": r.name, "project_id": r.project_id} for r in notebooks],
            "templates": [{"id": r.id, "name": r.name, "version": r.version} for r in templates],
            "tasks": tasks}


def build_log_events(build_id: int, path, after: int):
    """`lines` events with the lines after ``after`` (the event id is the last line's number), `end` once
    the build has finished and every line is out."""
    from .streams import event, poll

    cursor = after

    def step() -> tuple[list[str], bool]:
        nonlocal cursor
        build = db.session.get(ImageBuild, build_id, populate_existing=True)
        if build is None:
            return [event("end", {"state": "failed", "reason": "deleted", "items": []})], True
        finished = build.is_finished  # read before the lines: a finished build has written them all
        items = read_lines(path, cursor, MAX_LOG_LINES)
        events = []
        if items:
            cursor = items[-1]["seq"]
            events.append(event("lines", {"state": build.state.value, "reason": build.reason, "items": items},
                                event_id=str(cursor)))
        if finished and len(items) < MAX_LOG_LINES:
            events.append(event("end", {"state": build.state.value, "reason": build.reason, "items": []},
                                event_id=str(cursor)))
            return events, True
        return events, False

    return poll(step)

