"""An attempt with an outputs folder on this machine, and its run's token: what a job calling the API has."""
from __future__ import annotations

from pathlib import Path

from tests.pipelines.support import make_pipeline
from tests.support import ApiClient


def attempt_with_token(app, catalog) -> tuple[ApiClient, int, Path]:
    """(a client with the run's own token, the running attempt's id, its outputs folder, made and empty)."""
    from myapp.auth.run_tokens import issue, token_of
    from myapp.extensions import db
    from myapp.models import PipelineRun, Project, TaskRun, TaskState
    from myapp.models.base import utcnow
    from myapp.outputs import store as outputs_store

    run_id, ids = make_pipeline(app, catalog, {"train": {}}, [])
    with app.app_context():
        run = db.session.get(PipelineRun, run_id)
        attempt = TaskRun(project_id=run.project_id, pipeline_run_id=run_id, task_id=ids["train"], attempt=1,
                          state=TaskState.RUNNING, manifests=[{"kind": "Job"}], output_dir=f"{run_id}/train/1")
        db.session.add(attempt)
        row = issue(run, utcnow())
        db.session.commit()
        folder = outputs_store.root() / db.session.get(Project, run.project_id).namespace / attempt.output_dir
        folder.mkdir(parents=True)
        return ApiClient(app.test_client(), token_of(row)), attempt.id, folder
