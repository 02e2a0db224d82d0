"""Project scope: which projects the caller belongs to, and with which role.

A project the caller does not belong to does not exist for them (404); a project
they see but whose role is too low for the action is forbidden (403).
"""
from __future__ import annotations

import sqlalchemy as sa
from flask import g

from ..auth.claims import PROJECT_CLAIM
from ..auth.security import run_claims
from ..extensions import appbuilder, db, generations
from ..models import ProjectMember, ProjectRole
from ..shared.generations import Kept
from .errors import ApiError, Forbidden, NotFound


def current_user():
    return appbuilder.sm.current_user


def is_admin() -> bool:
    if "_myapp_is_admin" not in g:
        # A run token is never an admin, whatever its identity's roles.
        g._myapp_is_admin = run_claims() is None and appbuilder.sm.is_admin(current_user())
    return g._myapp_is_admin


MEMBERSHIP_MAX_AGE = 60.0  # seconds a process keeps someone's memberships at most, even if a change were lost
_kept: Kept[dict[int, ProjectRole]] = Kept(MEMBERSHIP_MAX_AGE)  # user id -> {project_id: role}


def _membership_key(user_id: int) -> str:
    return f"memberships:{user_id}"


def memberships() -> dict[int, ProjectRole]:
    """{project_id: role} for the caller: once per request, kept by the process while its generation holds
    (read before loading, so what is loaded during a change is filed under the older generation)."""
    if "_myapp_memberships" not in g:
        claims = run_claims()
        if claims is not None:  # a run token: a developer of its run's project, nothing else, whoever it acts as
            g._myapp_memberships = {int(claims[PROJECT_CLAIM]): ProjectRole.DEVELOPER}
            return g._myapp_memberships
        user = current_user()
        if not user:
            g._myapp_memberships = {}
            return g._myapp_memberships
        def load() -> dict[int, ProjectRole]:
            rows = db.session.execute(
                sa.select(ProjectMember.project_id, ProjectMember.role).where(ProjectMember.user_id == user.id)
            ).all()
            return {int(pid): role for pid, role in rows}

        # a copy: a request may not change what the next ones read
        g._myapp_memberships = dict(_kept.get(user.id, generations.read(_membership_key(user.id)), load))
    return g._myapp_memberships


def forget_memberships(*user_ids: int) -> None:
    """Call (through routing.on_commit) whenever someone's memberships change."""
    generations.bump(*[_membership_key(uid) for uid in user_ids])
    _kept.forget(*user_ids)


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

