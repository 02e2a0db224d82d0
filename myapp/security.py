"""Who may do what.

Two layers, both on the server: FAB role permissions per API (admins alone hold the
admin-only APIs), and project membership per object (see myapp.api.scope).
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from flask import g
from flask_appbuilder.security.sqla.manager import SecurityManager
from flask_jwt_extended import get_jwt

ADMIN_ROLE = "Admin"
USER_ROLE = "User"
# Claims of a run's platform API token (myapp.run_tokens): the run and its project.
RUN_CLAIM = "myapp_run"
PROJECT_CLAIM = "myapp_project"

# APIs whose objects belong to projects: every signed-in user may call them; the
# project scope then decides per object. Catalog APIs are readable by every user.
PROJECT_RESOURCES = (
    "Project", "Pipeline", "Task", "Edge", "PipelineRun", "TaskRun", "Notebook",
    "ModelVersion", "InferenceService", "ImageBuild", "Me",
)
CATALOG_RESOURCES = ("JobTemplate", "Image", "ResourceGroup")


def run_claims() -> dict[str, Any] | None:
    """The claims of this request's JWT when it is a run token (verified: signature, expiry and
    myapp.run_tokens' revocation check), else None (a person's token, a session cookie, no auth)."""
    try:
        claims = get_jwt()
    except RuntimeError:  # no JWT verified in this request
        return None
    return claims if RUN_CLAIM in claims else None


def builtin_roles() -> dict[str, list[list[str]]]:
    """FAB builtin role: regexes of (view, permission) granted to every platform user."""
    project = "^(" + "|".join(PROJECT_RESOURCES) + ")$"
    catalog = "^(" + "|".join(CATALOG_RESOURCES) + ")$"
    return {
        USER_ROLE: [
            [project, "^can_(read|write)$"],
            [catalog, "^can_read$"],
            ["^OpenApi$", "^can_get$"],
        ]
    }


class PlatformSecurityManager(SecurityManager):
    def is_admin(self, user) -> bool:
        return bool(user) and any(role.name == ADMIN_ROLE for role in user.roles)

    def has_access(self, permission_name: str, view_name: str) -> bool:
        """A run token acts as a plain platform user, whatever roles its identity has: never an
        admin API (its project scope is myapp.api.scope's)."""
        if run_claims() is not None:
            return self._has_access_builtin_roles(SimpleNamespace(name=USER_ROLE), permission_name, view_name)
        return super().has_access(permission_name, view_name)

    def load_user_jwt(self, _jwt_header, jwt_data):
        """A project's bot is inactive (it signs in with nothing, and tokens of its own are refused),
        so FAB's loader refuses it: only its runs' tokens act as it, once checked not revoked."""
        if RUN_CLAIM not in jwt_data:
            return super().load_user_jwt(_jwt_header, jwt_data)
        user = self.get_user_by_id(int(jwt_data["sub"]))
        if user is not None:
            g.user = user
        return user

    def is_item_public(self, permission_name: str, view_name: str) -> bool:
        """Nothing protected is public here: anonymous callers get 401, never a Public-role grant.

        FAB would look up the Public role's permissions (2 queries) twice on every API call.
        """
        return False

    def get_user_by_id(self, pk):
        """The user with roles and groups in one query: every request checks them."""
        from sqlalchemy.orm import joinedload

        return self.session.get(self.user_model, pk,
                                options=[joinedload(self.user_model.roles), joinedload(self.user_model.groups)])
