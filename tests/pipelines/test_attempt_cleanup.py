"""An ended attempt's log is archived after the commit that ended it, not inside its run's transaction: another
writer can write meanwhile (on SQLite that transaction holds the database's one write lock; on PostgreSQL the
run's row), and a worker killed between that commit and the archive leaves the attempt marked, finished later
by beat's cleanup with nothing lost (myapp/pipelines/attempt_cleanup.py). Real local jobs, a few MiB of log."""
from __future__ import annotations

import datetime as dt
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.pipelines.support import make_pipeline
from tests.support import elsewhere

pytestmark = [pytest.mark.slow, pytest.mark.backends]  # raw locks of each database, real local jobs

ROOT = Path(__file__).resolve().parents[2]
LINES = 300_000  # ~2 MiB of log: its archive takes long enough to write beside it
FLOOD = {"args": {"command": f"seq 1 {LINES}"}}


def another_writer_can_write(run_id: int) -> bool:
    """A write of the run's row on a connection of its own that waits for no lock: refused while a transaction
    holds the run (PostgreSQL) or the database (SQLite)."""
    from myapp.models import PipelineRun

    return elsewhere(sa.update(PipelineRun).where(PipelineRun.id == run_id).values(reconcile_requested_at=None),
                     write=True)


class Probing:
    """The platform's archive, trying another writer while it writes each attempt's log."""

    def __init__(self, inner, run_id: int):
        self.inner, self.run_id, self.wrote = inner, run_id, []

    def write(self, ref, lines, *, keep_lines=False):
        from myapp.extensions import db

        self.wrote.append(not db.session().in_transaction())  # not even a read's snapshot is kept meanwhile
        self.wrote.append(another_writer_can_write(self.run_id))
        self.inner.write(ref, lines, keep_lines=keep_lines)
        self.wrote.append(another_writer_can_write(self.run_id))

    def read(self, ref):
        return self.inner.read(ref)


def attempt_of(run_id: int):
    from myapp.extensions import db
    from myapp.models import TaskRun

    return db.session.scalars(sa.select(TaskRun).where(TaskRun.pipeline_run_id == run_id)
                              .execution_options(populate_existing=True)).one()


def test_the_log_is_archived_while_other_writers_write(app, catalog):
    from myapp.backends import JobRef
    from myapp.backends.registry import backend_for, local_workdir, log_archive
    from myapp.pipelines.controller import RunController
    from tests.support import wait_until

    run_id, _ = make_pipeline(app, catalog, {"flood": FLOOD}, [])
    with app.app_context():
        archive = Probing(log_archive(), run_id)
        controller = RunController(backend_for, archive=archive)
        wait_until(lambda: controller.reconcile(run_id).value == "succeeded", timeout=60, interval=0.2,
                   what="the flooding run to end")
        attempt = attempt_of(run_id)
        ref = JobRef.from_dict(attempt.backend_ref)
        assert attempt.cleanup_at is None  # done, and said so
        lines = archive.read(ref)
        folder = local_workdir() / ref.namespace / ref.job_name
    assert archive.wrote == [True, True, True]  # no transaction held the database while the log was copied
    assert (len(lines), lines[0].line, lines[-1].line) == (LINES, "1", str(LINES))
    assert not folder.exists()  # the job's folder went after


def test_a_worker_killed_before_the_archive_leaves_it_to_beat(app, catalog):
    """The worker ends the attempt, commits, and is killed (SIGKILL) as the archive starts: the attempt stays
    marked, its log is read live meanwhile, and beat's cleanup archives it and removes the job once the dead
    worker's hold has lapsed."""
    from myapp.backends import JobRef
    from myapp.backends.registry import backend_for, default_backend, local_workdir, log_archive
    from myapp.models import TaskState, utcnow
    from myapp.pipelines import attempt_cleanup, observation
    from myapp.pipelines.controller import RunController
    from myapp.pipelines.timers import aware
    from tests.support import wait_until

    run_id, _ = make_pipeline(app, catalog, {"flood": FLOOD}, [])
    with app.app_context():
        assert RunController(backend_for).reconcile(run_id).value == "running"  # submitted, no archive yet
        ref = JobRef.from_dict(attempt_of(run_id).backend_ref)
        wait_until(lambda: default_backend().status(ref).state.value == "succeeded", timeout=60,
                   what="the flooding job to end")
    argv = [sys.executable, "-m", "tests.pipelines.crash_worker", str(run_id), "local", "--crash-archive"]
    crashed = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr[-3000:]

    with app.app_context():
        folder = local_workdir() / ref.namespace / ref.job_name
        attempt = attempt_of(run_id)
        assert attempt.state == TaskState.SUCCEEDED and attempt.cleanup_at is not None  # committed, and marked
        assert folder.is_dir() and not log_archive().exists(ref)
        live = observation.read_page(attempt, 3)  # what GET .../logs answers meanwhile: the job's own files
        assert [line.line for line in live.lines] == [str(n) for n in range(LINES - 2, LINES + 1)]
        held = aware(attempt.cleanup_at)  # the dead worker's hold: beat leaves it until then
        assert held > utcnow() + dt.timedelta(seconds=attempt_cleanup.TAKEN_SECONDS - 120)
        assert attempt_cleanup.due(held)
        assert attempt_cleanup.clean_due(backend_for, log_archive(), held) >= 1
        attempt = attempt_of(run_id)
        assert attempt.cleanup_at is None and "cleanup failed" not in (attempt.reason or "")
        archived = observation.read_page(attempt, 3)
        assert [line.line for line in archived.lines] == [line.line for line in live.lines]
        assert len(log_archive().read(ref)) == LINES
    assert not folder.exists()
