"""What `myapp init` puts in the database: roles, the first admin, the catalog, the demo project."""
from __future__ import annotations

import os
import secrets
from typing import Any

import sqlalchemy as sa
from flask import current_app
from flask_appbuilder.security.manager import BaseSecurityManager

from .extensions import appbuilder, db
from .models import JobTemplate, Project, ProjectMember, ProjectRole
from .security import ADMIN_ROLE, USER_ROLE


def sync_roles() -> None:
    """Create Admin, User and Public roles and every API permission; Admin gets them all."""
    sm = appbuilder.sm
    BaseSecurityManager.create_db(sm)  # roles only; Alembic made the tables
    appbuilder.add_permissions(update_perms=True)
    sm.add_role(USER_ROLE)


def ensure_admin() -> tuple[str, str | None]:
    """Return (username, password-if-generated). Never a default password."""
    sm = appbuilder.sm
    username = os.environ.get("MYAPP_ADMIN_USER", "admin")
    if sm.find_user(username=username):
        return username, None
    given = os.environ.get("MYAPP_ADMIN_PASSWORD")
    password = given or secrets.token_urlsafe(12)
    user = sm.add_user(username, "Platform", "Admin", f"{username}@localhost",
                       [sm.find_role(ADMIN_ROLE)], password=password)
    if not user:
        raise RuntimeError(f"could not create the admin user {username!r}")
    return username, (None if given else password)


def create_user(username: str, password: str, admin: bool = False, email: str | None = None):
    sm = appbuilder.sm
    role = sm.find_role(ADMIN_ROLE if admin else USER_ROLE)
    user = sm.add_user(username, username, "-", email or f"{username}@localhost", [role], password=password)
    if not user:
        raise RuntimeError(f"could not create user {username!r}")
    return user


def sync_catalog(templates: list[dict[str, Any]]) -> int:
    """Upsert the shipped job templates (by name and version)."""
    columns = {c.key for c in sa.inspect(JobTemplate).column_attrs} - {"id", "created_at", "updated_at"}
    count = 0
    for spec in templates:
        values = {k: v for k, v in spec.items() if k in columns} | {"builtin": True}
        row = db.session.scalar(sa.select(JobTemplate).filter_by(name=spec["name"], version=spec["version"]))
        if row is None:
            db.session.add(JobTemplate(**values))
        else:
            for key, value in values.items():
                setattr(row, key, value)
        count += 1
    db.session.commit()
    return count


def ensure_demo_project(owner_username: str) -> Project:
    project = db.session.scalar(sa.select(Project).filter_by(name="demo"))
    if project is None:
        project = Project(name="demo", namespace="demo", description="Example project with a pipeline ready to run.")
        db.session.add(project)
        db.session.flush()
    owner = appbuilder.sm.find_user(username=owner_username)
    if not db.session.scalar(sa.select(ProjectMember.id).filter_by(project_id=project.id, user_id=owner.id)):
        db.session.add(ProjectMember(project_id=project.id, user_id=owner.id, role=ProjectRole.OWNER))
    db.session.commit()
    return project


def base_url() -> str:
    return current_app.config["MYAPP_BASE_URL"]
