"""A project's deletion takes its services' rows with it (foreign keys): what their servers were, as plain
data read before the delete, so a worker can stop them after it (``controller.release``). No backend here:
the API reads this."""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from ..extensions import db
from ..models import InferenceService, Project


def project_services(project_id: int) -> list[dict[str, Any]]:
    """Per service of the project: its namespace, id, resource group (its backend) and its jobs' references."""
    project = db.session.get(Project, project_id)
    if project is None:
        return []
    rows = db.session.execute(sa.select(InferenceService.id, InferenceService.jobs, InferenceService.resource_group_id)
                              .where(InferenceService.project_id == project_id)).all()
    return [{"service_id": row.id, "namespace": project.namespace, "resource_group_id": row.resource_group_id,
             "refs": [entry for entry in (row.jobs or {}).values() if "backend" in entry]} for row in rows]
