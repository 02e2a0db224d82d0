"""Project scope: which projects the caller belongs to, and with which role.

A project the caller does not belong to does not exist for them (404); a project
they see but whose role is too low for the action is forbidden (403).
"""
from __future__ import annotations

import sqlalchemy as sa
from flask import g

from ..claims import PROJECT_CLAIM
from ..extensions import appbuilder, cache, db
from ..models import ProjectMember, ProjectRole
from ..security import run_claims
from .errors import ApiError, Forbidden, NotFound


def current_user():
    return appbuilder.sm.current_user


def is_admin() -> bool:
    if "_myapp_is_admin" not in g:
        # A run token is never an admin, whatever its identity's roles.
        g._myapp_is_admin = run_claims() is None and appbuilder.sm.is_admin(current_user())
    return g._myapp_is_admin


MEMBERSHIP_TTL = 60  # seconds; a bound even if an invalidation were lost


def _membership_key(user_id: int) -> str:
    return f"memberships:{user_id}"


def memberships() -> dict[int, ProjectRole]:
    """{project_id: role} for the caller: once per request, from the shared cache when there."""
    if "_myapp_memberships" not in g:
        claims = run_claims()
        if claims is not None:  # a run token: a developer of its run's project, nothing else, whoever it acts as
            g._myapp_memberships = {int(claims[PROJECT_CLAIM]): ProjectRole.DEVELOPER}
            return g._myapp_memberships
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


def check_person(action: str) -> None:
    """Refuse what only a person may do: a run token acts in its run's project and nowhere else."""
    if run_claims() is not None:
        raise Forbidden(f"a run's token acts in its run's project only: it cannot {action}")


def check_project(project_id: int, needed: ProjectRole, missing: ApiError | None = None) -> None:
    """missing: the error to raise for a non-member, so it names what they asked for."""
    if is_admin():
        return
    role = memberships().get(project_id)
    if role is None:
        raise missing or NotFound("project", project_id)
    if not role.allows(needed):
        raise Forbidden(f"your role in this project is {role.value}; this needs {needed.value}")

