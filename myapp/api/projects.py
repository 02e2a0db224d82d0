"""Projects and their members."""
from __future__ import annotations

import functools

import sqlalchemy as sa
from flask import jsonify
from marshmallow import fields, validate

from ..extensions import db
from ..inputs.fields import DnsLabel, Int, StrictSchema
from ..models import PipelineRun, Project, ProjectMember, ProjectRole, User
from ..notebooks.states import project_attempts
from ..pipelines.release import project_builds, project_runs
from ..projects.work import running_work
from ..rendering.context import reserved_namespace
from ..serving.release import project_services
from .base import ResourceApi
from .errors import FieldError, NotFound
from .notebooks import release_notebooks
from .pipelines import forget_folders, release_runs
from .responses import MEMBER, MEMBERS, MESSAGE, RUNNING_WORK, STRING
from .routing import json_body, on_commit, route
from .scope import check_person, current_user, forget_memberships
from .serving import release_services

ROLES = [r.value for r in ProjectRole]
# Demoting or removing the last owner answers 409 naming the member's `role`.
LAST_OWNER = "this is the project's last owner: a project keeps at least one owner (make another member owner first)"


class ProjectSchema(StrictSchema):
    name = DnsLabel(required=True)
    description = fields.String(validate=validate.Length(max=10_000))
    namespace = DnsLabel()
    # Seconds without kernel or terminal activity before its notebooks are stopped; null: the platform's
    # default, 0: never (myapp/notebooks/activity.py).
    notebook_idle_timeout = Int(0, 365 * 24 * 3600, allow_none=True)


class MemberSchema(StrictSchema):
    username = fields.String(required=True, validate=validate.Length(1, 256))
    role = fields.String(required=True, validate=validate.OneOf(ROLES))


class MemberRoleSchema(StrictSchema):
    role = fields.String(required=True, validate=validate.OneOf(ROLES))


def present_member(member: ProjectMember) -> dict:
    return {"id": member.id, "user_id": member.user_id, "username": member.user.username,
            "role": member.role.value}


