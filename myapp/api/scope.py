"""Project scope: which projects the caller belongs to, and with which role.

A project the caller does not belong to does not exist for them (404); a project
they see but whose role is too low for the action is forbidden (403).
"""
from __future__ import annotations

import sqlalchemy as sa
from flask import current_app, g

from ..extensions import db
from ..models import Project, ProjectMember, ProjectRole
from .errors import Forbidden, NotFound


def current_user():
    return current_app.appbuilder.sm.current_user


def is_admin() -> bool:
    if "_myapp_is_admin" not in g:
        g._myapp_is_admin = current_app.appbuilder.sm.is_admin(current_user())
    return g._myapp_is_admin


def memberships() -> dict[int, ProjectRole]:
    """{project_id: role} for the caller, read once per request."""
    if "_myapp_memberships" not in g:
        user = current_user()
        rows = db.session.execute(
            sa.select(ProjectMember.project_id, ProjectMember.role).where(ProjectMember.user_id == user.id)
        ).all() if user else []
        g._myapp_memberships = {pid: role for pid, role in rows}
    return g._myapp_memberships


def visible_project_ids() -> list[int] | None:
    """None means every project (admins)."""
    return None if is_admin() else list(memberships())


def check_project(project_id: int, needed: ProjectRole, missing: NotFound | None = None) -> None:
    """missing: the error to raise for a non-member, so it names what they asked for."""
    if is_admin():
        return
    role = memberships().get(project_id)
    if role is None:
        raise missing or NotFound("project", project_id)
    if not role.allows(needed):
        raise Forbidden(f"your role in this project is {role.value}; this needs {needed.value}")


def get_project(project_id: int, needed: ProjectRole) -> Project:
    check_project(project_id, needed)
    project = db.session.get(Project, project_id)
    if project is None:
        raise NotFound("project", project_id)
    return project
