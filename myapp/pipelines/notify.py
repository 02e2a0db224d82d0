"""Webhook notifications: a JSON POST when a run finishes."""
from __future__ import annotations

import requests
import sqlalchemy as sa
from flask import current_app

from ..extensions import db
from ..models import Pipeline, PipelineRun, Project, Task, TaskRun


class WebhookError(RuntimeError):
    pass


def run_payload(run: PipelineRun) -> dict:
    pipeline = db.session.get(Pipeline, run.pipeline_id)
    project = db.session.get(Project, run.project_id)
    tasks = db.session.execute(sa.select(Task.name, TaskRun.state, TaskRun.attempt)
                               .join(Task, Task.id == TaskRun.task_id)
                               .where(TaskRun.pipeline_run_id == run.id).order_by(TaskRun.id)).all()
    latest = {name: (state.value, attempt) for name, state, attempt in tasks}
    return {
        "event": f"run.{run.state.value}", "project": project.name, "pipeline": pipeline.name, "run_id": run.id,
        "state": run.state.value, "reason": run.reason, "trigger": run.trigger.value,
        "logical_date": run.logical_date.isoformat() if run.logical_date else None,
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "tasks": {name: {"state": state, "attempt": attempt} for name, (state, attempt) in latest.items()},
        "url": f"{current_app.config['MYAPP_BASE_URL']}/api/v1/pipeline_run/{run.id}",
    }


def send_run_webhook(run_id: int, timeout: float = 10) -> int | None:
    """Returns the HTTP status, None when the pipeline has no webhook. Raises WebhookError to retry."""
    run = db.session.get(PipelineRun, run_id)
    pipeline = db.session.get(Pipeline, run.pipeline_id) if run else None
    if not pipeline or not pipeline.webhook_url or not run.is_finished:
        return None
    try:
        resp = requests.post(pipeline.webhook_url, json=run_payload(run), timeout=timeout)
    except requests.RequestException as exc:
        raise WebhookError(f"webhook {pipeline.webhook_url} unreachable: {exc}") from exc
    if resp.status_code >= 500 or resp.status_code == 429:
        raise WebhookError(f"webhook {pipeline.webhook_url} answered {resp.status_code}")
    return resp.status_code
