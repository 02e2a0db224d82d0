"""A project's registry credentials: what Kaniko's `push` container pushes with (docs/images.md).

Project owners set them (`PUT /api/v1/image_build/project/{project}/registry_credentials`); the row
keeps the dockerconfigjson sealed (myapp/auth/sealed.py, purpose "registry-credentials") and no answer ever carries
it back, only whether it is set and for which registry. For each build the worker puts it in a Secret
of the build's own (`image-build-<id>-registry`), mounted by the `push` container alone, and deletes
that Secret when the build ends. A project without stored credentials builds with the namespace's
`registry-credentials` Secret an admin made with kubectl, as before.
"""
from __future__ import annotations

import base64
import json
import re
from typing import Any

from flask import current_app

from ..auth import sealed
from ..errors import FieldError
from ..extensions import db
from ..models.workspace import RegistryCredentials

PURPOSE = "registry-credentials"
KEY = ".dockerconfigjson"  # the key templates/kaniko-job.yaml.j2 mounts as config.json
# A registry host, as an image reference names it: DNS labels, an optional port.
REGISTRY = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*(:[0-9]{1,5})?")


def secret_name(build_id: int) -> str:
    return f"image-build-{build_id}-registry"


def docker_config(registry: str, username: str, password: str) -> str:
    auth = base64.b64encode(f"{username}:{password}".encode()).decode()
    return json.dumps({"auths": {registry: {"username": username, "password": password, "auth": auth}}})


def store(project_id: int, registry: str, username: str, password: str) -> RegistryCredentials:
    """Set (or replace) the project's credentials; FieldError names a bad field."""
    registry = registry.strip().lower()
    if len(registry) > 253 or not REGISTRY.fullmatch(registry):
        raise FieldError("registry", "must be a registry host such as ghcr.io or registry.local:5000")
    if ":" in username:
        raise FieldError("username", "must not contain ':' (registries join username:password)")
    row = db.session.get(RegistryCredentials, project_id) or RegistryCredentials(project_id=project_id)
    row.server, row.username = registry, username
    row.sealed_config = sealed.seal(current_app.config["SECRET_KEY"], PURPOSE,
                                    docker_config(registry, username, password))
    db.session.add(row)
    return row


def clear(project_id: int) -> bool:
    """Forget the project's credentials; False when none were set."""
    row = db.session.get(RegistryCredentials, project_id)
    if row is not None:
        db.session.delete(row)
    return row is not None


def describe(project_id: int) -> dict[str, Any]:
    """What members may know: whether credentials are set, for which registry and since when."""
    row = db.session.get(RegistryCredentials, project_id)
    if row is None:
        return {"set": False, "registry": None, "updated_at": None}
    return {"set": True, "registry": row.server, "updated_at": row.updated_at.isoformat()}


def build_secret(project_id: int) -> dict[str, str] | None:
    """The Secret data a build of the project pushes with, or None (no credentials stored).
    Raises sealed.SealError when they were sealed under another SECRET_KEY."""
    row = db.session.get(RegistryCredentials, project_id)
    if row is None:
        return None
    return {KEY: sealed.unseal(current_app.config["SECRET_KEY"], PURPOSE, row.sealed_config)}
