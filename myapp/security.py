"""Who may do what.

Two layers, both on the server: FAB role permissions per API (admins alone hold the
admin-only APIs), and project membership per object (see myapp.api.scope).
"""
from __future__ import annotations

from flask_appbuilder.security.sqla.manager import SecurityManager

ADMIN_ROLE = "Admin"
USER_ROLE = "User"

# APIs whose objects belong to projects: every signed-in user may call them; the
# project scope then decides per object. Catalog APIs are readable by every user.
PROJECT_RESOURCES = (
    "Project", "Pipeline", "Task", "Edge", "PipelineRun", "TaskRun", "Notebook",
    "ModelVersion", "InferenceService", "ImageBuild", "Me",
)
CATALOG_RESOURCES = ("JobTemplate", "Image", "ResourceGroup")


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
