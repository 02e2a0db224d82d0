"""A borrower admission preempts is stopped after the commit that ended it, never while the pass holds the
group's row and the runs' rows (a cancel waits out the job's grace period: seconds); until it has stopped the
group admits nothing, so the owner's job starts only after. A worker that dies between that commit and the
stop leaves the attempt marked, and the cleanup beat's tick asks for stops it (myapp/pipelines/attempt_cleanup.py).
"""
from __future__ import annotations

import pytest
import sqlalchemy as sa

from tests.admission.test_admission_local import make_group, python_task, submit
from tests.fake_backend import FakeBackend
from tests.support import elsewhere

pytestmark = pytest.mark.backends  # the rows each database holds while a pass runs


class Killed(BaseException):
    """The worker dies (not an error the platform handles)."""


class Probing(FakeBackend):
    """Records, at each cancel, whether the worker's session has a transaction open, whether another writer can
    write the group's row, and the borrower's attempt's state as another connection reads it."""

    def __init__(self, group_id: int, run_id: int, die: bool = False):
        super().__init__(script={"long": ["hang"], "mine": ["hang"]})
        self.group_id, self.run_id, self.die = group_id, run_id, die
        self.events: list[tuple] = []

    def submit(self, manifests):
        ref = super().submit(manifests)
        self.events.append(("submit", ref.job_name))
        return ref

    def cancel(self, ref):
        from myapp.extensions import db
        from myapp.models import ResourceGroup, TaskRun

        if self.die:
            self.die = False
            raise Killed()
        state = elsewhere(sa.select(TaskRun.state).where(TaskRun.pipeline_run_id == self.run_id)
                          .order_by(TaskRun.id).limit(1))
        free = elsewhere(sa.update(ResourceGroup).where(ResourceGroup.id == self.group_id)
                         .values(policy="sieve"), write=True)
        self.events.append(("cancel", ref.job_name, db.session().in_transaction(), free, state.value))
        super().cancel(ref)


def borrower_running(app, catalog, die=False):
    """An owner's quota lent to a borrower whose job runs: (group, owner project, borrower's run, backend)."""
    from myapp.extensions import db
    from myapp.models import TaskRun
    from myapp.pipelines.controller import RunController

    group, (owner, borrower) = make_group(app, 2000, [{"cpu_millicores": 2000}, None])
    borrowed = submit(app, catalog, group, borrower, {"long": python_task(60, cpu="2")})
    backend = Probing(group, borrowed, die)
    with app.app_context():
        RunController(lambda task: backend).reconcile(borrowed)
        assert db.session.scalars(sa.select(TaskRun.state).where(TaskRun.pipeline_run_id == borrowed)).one() \
            .value in ("pending", "running")
        db.session.commit()
    return group, owner, borrowed, backend


def attempts(run_id):
    from myapp.extensions import db
    from myapp.models import TaskRun

    return db.session.scalars(sa.select(TaskRun).where(TaskRun.pipeline_run_id == run_id).order_by(TaskRun.id)
                              .execution_options(populate_existing=True)).all()


def test_the_borrower_is_stopped_after_the_commit_and_the_owner_starts_after_it(app, catalog, tmp_path):
    from myapp.backends.archive import FileLogArchive
    from myapp.pipelines.controller import RunController

    group, owner, borrowed, backend = borrower_running(app, catalog)
    owned = submit(app, catalog, group, owner, {"mine": python_task(60, cpu="2")})
    with app.app_context():
        RunController(lambda task: backend, archive=FileLogArchive(tmp_path / "logs")).reconcile(owned)
        (victim,) = attempts(borrowed)
        (mine,) = attempts(owned)
        assert victim.state.value == "cancelled" and victim.cleanup_at is None
        assert "preempted in resource group" in victim.reason and "; the task starts over" in victim.reason
        assert victim.metrics  # read once its job stopped
        assert mine.state.value in ("pending", "running")  # admitted once the borrower had stopped
    kinds = [event[0] for event in backend.events]
    assert kinds == ["submit", "cancel", "submit"], backend.events  # the owner's job after the stop
    _, job, in_transaction, group_free, state = backend.events[1]
    # No transaction of the worker open, the group's row free for another worker, and the borrower's end
    # committed (another connection reads it) when its job was stopped.
    assert (in_transaction, group_free, state) == (False, True, "cancelled"), backend.events[1]
    assert backend.cleaned[job] == 1


def test_a_stop_left_by_a_dead_worker_is_done_by_the_next_tick(app, catalog, tmp_path):
    """The worker dies right after the commit that preempted the borrower: the attempt stays marked, the group
    admits nothing meanwhile (its room is not free yet), and beat's cleanup stops the job; then the owner's
    job starts."""
    from myapp.backends.archive import FileLogArchive
    from myapp.pipelines import attempt_cleanup
    from myapp.pipelines.controller import RunController
    from myapp.pipelines.timers import aware

    group, owner, borrowed, backend = borrower_running(app, catalog, die=True)
    owned = submit(app, catalog, group, owner, {"mine": python_task(60, cpu="2")})
    archive = FileLogArchive(tmp_path / "logs")
    with app.app_context():
        controller = RunController(lambda task: backend, archive=archive)
        with pytest.raises(Killed):
            controller.reconcile(owned)
        (victim,) = attempts(borrowed)
        assert victim.state.value == "cancelled" and victim.cleanup_at is not None  # committed, and marked
        held = aware(victim.cleanup_at)
        assert not attempt_cleanup.due() and attempt_cleanup.due(held)  # the dead worker's hold first
        RunController(lambda task: backend, archive=archive).reconcile(owned)
        (mine,) = attempts(owned)
        assert mine.state.value == "queued" and mine.reason == "waiting: preempting a borrower to make room"
        assert [event[0] for event in backend.events] == ["submit"]  # nothing stopped, nothing else started

        assert attempt_cleanup.clean_due(lambda task: backend, archive, held) == 1  # beat's tick asks for it
        (victim,) = attempts(borrowed)
        assert victim.cleanup_at is None and "; the task starts over" in victim.reason
        job = backend.events[0][1]
        assert [event[:2] for event in backend.events] == [("submit", job), ("cancel", job)]
        RunController(lambda task: backend, archive=archive).reconcile(owned)
        (mine,) = attempts(owned)
        assert mine.state.value in ("pending", "running") and [event[0] for event in backend.events][-1] == "submit"
