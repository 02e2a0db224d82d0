"""Notebooks: create, start, stop, delete (a worker acts: myapp/notebooks/lifecycle.py). The member check
the notebook proxy asks, and the hand-off into a notebook's origin, are myapp/web/notebook_gate.py's."""
from __future__ import annotations

import re
from typing import Any

import sqlalchemy as sa
from flask import current_app, jsonify
from marshmallow import fields, validate

from ..errors import FieldError
from ..extensions import db
from ..inputs.fields import DnsLabel, Int, ResourcesSchema, StrictSchema
from ..models import (
    Image,
    ImageBuild,
    JobTemplate,
    Notebook,
    NotebookIntent,
    NotebookState,
    Project,
    ProjectRole,
    Quota,
    ResourceGroup,
    ServiceState,
    utcnow,
)
from ..notebooks import derived_proxy_key, gate
from ..notebooks import states as lifecycle
from ..notebooks.image_choices import GROUPS, choices
from ..rendering import ArgumentError
from ..rendering.quantity import parse_quantity, resolve_resources
from ..shared import reconcile_requests
from .base import Ref, ResourceApi, bounded_int, query_args
from .errors import ApiError
from .responses import BOOLEAN, STRING, TASK_LOGS, array, component, enum_of, nullable, obj
from .routing import on_commit, route
from .scope import check_project, current_user

PROXY_HEADER = "X-Myapp-Notebook-Proxy"
IMAGE_CHOICES = component("NotebookImageChoices", obj({
    "items": array(obj({"image": STRING, "group": enum_of(GROUPS), "environment": BOOLEAN, "description": STRING})),
    "only_defaults": BOOLEAN}))
MAX_LOG_LINES = 10_000
PATH = re.compile(r"/notebook/(?P<project>[a-z0-9]([-a-z0-9]*[a-z0-9])?)/(?P<name>[a-z]([-a-z0-9]*[a-z0-9])?)(/.*)?")
# Columns users see: the attempt's ref, the Jupyter token and the upstream address stay inside.
COLUMNS = ("id", "project_id", "name", "image", "resources", "resource_group_id", "volume", "state", "reason",
           "desired", "url", "started_at", "last_activity_at", "created_by_id", "created_at", "updated_at")


def proxy_key() -> str:
    """What the notebook proxy proves itself with: `myapp run` hands both sides a fresh one
    (MYAPP_NOTEBOOK_PROXY_KEY), else it is derived from the secret key."""
    configured = current_app.config.get("MYAPP_NOTEBOOK_PROXY_KEY")
    if configured:
        return str(configured)
    return derived_proxy_key(str(current_app.config["SECRET_KEY"]))


def enqueue(notebook_id: int) -> None:
    celery = current_app.extensions["celery"]
    celery.send_task("myapp.notebook_reconcile", args=[notebook_id], queue=reconcile_requests.ACTIONS_QUEUE)


def release_notebooks(attempts: list[dict[str, Any]]) -> None:
    """After a project's deletion: a worker stops each notebook it had (lifecycle.project_attempts)."""
    celery = current_app.extensions["celery"]
    for attempt in attempts:
        celery.send_task("myapp.notebook_release", args=[attempt], queue=reconcile_requests.ACTIONS_QUEUE)


