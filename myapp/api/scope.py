"""Project scope: which projects the caller belongs to, and with which role.

A project the caller does not belong to does not exist for them (404); a project
they see but whose role is too low for the action is forbidden (403).
"""
from __future__ import annotations

import sqlalchemy as sa
from flask import current_app, g

from ..extensions import cache, db
from ..models import ProjectMember, ProjectRole
from .errors import Forbidden, NotFound


def current_user():
    return current_app.appbuilder.sm.current_user


def is_admin() -> bool:
    if "_myapp_is_admin" not in g:
        g._myapp_is_admin = current_app.appbuilder.sm.is_admin(current_user())
    return g._myapp_is_admin


MEMBERSHIP_TTL = 60  # seconds; a bound even if an invalidation were lost


def _membership_key(user_id: int) -> str:
    return f"memberships:{user_id}"


def memberships() -> dict[int, ProjectRole]:
    """{project_id: role} for the caller: once per request, from the shared cache when there."""
    if "_myapp_memberships" not in g:
        user = current_user()
        cached = cache.get(_membership_key(user.id)) if user else {}
        if cached is None:
            rows = db.session.execute(
                sa.select(ProjectMember.project_id, ProjectMember.role).where(ProjectMember.user_id == user.id)
            ).all()
            cached = {pid: role.value for pid, role in rows}
            cache.set(_membership_key(user.id), cached, timeout=MEMBERSHIP_TTL)
        g._myapp_memberships = {int(pid): ProjectRole(role) for pid, role in cached.items()}
    return g._myapp_memberships


def forget_memberships(*user_ids: int) -> None:
    """Call (through routing.on_commit) whenever someone's memberships change."""
    cache.delete_many(*[_membership_key(uid) for uid in user_ids])


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