class ProjectApi(ResourceApi):
    resource_name = "project"
    class_permission_name = "Project"
    model = Project
    schema = ProjectSchema
    label = "project"
    filters = ("name",)
    orders = ("id", "name", "created_at")
    immutable = ("name", "namespace")
    write_role = ProjectRole.OWNER
    output_fields = {"service_account": STRING}

    def present(self, obj: Project) -> dict:
        out = super().present(obj)
        out["service_account"] = obj.service_account
        return out

    def resolve_parent(self, data: dict) -> None:
        """Any signed-in person may start a project; they become its owner (a run's token may not)."""
        check_person("start a project")
        data.setdefault("namespace", data["name"])
        reserved = reserved_namespace(data["namespace"])
        if reserved:  # also when defaulted from the name; rendering refuses it again (context.py)
            raise FieldError("namespace", f"{reserved}; choose another namespace")
        return None

    def after_create(self, obj: Project) -> None:
        user_id = current_user().id
        db.session.add(ProjectMember(project_id=obj.id, user_id=user_id, role=ProjectRole.OWNER))
        on_commit(lambda: forget_memberships(user_id))

    def before_delete(self, obj: Project) -> None:
        # Its row first, written (PostgreSQL: its row's lock; SQLite: the one writer's): a controller submitting
        # a job of the project holds a share of it until its commit (pipelines/backend_calls.project_kept), and
        # none starts once this is taken; then its runs' rows, the controllers' lock, in their order (a pass
        # under way ends first, none waits on this delete): what its runs started is read below after any such
        # commit, and the rows go without a deadlock.
        self._take_turns(obj.id)
        db.session.execute(sa.select(PipelineRun.id).where(PipelineRun.project_id == obj.id)
                           .order_by(PipelineRun.id).with_for_update())
        user_ids = db.session.scalars(sa.select(ProjectMember.user_id).filter_by(project_id=obj.id)).all()
        on_commit(lambda: forget_memberships(*user_ids))
        # Its notebooks' rows go with it: a worker stops what they run and removes their folders.
        on_commit(functools.partial(release_notebooks, project_attempts(obj.id)))
        # And its inference services': a worker stops their servers (myapp/serving/release.py).
        on_commit(functools.partial(release_services, project_services(obj.id)))
        # And its unfinished runs' jobs and Kaniko builds: a worker cancels them (myapp/pipelines/release.py).
        on_commit(functools.partial(release_runs, project_runs(obj.id) + project_builds(obj.id)))
        # And every run's outputs and checkpoint folders (the unfinished ones' once their jobs are stopped).
        forget_folders(PipelineRun.project_id == obj.id, obj.namespace)

    @route("/<int:pk>/running", summary="What the project runs now (runs, notebooks, model servers, image "
           "builds): what deleting it stops", response=RUNNING_WORK)
    def running(self, pk: int):
        self.load(pk)
        return jsonify(running_work(pk))

    def _member(self, pk: int, member_id: int) -> ProjectMember:
        member = db.session.get(ProjectMember, member_id)
        if member is None or member.project_id != pk:
            raise NotFound("member", member_id)
        return member

    def _take_turns(self, pk: int) -> None:
        """Role changes and removals of one project's members take turns: each writes the project's row
        first (the lock; the value stays), so two owners demoting each other at once cannot both count
        the other as the owner left."""
        table = Project.__table__
        db.session.execute(sa.update(table).where(table.c.id == pk).values(updated_at=table.c.updated_at))

    def _owners_left(self, pk: int, without: int) -> int:
        return db.session.scalar(
            sa.select(sa.func.count()).select_from(ProjectMember).where(
                ProjectMember.project_id == pk, ProjectMember.role == ProjectRole.OWNER,
                ProjectMember.id != without,
            )
        )

    @route("/<int:pk>/members", summary="List the project's members and their roles", response=MEMBERS)
    def list_members(self, pk: int):
        self.load(pk)
        members = db.session.scalars(
            sa.select(ProjectMember).where(ProjectMember.project_id == pk).order_by(ProjectMember.id)
        ).all()
        return jsonify(items=[present_member(m) for m in members])

    @route("/<int:pk>/members", methods=("POST",), permission="write", body=MemberSchema, status=201,
           summary="Add a member (owners only)", response=MEMBER)
    def add_member(self, pk: int):
        self.load(pk, ProjectRole.OWNER)
        data = MemberSchema().load(json_body())
        user = db.session.scalar(sa.select(User).where(User.username == data["username"]))
        if user is None:
            raise FieldError("username", f"no user named {data['username']!r}", status=404)
        exists = db.session.scalar(sa.select(ProjectMember.id).filter_by(project_id=pk, user_id=user.id))
        if exists:
            raise FieldError("username", "is already a member", status=409)
        member = ProjectMember(project_id=pk, user_id=user.id, role=ProjectRole(data["role"]))
        db.session.add(member)
        db.session.flush()
        on_commit(lambda: forget_memberships(user.id))
        return jsonify(present_member(member)), 201

    @route("/<int:pk>/members/<int:member_id>", methods=("PUT",), permission="write", body=MemberRoleSchema,
           summary="Change a member's role (owners only)", response=MEMBER)
    def update_member(self, pk: int, member_id: int):
        self.load(pk, ProjectRole.OWNER)
        self._take_turns(pk)
        member = self._member(pk, member_id)
        role = ProjectRole(MemberRoleSchema().load(json_body())["role"])
        if member.role == ProjectRole.OWNER and role != ProjectRole.OWNER and not self._owners_left(pk, member.id):
            raise FieldError("role", LAST_OWNER, status=409)
        member.role = role
        db.session.flush()
        user_id = member.user_id
        on_commit(lambda: forget_memberships(user_id))
        return jsonify(present_member(member))

    @route("/<int:pk>/members/<int:member_id>", methods=("DELETE",), permission="write",
           summary="Remove a member (owners only)", response=MESSAGE)
    def remove_member(self, pk: int, member_id: int):
        self.load(pk, ProjectRole.OWNER)
        self._take_turns(pk)
        member = self._member(pk, member_id)
        if member.role == ProjectRole.OWNER and not self._owners_left(pk, member.id):
            raise FieldError("role", LAST_OWNER, status=409)
        user_id = member.user_id
        db.session.delete(member)
        on_commit(lambda: forget_memberships(user_id))
        return jsonify(message=f"member {member_id} removed")
