"""What a notebook of a project may run, in the order New notebook offers it: the platform's default images
(`myapp init` registers them: myapp/images/defaults.py), then the project's own images (its built
environments), then the rest of the shared catalog. Whether only the defaults exist, so that the dialog
can say how to get more (build an environment on the Images page)."""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from flask import current_app

from ..extensions import db
from ..models import Image

GROUPS = ("default", "project", "catalog")


def default_images() -> tuple[str, ...]:
    """The default images' `repository:tag` from configuration, the local environment first."""
    config = current_app.config
    return (str(config["MYAPP_LOCAL_ENVIRONMENT"]), str(config["MYAPP_NOTEBOOK_IMAGE"]))


def choices(project_id: int) -> dict[str, Any]:
    """{"items": [{image, group, environment, description}], "only_defaults": bool} for the project."""
    rows = db.session.execute(
        sa.select(Image.repository, Image.tag, Image.project_id, Image.environment, Image.description)
        .where(Image.visible_to(project_id))).all()
    defaults = default_images()
    items = []
    for row in rows:
        name = f"{row.repository}:{row.tag}"
        group = "default" if row.project_id is None and name in defaults else \
            "project" if row.project_id is not None else "catalog"
        items.append({"image": name, "group": group, "environment": bool(row.environment),
                      "description": row.description})
    items.sort(key=lambda item: (GROUPS.index(item["group"]),
                                 defaults.index(item["image"]) if item["group"] == "default" else 0,
                                 not item["environment"], item["image"]))
    return {"items": items, "only_defaults": all(item["group"] == "default" for item in items)}
