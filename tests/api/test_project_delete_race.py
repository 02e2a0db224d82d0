"""A job submitted in the moment its project is deleted goes with it: the delete waits for the submission
(PostgreSQL: its share of the project's row; SQLite: the one writer), then lists its job for the worker
that stops it. Row locks differ between the databases, so both passes run it."""
from __future__ import annotations

import threading

import pytest
import sqlalchemy as sa

from myapp.backends.archive import FileLogArchive
from tests.fake_backend import FakeBackend
from tests.pipelines.support import make_pipeline
from tests.support import TEST_DATABASE, in_thread, unique, wait_until
from tests.world import created

pytestmark = pytest.mark.backends


class SubmitsWhileDeleted(FakeBackend):
    """Its submit (made while the controller holds the run's row) waits until another session waits for a
    lock (PostgreSQL: the project's delete, held up by the submission), then returns."""

    def __init__(self):
        super().__init__({"train": ["hang"]})
        self.entered = threading.Event()

    def submit(self, manifests):
        self.entered.set()
        if TEST_DATABASE == "postgresql":
            wait_until(lambda: waiting_for_a_lock() > 0, timeout=30, what="the delete to wait for a lock")
        return super().submit(manifests)


def waiting_for_a_lock() -> int:
    """Sessions of this database waiting for a row or table lock (another connection's view)."""
    from myapp.extensions import db

    with db.engine.connect() as conn:
        return conn.scalar(sa.text("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                                   "AND wait_event_type = 'Lock'"))


def test_a_job_submitted_while_its_project_is_deleted_is_stopped_with_it(app, catalog, user, monkeypatch,
                                                                         tmp_path):
    """The controller submits an attempt in the moment the project's delete runs: the delete waits for that
    submission (PostgreSQL: its share of the project's row), then lists its job, so the worker stops it;
    nothing the platform started outlives the project."""
    import myapp.api.pipelines
    from myapp.pipelines.controller import RunController
    from myapp.pipelines.release import release

    sent: list[tuple] = []
    monkeypatch.setattr(myapp.api.pipelines, "enqueue", lambda name, *args, **_: sent.append((name, *args)))
    project = created(user.post("/api/v1/project/", json={"name": unique("racy")}))
    run_id, _ = make_pipeline(app, catalog, {"train": {}}, [], project_id=project["id"])
    backend = SubmitsWhileDeleted()

    def controller():
        with app.app_context():
            return RunController(lambda task: backend).reconcile(run_id)

    reconciling, reconciled = in_thread(controller)
    assert backend.entered.wait(60), reconciled
    deleting, deleted = in_thread(lambda: user.delete(f"/api/v1/project/{project['id']}").status_code)
    reconciling.join(60)
    deleting.join(60)
    assert deleted == [200], deleted
    assert len(backend.jobs) == 1, reconciled
    items = [args[0] for name, *args in sent if name == "myapp.run_release"]
    with app.app_context():
        for item in items:
            release(item, lambda group_id: backend, FileLogArchive(tmp_path))
    assert backend.cancelled == set(backend.jobs), (items, reconciled)  # the job went with its project
