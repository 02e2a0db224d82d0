"""A task's own image: which images a project may name, checked when the task is saved and again when an
attempt renders (the image may have left the catalog since). The rule of which templates may choose is
rendering's (myapp/rendering/image_choice.py)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from ..errors import FieldError, Kind
from ..extensions import db
from ..models import Image
from ..rendering.image_choice import image_choice_refusal


def split_reference(reference: str) -> tuple[str, str] | None:
    """`repository:tag` -> (repository, tag); a registry's port (`host:5000/repo`) stays in the repository."""
    repository, colon, tag = reference.rpartition(":")
    if not colon or not repository or not tag or "/" in tag:
        return None
    return repository, tag


def visible_image(reference: str, project_id: int) -> Image | None:
    """The catalog's image, or the project's own, named `repository:tag`; None for any other (another
    project's images are as unknown as images nobody registered)."""
    parts = split_reference(reference)
    if parts is None:
        return None
    return db.session.scalar(sa.select(Image).filter_by(repository=parts[0], tag=parts[1]).where(
        Image.visible_to(project_id)).limit(1))


def pull_secrets(project_id: int) -> dict[str, str]:
    """`repository:tag` -> its `pull_secret`, for every image the project may use that has one: what
    rendering gives the pods running them as imagePullSecrets (RenderContext.pull_secrets)."""
    rows = db.session.execute(sa.select(Image.repository, Image.tag, Image.pull_secret).where(
        Image.visible_to(project_id), Image.pull_secret.is_not(None), Image.pull_secret != ""))
    return {f"{repository}:{tag}": secret for repository, tag, secret in rows}


def check_task_image(template: Mapping[str, Any], image: str | None, project_id: int, field: str) -> None:
    """A task's chosen image must be one its template lets it choose and its project may use.
    Raises FieldError(field, ...) otherwise; None (the template's image) always passes."""
    if image is None:
        return
    if (refusal := image_choice_refusal(template)) is not None:
        raise FieldError(field, refusal)
    if visible_image(image, project_id) is None:
        raise FieldError(field, f"no image {image!r} in the catalog or this project's images", Kind.NOT_FOUND)
