"""A run's outputs go with it: deleting the run, its pipeline or its project writes down what to remove in the
same transaction, and a worker removes the folders afterwards, so a platform stopped in between, or a removal
that fails once, leaves rows to finish, never a folder forever (myapp/pipelines/outputs_cleanup.py)."""
from __future__ import annotations

import datetime as dt
import time

import pytest
import sqlalchemy as sa

from tests.fake_backend import FakeBackend
from tests.pipelines.support import drive, make_pipeline
from tests.support import free_port, unique

WRITER = """
import os
open(os.path.join(os.environ["MYAPP_OUTPUT_DIR"], "result.txt"), "w").write("kept\\n")
"""


def rows(app):
    from myapp.extensions import db
    from myapp.models import OutputsCleanup

    with app.app_context():
        return [(r.namespace, r.pipeline_run_id, r.error) for r in
                db.session.scalars(sa.select(OutputsCleanup).order_by(OutputsCleanup.id))]


def run_all(app, backend, run_ids, timeout=90.0):
    """Reconcile the runs on the real backend until every one has finished."""
    from myapp.pipelines.controller import RunController

    controller = RunController(lambda task: backend)
    left, deadline = set(run_ids), time.monotonic() + timeout
    with app.app_context():
        while left and time.monotonic() < deadline:
            for run_id in sorted(left):
                if controller.reconcile(run_id).value in ("succeeded", "failed", "cancelled"):
                    left.discard(run_id)
            time.sleep(0.1)
    assert not left, f"runs {sorted(left)} not finished after {timeout} s"


def outputs_of(app, run_id):
    from myapp.extensions import db
    from myapp.models import PipelineRun, Project
    from myapp.outputs import store as outputs_store

    with app.app_context():
        return outputs_store.root() / db.session.get(Project, db.session.get(PipelineRun, run_id).project_id
                                                     ).namespace / str(run_id)


def planted(app, run_id):
    """A run's outputs folder as its attempts leave it: a file, and a link a job planted to a file outside."""
    folder = outputs_of(app, run_id) / "train" / "1"
    folder.mkdir(parents=True)
    (folder / "model.bin").write_bytes(b"x")
    (folder / "escape").symlink_to(folder.parents[3] / "outside.txt")
    return folder.parent.parent


@pytest.fixture()
def sent(monkeypatch):
    import myapp.api.pipelines

    calls: list[tuple] = []
    monkeypatch.setattr(myapp.api.pipelines, "enqueue", lambda name, *args, **kw: calls.append((name, *args)))
    return calls


@pytest.fixture()
def clean_table(app):
    from myapp.extensions import db
    from myapp.models import OutputsCleanup

    with app.app_context():
        db.session.execute(sa.delete(OutputsCleanup))
        db.session.commit()


@pytest.mark.slow  # real local jobs
def test_a_deleted_pipeline_takes_its_runs_outputs_on_this_machine_and_leaves_another_pipelines(
        app, catalog, admin, sent, clean_table):
    from myapp.backends.local import LocalBackend
    from myapp.backends.registry import local_workdir
    from myapp.extensions import db
    from myapp.models import PipelineRun
    from myapp.pipelines import outputs_cleanup
    from myapp.tasks import outputs_cleanup as outputs_cleanup_task

    gone, _ = make_pipeline(app, catalog, {"train": {"args": {"script": WRITER}}}, [], name=unique("pipe"))
    with app.app_context():
        project_id, pipeline_id = (db.session.get(PipelineRun, gone).project_id,
                                   db.session.get(PipelineRun, gone).pipeline_id)
    kept, _ = make_pipeline(app, catalog, {"train": {"args": {"script": WRITER}}}, [], project_id=project_id,
                            name=unique("pipe"))
    with app.app_context():
        backend = LocalBackend(local_workdir(), gpus=[], restart_delay=0.05, poll_interval=0.02)
    run_all(app, backend, [gone, kept])
    folder, beside = outputs_of(app, gone), outputs_of(app, kept)
    assert (folder / "train/1/result.txt").read_text() == "kept\n"
    assert (beside / "train/1/result.txt").read_text() == "kept\n"

    assert admin.delete(f"/api/v1/pipeline/{pipeline_id}").status_code == 200
    assert ("myapp.outputs_cleanup",) in sent
    namespace = folder.parent.name
    assert rows(app) == [(namespace, gone, None)]
    # The platform stopped before a worker took it: the folder is still named by a due row, and beat asks again.
    assert folder.is_dir()
    with app.app_context():
        assert outputs_cleanup.due()
        assert outputs_cleanup_task() == 1  # what the worker runs
        assert not outputs_cleanup.due()
    assert not folder.exists() and rows(app) == []
    assert (beside / "train/1/result.txt").read_text() == "kept\n"  # the other pipeline's run keeps its own