class NotebookSchema(StrictSchema):
    project_id = Int(1, required=True)
    # The template's rule: at most 40 characters, so every name derived from it is a valid label.
    name = fields.String(required=True, validate=validate.Regexp(
        r"^[a-z]([-a-z0-9]{0,38}[a-z0-9])?$",
        error="must be a DNS label of at most 40 characters that starts with a letter"))
    image = fields.String(required=True, validate=validate.Length(1, 512))
    resources = fields.Nested(ResourcesSchema)
    resource_group_id = Int(1, allow_none=True)
    volume = DnsLabel(allow_none=True)


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
    columns = COLUMNS
    output_fields = {"url": nullable(STRING)}

    def present(self, obj: Notebook) -> dict[str, Any]:
        out = super().present(obj)
        match = PATH.fullmatch(obj.url or "")
        if match and obj.url:  # where the browser opens it: the notebook's own origin (myapp/notebooks/origins.py)
            out["url"] = gate.origins().origin(match["project"], match["name"]) + obj.url
        return out

    def before_save(self, obj: Notebook, data: dict, creating: bool) -> None:
        # A change applies from the next start (a running notebook keeps what it started with).
        check_image(obj.image, obj.project_id)
        check_resources(obj)
        if creating:
            obj.created_by_id = current_user().id
            obj.state = NotebookState.PENDING
            obj.desired = NotebookIntent.RUNNING
            obj.attempt = 1
            obj.reason = "waiting for a worker"
            obj.requested_at = utcnow()

    def after_create(self, obj: Notebook) -> None:
        notebook_id = obj.id
        on_commit(lambda: enqueue(notebook_id))

    @route("/project/<int:pk>/images", response=IMAGE_CHOICES,
           summary="What a notebook of the project (pk) may run, in the order to offer it: the platform's default "
                   "images, the project's own, the shared catalog; only_defaults: nothing else exists yet")
    def images(self, pk: int):
        check_project(pk, ProjectRole.VIEWER)
        return jsonify(choices(pk))

    @route("/<int:pk>/start", methods=("POST",), permission="write", response="model",
           summary="Start a stopped or failed notebook (a stopping one starts again once stopped; a running one "
                   "is left as it is)")
    def start(self, pk: int):
        nb = self.load(pk, self.write_role)
        if nb.desired == NotebookIntent.DELETED:
            raise ApiError(f"notebook {nb.name} is being deleted", status=409)
        check_image(nb.image, nb.project_id)
        check_resources(nb)
        lifecycle.request_start(nb)
        db.session.flush()
        on_commit(lambda: enqueue(pk))
        return jsonify(self.present(nb))

    @route("/<int:pk>/stop", methods=("POST",), permission="write", response="model",
           summary="Stop a notebook (its work folder is kept)")
    def stop(self, pk: int):
        nb = self.load(pk, self.write_role)
        if nb.desired == NotebookIntent.DELETED:
            raise ApiError(f"notebook {nb.name} is being deleted", status=409)
        lifecycle.request_stop(nb)
        db.session.flush()
        on_commit(lambda: enqueue(pk))
        return jsonify(self.present(nb))

    @route("/<int:pk>", methods=("DELETE",), permission="write",
           summary="Delete a notebook: a worker stops it, removes its work folder, then its row",
           response=obj({"message": STRING}))
    def delete(self, pk: int):
        nb = self.load(pk, self.write_role)
        lifecycle.request_delete(nb)
        db.session.flush()
        on_commit(lambda: enqueue(pk))
        return jsonify(message=f"notebook {pk} is being deleted")

    @route("/<int:pk>/log", summary="JupyterLab's log: live while it runs, its last attempt's once stopped",
           query={"limit": f"the last N lines (default 1000, at most {MAX_LOG_LINES})"}, response=TASK_LOGS)
    def log(self, pk: int):
        from ..pipelines.observation import line_json, read_notebook_lines

        nb = self.load(pk)
        limit = bounded_int(query_args({"limit"}), "limit", 1000, 1, MAX_LOG_LINES)
        page = read_notebook_lines(nb, limit)
        return jsonify(replicas=page.replicas, items=[line_json(ln) for ln in page.lines])


def check_image(image: str, project_id: int) -> None:
    """A notebook's image ("repository:tag") is in the catalog, shared or its project's own, or being
    built for its project (the notebook waits `pulling`); FieldError names `image`."""
    repository, _, tag = image.rpartition(":")
    if repository and image_known(repository, tag, project_id):
        return
    raise FieldError("image", f"image {image!r} is not in the catalog (give repository:tag of a registered "
                              "image, or build one)")


def image_known(repository: str, tag: str, project_id: int) -> bool:
    registered = sa.select(Image.id).where(Image.repository == repository, Image.tag == tag,
                                           Image.visible_to(project_id))
    building = sa.select(ImageBuild.id).where(
        ImageBuild.project_id == project_id, ImageBuild.repository == repository, ImageBuild.tag == tag,
        ImageBuild.state.in_((ServiceState.PENDING, ServiceState.RUNNING)))
    return db.session.scalar(registered.limit(1)) is not None or db.session.scalar(building.limit(1)) is not None


def check_resources(nb: Notebook) -> None:
    """Resources within the notebook template's maximum and the project's quota in its group."""
    template = db.session.scalar(sa.select(JobTemplate).filter_by(name=lifecycle.TEMPLATE)
                                 .order_by(JobTemplate.id.desc()).limit(1))
    if template is None:
        return  # no catalog yet (`myapp init` registers it): the worker's start fails saying so
    try:
        wanted = resolve_resources(template.default_resources, template.max_resources, nb.resources or None)
    except ArgumentError as exc:
        field = exc.field if exc.field.startswith("resources") else f"resources.{exc.field}"
        raise FieldError(field, exc.reason) from None
    if nb.resource_group_id is None:
        return
    quota = db.session.scalar(sa.select(Quota).filter_by(project_id=nb.project_id,
                                                         resource_group_id=nb.resource_group_id))
    if quota is None:
        return
    asked = {"cpu": parse_quantity(wanted.cpu) * 1000, "memory": parse_quantity(wanted.memory), "gpu": wanted.gpu}
    limits = {"cpu": quota.cpu_millicores, "memory": quota.memory_bytes, "gpu": quota.gpus}
    for key, amount in asked.items():
        if amount > limits[key]:
            raise FieldError(f"resources.{key}", f"{_shown(key, amount)} is over the project's quota in this "
                                                 f"resource group ({_shown(key, limits[key])})")


def _shown(key: str, amount: Any) -> str:
    if key == "cpu":
        return f"{float(amount) / 1000:g} CPU"
    if key == "memory":
        return f"{float(amount) / 2**30:g} GiB"
    return f"{int(amount)} GPU(s)"
