"""What a reconcile pass costs in SQL: the time between an upstream's end and its downstream's submission
is mostly round trips and commits (benchmarks/controller.py), so the pass reads each row once."""
from __future__ import annotations

import contextlib
import re

import pytest
import sqlalchemy as sa

from tests.fake_backend import FakeBackend
from tests.pipelines.support import make_pipeline, task_states
from tests.support import TEST_DATABASE

pytestmark = pytest.mark.backends


@contextlib.contextmanager
def statements(engine):
    """The SQL statements sent meanwhile, whitespace collapsed, and "COMMIT" for each commit."""
    sent: list[str] = []

    def before(conn, cursor, statement, *args):
        sent.append(" ".join(statement.split()))

    def commit(conn):
        sent.append("COMMIT")

    sa.event.listen(engine, "before_cursor_execute", before)
    sa.event.listen(engine, "commit", commit)
    try:
        yield sent
    finally:
        sa.event.remove(engine, "before_cursor_execute", before)
        sa.event.remove(engine, "commit", commit)


def reads(sent: list[str], table: str) -> int:
    """SELECTs that read the table (FROM or JOIN)."""
    return sum(1 for s in sent if s.startswith("SELECT") and re.search(rf"\b(FROM|JOIN) {table}\b", s))


def test_the_pass_that_sees_an_upstream_end_reads_each_row_once(app, catalog):
    from myapp.extensions import db
    from myapp.pipelines.controller import RunController

    run_id, _ = make_pipeline(app, catalog, {"a": {}, "b": {}, "c": {}, "d": {}}, [("a", "b"), ("a", "c"), ("a", "d")])
    backend = FakeBackend()
    with app.app_context():
        controller = RunController(lambda task: backend)
        controller._pass(run_id)  # starts the run, submits a
        controller._pass(run_id)  # a running
        with statements(db.engine) as sent:
            assert controller._pass(run_id)  # a succeeded: b, c and d created, committed, submitted
    assert task_states(app, run_id) == [("a", 1, "succeeded"), ("b", 1, "pending"), ("c", 1, "pending"),
                                        ("d", 1, "pending")]
    # Three attempts rendered, yet the pipeline, its project and the template are read once each
    # (the pipeline with its project, in one statement).
    assert sent.count("COMMIT") == 2
    end = sent.index("COMMIT")
    creating, submitting = sent[:end], sent[end + 1:]
    assert (reads(creating, "pipeline"), reads(creating, "project"), reads(creating, "job_template")) == (1, 1, 1)
    # The submission (a transaction of its own) reads neither the pipeline nor the run token apart (read with
    # the attempts it submits), and the project only in that statement, for a share of its row against its
    # delete (the namespace of the run token's Secret was read with it: backend_calls.project_kept).
    assert reads(submitting, "pipeline") == reads(submitting, "job_template") == 0
    (attempts,) = [s for s in submitting if s.startswith("SELECT") and re.search(r"\bJOIN project\b", s)]
    assert re.search(r"\bFROM task_run\b", attempts), attempts
    assert not [s for s in submitting if s.startswith("SELECT") and re.search(r"\bFROM run_token\b", s)]
    # A new attempt is inserted with its manifests (no INSERT, then UPDATE of them).
    assert not [s for s in sent if s.startswith("UPDATE task_run SET manifests")]
    assert any(s.startswith("INSERT INTO task_run") for s in sent)  # one per row, or batched (PostgreSQL)
    # The run row is locked and read in one statement, twice: the pass, then the submission of b, c and d.
    assert sum(1 for s in sent if s.startswith("UPDATE pipeline_run SET reconciled_at")) == 2
    assert reads(sent, "pipeline_run") == 0


def test_only_the_commit_that_creates_attempts_skips_the_log_flush(app, catalog):
    """On PostgreSQL the commit of new attempts does not wait for the log flush; the submission's commit,
    right after, does (and so makes both durable). Any other commit of a pass waits as usual."""
    from myapp.extensions import db
    from myapp.pipelines.controller import RunController

    run_id, _ = make_pipeline(app, catalog, {"a": {}, "b": {}}, [("a", "b")])
    seen: list[str] = []

    class Backend(FakeBackend):
        def submit(self, manifests):  # in the submission's transaction: the setting it commits with
            if TEST_DATABASE == "postgresql":
                seen.append(db.session.scalar(sa.text("SHOW synchronous_commit")))
            return super().submit(manifests)

    backend = Backend()
    asynchronous = "SET LOCAL synchronous_commit = off"
    with app.app_context():
        controller = RunController(lambda task: backend)
        with statements(db.engine) as creating:
            controller._pass(run_id)  # creates and submits a
        with statements(db.engine) as polling:
            controller._pass(run_id)  # a running: nothing created
        controller._pass(run_id)  # a succeeded: b created and submitted
    assert task_states(app, run_id) == [("a", 1, "succeeded"), ("b", 1, "pending")]
    assert asynchronous not in polling
    if TEST_DATABASE == "postgresql":
        assert creating.count(asynchronous) == 1
        position = creating.index(asynchronous)
        assert creating[position + 1:].index("COMMIT") < creating[position + 1:].index(
            next(s for s in creating if s.startswith("UPDATE task_run SET state")))
        assert seen == ["on", "on"]  # a's and b's submissions commit synchronously
    else:
        assert asynchronous not in creating  # SQLite has no such setting


def test_a_pass_reads_the_manifests_of_queued_attempts_only(app, catalog):
    """Every pass reads all the run's attempts; their manifests (and metrics samples) only where it submits:
    a pass that polls reads none, and an attempt left queued by a failed submit is read with its manifests
    in one more statement, and submitted with them whole."""
    import datetime as dt

    from myapp.extensions import db
    from myapp.models import TaskRun
    from myapp.pipelines.controller import RunController

    run_id, _ = make_pipeline(app, catalog, {"a": {}}, [])
    backend = FakeBackend(script={"a": ["hang"]}, fail_submits=1)
    clock = [dt.datetime(2026, 1, 1, tzinfo=dt.UTC)]
    with app.app_context():
        controller = RunController(lambda task: backend, now=lambda: clock[0])
        controller._pass(run_id)  # a created, its submit fails: queued until the backoff is over
        assert task_states(app, run_id) == [("a", 1, "queued")]
        clock[0] += dt.timedelta(minutes=5)
        with statements(db.engine) as submitting:
            controller._pass(run_id)  # a submitted
        with statements(db.engine) as polling:
            controller._pass(run_id)  # a running
        stored = db.session.scalar(sa.select(TaskRun.manifests).where(TaskRun.pipeline_run_id == run_id))
    assert task_states(app, run_id) == [("a", 1, "running")]
    (job,) = backend.jobs.values()
    assert job["manifests"] == stored and stored
    for sent in (submitting, polling):
        attempts = [s for s in sent if s.startswith("SELECT") and re.search(r"\bFROM task_run\b", s)]
        assert attempts and "task_run.manifests" not in attempts[0] and "task_run.metrics" not in attempts[0]
    assert sum(1 for s in submitting if s.startswith("SELECT task_run.id, task_run.manifests")) == 1
    assert not [s for s in polling if "task_run.manifests" in s]
