"""Who am I: the signed-in user, their projects and roles, and the CSRF token for the SPA."""
from __future__ import annotations

import sqlalchemy as sa
from flask import jsonify
from flask_wtf.csrf import generate_csrf

from ..extensions import db
from ..models import Project
from .base import ResourceApi
from .responses import ME
from .routing import route
from .scope import current_user, is_admin, memberships


class MeApi(ResourceApi):
    resource_name = "me"
    class_permission_name = "Me"
    model = Project
    label = "user"
    include_route_methods = {"me"}

    @route("/", summary="The signed-in user, their projects and roles, and a CSRF token", response=ME)
    def me(self):
        user = current_user()
        roles = memberships()
        projects = db.session.execute(
            sa.select(Project.id, Project.name).where(Project.id.in_(list(roles))).order_by(Project.name)
        ).all()
        return jsonify(
            id=user.id, username=user.username, first_name=user.first_name, last_name=user.last_name,
            is_admin=is_admin(),
            projects=[{"id": pid, "name": name, "role": roles[pid].value} for pid, name in projects],
            csrf_token=generate_csrf(),
        )



