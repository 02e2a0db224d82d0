"""A downstream attempt reaches its backend in the pass that saw its upstream finish, and only once its
row is committed (the controller commits, takes the run lock again, then submits)."""
from __future__ import annotations

import sqlalchemy as sa

from myapp.rendering.contract import RUN_LABEL, TASK_LABEL
from tests.fake_backend import FakeBackend
from tests.pipelines.support import make_pipeline, task_states


class CommittedCheckingBackend(FakeBackend):
    """Looks, on a connection of its own, for the committed row of every attempt it is asked to submit."""

    def __init__(self, engine):
        super().__init__()
        self.engine = engine
        self.seen: list[tuple[str, bool]] = []  # (task, its queued row was committed)

    def submit(self, manifests):
        labels = manifests[0]["metadata"]["labels"]
        with self.engine.connect() as conn:
            committed = conn.execute(sa.text(
                "SELECT count(*) FROM task_run JOIN task ON task.id = task_run.task_id "
                "WHERE task_run.pipeline_run_id = :run AND task.name = :task AND task_run.state = 'queued'"),
                {"run": int(labels[RUN_LABEL]), "task": labels[TASK_LABEL]}).scalar()
        self.seen.append((labels[TASK_LABEL], committed == 1))
        return super().submit(manifests)


def test_downstream_is_submitted_in_the_pass_its_upstream_finished(app, catalog):
    from myapp.extensions import db
    from myapp.pipelines.controller import RunController

    run_id, _ = make_pipeline(app, catalog, {"a": {}, "b": {}, "c": {}}, [("a", "b"), ("a", "c")])
    with app.app_context():
        backend = CommittedCheckingBackend(db.engine)
        controller = RunController(lambda task: backend)
        assert controller._pass(run_id)  # starts the run, creates a's attempt and submits it
        assert task_states(app, run_id) == [("a", 1, "pending")]
        assert controller._pass(run_id)  # the fake's first poll: running
        assert task_states(app, run_id) == [("a", 1, "running")]
        assert controller._pass(run_id)  # a succeeded: b and c are created, committed and submitted now
        assert task_states(app, run_id) == [("a", 1, "succeeded"), ("b", 1, "pending"), ("c", 1, "pending")]
    assert sorted(backend.seen) == [("a", True), ("b", True), ("c", True)]  # each row committed first
    assert set(backend.creations.values()) == {1}


def test_a_cancel_between_creation_and_submission_sends_nothing(app, catalog):
    """The run lock is let go between the commit of new attempts and their submission: a cancel that
    takes it then has cancelled them, and the submission step sends nothing."""
    from myapp.extensions import db
    from myapp.pipelines.controller import RunController

    run_id, _ = make_pipeline(app, catalog, {"a": {}}, [])
    backend = FakeBackend()
    with app.app_context():
        controller = RunController(lambda task: backend)
        original = controller._submit_created

        def cancel_first(rid):
            RunController(lambda task: backend).cancel(rid, "cancelled in between")
            db.session.commit()
            original(rid)

        controller._submit_created = cancel_first
        controller._pass(run_id)
    assert task_states(app, run_id) == [("a", 1, "cancelled")]
    assert not backend.submits