def test_a_deleted_run_or_project_takes_its_runs_outputs_the_unfinished_ones_after_their_jobs(
        app, catalog, user, sent, clean_table, tmp_path):
    from myapp.extensions import db
    from myapp.models import utcnow
    from myapp.outputs import store as outputs_store
    from myapp.pipelines import checkpoint_cleanup, outputs_cleanup
    from tests.world import created

    project = created(user.post("/api/v1/project/", json={"name": unique("out")}))
    namespace = project["namespace"]
    runs = {}
    for outcome in ("succeeded", "succeeded", "hang"):
        run_id, _ = make_pipeline(app, catalog, {"train": {}}, [], project_id=project["id"], name=unique("pipe"))
        drive(app, FakeBackend({"train": [outcome]}), run_id, passes=1 if outcome == "hang" else 30)
        runs.setdefault(outcome, []).append(run_id)
    (done, deleted), (running,) = runs["succeeded"], runs["hang"]
    never = make_pipeline(app, catalog, {"train": {}}, [], project_id=project["id"], name=unique("pipe"))[0]
    with app.app_context():
        (outputs_store.root() / "outside.txt").write_text("not the job's")
    folders = {run: planted(app, run) for run in (done, deleted, running)}

    assert user.delete(f"/api/v1/pipeline_run/{deleted}").status_code == 200
    assert rows(app) == [(namespace, deleted, None)] and folders[deleted].is_dir()
    assert user.delete(f"/api/v1/project/{project['id']}").status_code == 200
    assert sorted(r[1] for r in rows(app)) == sorted([done, deleted, running])
    assert never not in [r[1] for r in rows(app)]  # it submitted nothing: it wrote no folder

    now = utcnow()
    with app.app_context():
        assert outputs_cleanup.remove_due(now) == 2
        db.session.commit()
    assert not folders[done].exists() and not folders[deleted].exists()
    assert folders[running].is_dir()  # its job is being stopped first
    with app.app_context():
        assert (outputs_store.root() / "outside.txt").read_text() == "not the job's"  # the link went as a name
        later = now + dt.timedelta(seconds=checkpoint_cleanup.RELEASE_SECONDS)
        assert outputs_cleanup.remove_due(later) == 1
        db.session.commit()
    assert not folders[running].exists() and rows(app) == []


def test_a_removal_that_fails_is_kept_and_tried_again_a_minute_on(app, catalog, user, sent, clean_table,
                                                                   monkeypatch):
    from myapp.extensions import db
    from myapp.models import utcnow
    from myapp.pipelines import outputs_cleanup
    from tests.world import created

    project = created(user.post("/api/v1/project/", json={"name": unique("out")}))
    run_id, _ = make_pipeline(app, catalog, {"train": {}}, [], project_id=project["id"], name=unique("pipe"))
    drive(app, FakeBackend({"train": ["succeeded"]}), run_id)
    assert user.delete(f"/api/v1/pipeline_run/{run_id}").status_code == 200
    # The store its Kubernetes attempts would have written cannot be reached.
    monkeypatch.setenv("MYAPP_OUTPUTS_S3_BUCKET", "outputs")
    monkeypatch.setenv("MYAPP_OUTPUTS_S3_URL", f"http://127.0.0.1:{free_port()}")  # nobody listens
    monkeypatch.setenv("MYAPP_OUTPUTS_S3_ACCESS_KEY_ID", "moto")
    monkeypatch.setenv("MYAPP_OUTPUTS_S3_SECRET_ACCESS_KEY", "moto-secret")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")

    now = utcnow()
    with app.app_context():
        assert outputs_cleanup.remove_due(now) == 0
        assert not outputs_cleanup.due(now + dt.timedelta(seconds=59))
        assert outputs_cleanup.due(now + dt.timedelta(seconds=60))
        db.session.commit()
    [(namespace, run, error)] = rows(app)
    assert (namespace, run) == (project["namespace"], run_id) and "outputs store cannot be reached" in error
    monkeypatch.delenv("MYAPP_OUTPUTS_S3_BUCKET")
    with app.app_context():
        assert outputs_cleanup.remove_due(now + dt.timedelta(seconds=60)) == 1
        db.session.commit()
    assert rows(app) == []
