"""A project's deletion takes its runs' rows with it (foreign keys): what their unfinished attempts run, as
plain data read before the delete, so a worker can stop it after the delete (``release``), as notebooks
(``notebooks.states.project_attempts``) and model servers (``serving.release``) are. The API reads
``project_runs``; only ``release`` (a worker's) calls a backend, which it is handed."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa

from ..backends.base import Backend, JobRef, LogArchive
from ..extensions import db
from ..models import ImageBuild, PipelineRun, Project, ServiceState, Task, TaskRun
from ..models.states import RUN_TERMINAL, TASK_TERMINAL
from ..rendering.contract import run_token_secret


def project_runs(project_id: int) -> list[dict[str, Any]]:
    """Per unfinished run of the project: its namespace, the run's token Secret and each submitted attempt
    not yet ended (its resource group, which names its backend, and its job)."""
    project = db.session.get(Project, project_id)
    if project is None:
        return []
    runs = db.session.scalars(sa.select(PipelineRun.id).where(
        PipelineRun.project_id == project_id, PipelineRun.state.not_in(list(RUN_TERMINAL)))
        .order_by(PipelineRun.id)).all()
    if not runs:
        return []
    attempts = db.session.execute(
        sa.select(TaskRun.pipeline_run_id, Task.resource_group_id, TaskRun.backend_ref)
        .join(Task, Task.id == TaskRun.task_id)
        .where(TaskRun.project_id == project_id, TaskRun.pipeline_run_id.in_(runs),
               TaskRun.state.not_in(list(TASK_TERMINAL)), TaskRun.backend_ref.is_not(None))
        .order_by(TaskRun.id)).all()
    return [{"run_id": run_id, "namespace": project.namespace, "secret": run_token_secret(run_id),
             "attempts": [{"resource_group_id": group, "ref": ref} for rid, group, ref in attempts if rid == run_id]}
            for run_id in runs]


def release(item: dict[str, Any], backend_for_group: Callable[[int | None], Backend],
            archive: LogArchive | None) -> None:
    """Stop what one run listed by ``project_runs`` had started: each attempt's job (its log archived, its
    files removed) and the run's token Secret on every backend it used. Idempotent: a job already gone
    is fine, so a second delivery is harmless."""
    backends: dict[int, Backend] = {}
    for attempt in item["attempts"]:
        backend = backend_for_group(attempt["resource_group_id"])
        backends[id(backend)] = backend
        ref = JobRef.from_dict(attempt["ref"])
        backend.cancel(ref)
        if archive is not None:
            backend.cleanup(ref, archive)
    if item.get("secret"):
        for backend in backends.values() or [backend_for_group(None)]:
            backend.delete_secret(item["namespace"], item["secret"])


def project_builds(project_id: int) -> list[dict[str, Any]]:
    """The project's image builds running as a backend's job (Kaniko), in the shape ``release`` takes: their
    driving worker sees the job cancelled and gives up. (A local build is pip in the worker's sandbox: its
    worker sees the build's row gone within seconds and stops pip, myapp/images/builder.py.)"""
    project = db.session.get(Project, project_id)
    if project is None:
        return []
    rows = db.session.execute(sa.select(ImageBuild.resource_group_id, ImageBuild.backend_ref).where(
        ImageBuild.project_id == project_id, ImageBuild.state.in_([ServiceState.PENDING, ServiceState.RUNNING]),
        ImageBuild.backend_ref.is_not(None)).order_by(ImageBuild.id)).all()
    return [{"namespace": project.namespace, "secret": None,
             "attempts": [{"resource_group_id": group, "ref": ref}]} for group, ref in rows]
