"""What a project has running: the runs, notebooks, model servers and image builds its deletion would
stop. The UI lists them before it asks to delete the project (api/projects.py)."""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from ..extensions import db
from ..models import ImageBuild, InferenceService, Notebook, Pipeline, PipelineRun, ServiceState
from ..models.states import RUN_TERMINAL
from ..notebooks.states import ACTIVE

# A service holds servers until the worker has stopped them (stopped, failed: it holds none).
SERVICE_HOLDS = (ServiceState.PENDING, ServiceState.RUNNING)
BUILD_UNFINISHED = (ServiceState.PENDING, ServiceState.RUNNING)


def running_work(project_id: int) -> dict[str, list[dict[str, Any]]]:
    """Each kind's unfinished objects, oldest first, with what names them to a person."""
    runs = db.session.execute(
        sa.select(PipelineRun.id, Pipeline.name, PipelineRun.state)
        .join(Pipeline, Pipeline.id == PipelineRun.pipeline_id)
        .where(PipelineRun.project_id == project_id, PipelineRun.state.not_in(list(RUN_TERMINAL)))
        .order_by(PipelineRun.id)).all()
    notebooks = db.session.execute(
        sa.select(Notebook.id, Notebook.name, Notebook.state)
        .where(Notebook.project_id == project_id, Notebook.state.in_(list(ACTIVE))).order_by(Notebook.id)).all()
    services = db.session.execute(
        sa.select(InferenceService.id, InferenceService.name, InferenceService.state)
        .where(InferenceService.project_id == project_id, InferenceService.state.in_(SERVICE_HOLDS))
        .order_by(InferenceService.id)).all()
    builds = db.session.execute(
        sa.select(ImageBuild.id, ImageBuild.repository, ImageBuild.tag, ImageBuild.state)
        .where(ImageBuild.project_id == project_id, ImageBuild.state.in_(BUILD_UNFINISHED))
        .order_by(ImageBuild.id)).all()
    return {
        "runs": [{"id": i, "name": f"{name} run #{i}", "state": s.value} for i, name, s in runs],
        "notebooks": [{"id": i, "name": name, "state": s.value} for i, name, s in notebooks],
        "services": [{"id": i, "name": name, "state": s.value} for i, name, s in services],
        "builds": [{"id": i, "name": f"{repo}:{tag}", "state": s.value} for i, repo, tag, s in builds],
    }
