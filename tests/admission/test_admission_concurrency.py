"""Two workers admitting to one resource group at once never admit past its capacity: admission holds the
group's row lock from its decision until the pass that submitted commits, so the second worker decides on
what the first committed. With MYAPP_TEST_DATABASE=postgresql this is the row lock (the first worker waits
inside its submit until the second is asking for the lock); on SQLite the database's one writer
serializes the passes."""
from __future__ import annotations

import threading

import pytest

from tests.admission.test_admission_local import make_group, python_task, submit
from tests.fake_backend import FakeBackend
from tests.support import TEST_DATABASE, in_thread, wait_until

pytestmark = pytest.mark.backends


class SlowFirstSubmit(FakeBackend):
    """The first submit (made while its worker holds the group) waits until the other worker asks for
    the group's lock (PostgreSQL) before it returns."""

    def __init__(self, asked: threading.Event):
        super().__init__(script={"a": ["hang"], "b": ["hang"]})
        self.asked = asked
        self.entered = threading.Event()

    def submit(self, manifests):
        if not self.entered.is_set():
            self.entered.set()
            if TEST_DATABASE == "postgresql":
                wait_until(self.asked.is_set, what="the second worker asking for the group's lock", timeout=30)
        return super().submit(manifests)


def test_two_workers_never_admit_past_capacity(app, catalog, monkeypatch):
    from myapp.admission import gate as admission
    from myapp.extensions import db
    from myapp.models import TaskRun
    from myapp.pipelines.controller import RunController

    group, (one, two) = make_group(app, 1000, [None, None])
    first = submit(app, catalog, group, one, {"a": python_task(1)})
    second = submit(app, catalog, group, two, {"b": python_task(1)})
    asked = threading.Event()
    seen: list[tuple[str, dict[str, str]]] = []  # (worker, the group's attempts as its decision saw them)
    lock_group, snapshot = admission.lock_group, admission.snapshot

    def recording_lock(group_id):
        if threading.current_thread().name == "second":
            asked.set()
        return lock_group(group_id)

    def recording_snapshot(g, nodes):
        snap = snapshot(g, nodes)
        seen.append((threading.current_thread().name,
                     {k: e.state.value for k, e in snap.entries.items()}))
        return snap

    monkeypatch.setattr(admission, "lock_group", recording_lock)
    monkeypatch.setattr(admission, "snapshot", recording_snapshot)
    backend = SlowFirstSubmit(asked)

    def worker(run_id, name):
        threading.current_thread().name = name
        with app.app_context():
            return RunController(lambda task: backend).reconcile(run_id)

    t1, out1 = in_thread(worker, first, "first")
    wait_until(backend.entered.is_set, what="the first worker submitting", timeout=30)
    t2, out2 = in_thread(worker, second, "second")
    t1.join(60)
    t2.join(60)
    assert not isinstance(out1[0], BaseException) and not isinstance(out2[0], BaseException), (out1, out2)
    with app.app_context():
        states = {run: [(a.state.value, a.reason) for a in db.session.query(TaskRun).filter_by(pipeline_run_id=run)]
                  for run in (first, second)}
        db.session.commit()
    assert states[first] == [("running", None)], states
    assert states[second] == [("queued", "waiting: no node with 1 free CPUs")], states
    assert sum(backend.submits.values()) == 1
    # The second worker decided on the first one's committed submit, never on its queued attempt.
    second_saw = [entries for who, entries in seen if who == "second"]
    assert second_saw and all("pending" in entries.values() or "running" in entries.values()
                              for entries in second_saw), seen



def test_a_pass_waits_for_its_first_group_only(app):
    """Passes admitting to two groups in opposite orders cannot deadlock: a transaction that already holds
    a group takes another only if it is free (PostgreSQL: BUSY while another pass holds it); a group it
    holds it gets again. On SQLite the one writer serializes passes, and row locks do not exist."""
    from myapp.admission import gate as admission
    from myapp.extensions import db

    first, _ = make_group(app, 1000)
    second, _ = make_group(app, 1000)
    holding, release = threading.Event(), threading.Event()

    def other_pass():
        with app.app_context():
            assert admission.lock_group(second).id == second
            holding.set()
            release.wait(30)
            db.session.rollback()

    thread, out = in_thread(other_pass)
    try:
        wait_until(holding.is_set, what="the other pass holding the second group", timeout=30)
        with app.app_context():
            assert admission.lock_group(first).id == first  # the first group of this transaction: waited for
            taken = admission.lock_group(second)
            if TEST_DATABASE == "postgresql":
                assert taken is admission.BUSY
            else:
                assert taken.id == second
            assert admission.lock_group(first).id == first  # held already
            db.session.rollback()
    finally:
        release.set()
        thread.join(30)
    assert out == [None]
