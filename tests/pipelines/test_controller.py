"""The run controller against a fast fake backend: DAG order, retries, trigger rules,
timeouts, macros, duplicate reconciles and backend error bursts."""
from __future__ import annotations

import datetime as dt
import threading

import pytest
import sqlalchemy as sa

from myapp.backends import JobState
from tests.fake_backend import FakeBackend
from tests.pipelines.support import drive, make_pipeline, task_states


def test_linear_pipeline_runs_in_order_each_once(app, catalog):
    run_id, _ = make_pipeline(app, catalog, {"a": {}, "b": {}, "c": {}}, [("a", "b"), ("b", "c")])
    backend = FakeBackend()
    assert drive(app, backend, run_id) == "succeeded"
    assert task_states(app, run_id) == [("a", 1, "succeeded"), ("b", 1, "succeeded"), ("c", 1, "succeeded")]
    assert set(backend.creations.values()) == {1}


def test_retries_then_success(app, catalog):
    run_id, _ = make_pipeline(app, catalog, {"a": {"retries": 2}}, [])
    backend = FakeBackend({"a": ["failed", "failed", "succeeded"]})
    assert drive(app, backend, run_id) == "succeeded"
    assert [s for _, _, s in task_states(app, run_id)] == ["failed", "failed", "succeeded"]
    assert len(backend.creations) == 3 and set(backend.creations.values()) == {1}


def test_failure_marks_downstream_and_trigger_rules(app, catalog):
    tasks = {"a": {}, "b": {}, "c": {}, "alert": {"trigger_rule": "one_failed"},
             "cleanup": {"trigger_rule": "all_done"}, "report": {}}
    edges = [("a", "b"), ("b", "c"), ("b", "alert"), ("c", "cleanup"), ("a", "report")]
    run_id, _ = make_pipeline(app, catalog, tasks, edges)
    backend = FakeBackend({"b": ["failed"]})
    assert drive(app, backend, run_id) == "failed"
    states = {n: s for n, _, s in task_states(app, run_id)}
    assert states == {"a": "succeeded", "b": "failed", "c": "upstream_failed", "alert": "succeeded",
                      "cleanup": "succeeded", "report": "succeeded"}


def test_skipped_when_one_failed_rule_has_nothing_to_do(app, catalog):
    run_id, _ = make_pipeline(app, catalog, {"a": {}, "alert": {"trigger_rule": "one_failed"}}, [("a", "alert")])
    assert drive(app, FakeBackend(), run_id) == "succeeded"
    assert {n: s for n, _, s in task_states(app, run_id)} == {"a": "succeeded", "alert": "skipped"}


def test_timeout_cancels_and_fails(app, catalog):
    from myapp.pipelines.controller import RunController

    run_id, _ = make_pipeline(app, catalog, {"slow": {"timeout": 60}}, [])
    backend = FakeBackend({"slow": ["hang"]})
    clock = [dt.datetime(2026, 11, 21, tzinfo=dt.UTC)]
    controller = RunController(lambda task: backend, now=lambda: clock[0])
    with app.app_context():
        assert controller.reconcile(run_id).value == "running"
        clock[0] += dt.timedelta(seconds=61)
        assert controller.reconcile(run_id).value == "failed"
    assert backend.cancelled
    from myapp.extensions import db
    from myapp.models import TaskRun

    with app.app_context():
        assert "timed out after 60s" in db.session.scalar(sa.select(TaskRun.reason).filter_by(pipeline_run_id=run_id))


def test_macros_are_data_not_code(app, catalog):
    from myapp.extensions import db
    from myapp.models import TaskRun

    script = "print('{{ ds }}', '{{ run_id }}', '{{ 7*7 }}', '{{ cycler.__init__ }}')"
    run_id, _ = make_pipeline(app, catalog, {"a": {"args": {"script": script}}}, [])
    assert drive(app, FakeBackend(), run_id) == "succeeded"
    with app.app_context():
        manifests = db.session.scalar(sa.select(TaskRun.manifests).filter_by(pipeline_run_id=run_id))
    text = str(manifests)
    # The script line as written, expressions unevaluated (a run id of 49 would make a search for '49' flaky).
    assert f"print('2026-11-20', '{run_id}', '{{{{ 7*7 }}}}', '{{{{ cycler.__init__ }}}}')" in text


def test_duplicate_reconciles_submit_each_attempt_once(app, catalog):
    """Duplicated Celery messages: many controllers on one run at once, still one object per attempt."""
    from myapp.pipelines.controller import RunController

    run_id, _ = make_pipeline(app, catalog, {f"t{i}": {} for i in range(6)}, [("t0", "t1"), ("t0", "t2")])
    backend = FakeBackend()
    errors = []

    def worker():
        controller = RunController(lambda task: backend)
        try:
            with app.app_context():
                for _ in range(15):
                    controller.reconcile(run_id)
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert drive(app, backend, run_id) == "succeeded"
    assert len(backend.creations) == 6 and set(backend.creations.values()) == {1}
    assert len(task_states(app, run_id)) == 6


def test_backend_error_burst_is_retried(app, catalog, monkeypatch):
    # Fewer failures in a row than MYAPP_SUBMIT_ATTEMPTS (5); no backoff wait (tests/pipelines/test_submission.py).
    monkeypatch.setitem(app.config, "MYAPP_BACKEND_RETRY_SECONDS", 0)
    run_id, _ = make_pipeline(app, catalog, {"a": {}, "b": {}}, [("a", "b")])
    backend = FakeBackend(fail_submits=4)
    assert drive(app, backend, run_id) == "succeeded"
    assert set(backend.creations.values()) == {1} and len(backend.creations) == 2


def test_cancel_stops_running_attempts(app, catalog):
    from myapp.pipelines.controller import RunController

    run_id, _ = make_pipeline(app, catalog, {"a": {}, "b": {}}, [("a", "b")])
    backend = FakeBackend({"a": ["hang"]})
    controller = RunController(lambda task: backend)
    with app.app_context():
        controller.reconcile(run_id)
        controller.cancel(run_id)
        assert controller.reconcile(run_id).value == "cancelled"
    assert backend.cancelled
    assert task_states(app, run_id) == [("a", 1, "cancelled")]


def test_finished_attempts_are_archived_then_cleaned_up(app, catalog, tmp_path):
    from myapp.backends import JobRef
    from myapp.backends.archive import FileLogArchive
    from myapp.extensions import db
    from myapp.models import TaskRun
    from myapp.pipelines.controller import RunController

    run_id, _ = make_pipeline(app, catalog, {"a": {}, "b": {}}, [("a", "b")])
    backend, archive = FakeBackend({"b": ["failed"]}), FileLogArchive(tmp_path)
    controller = RunController(lambda task: backend, archive=archive)
    with app.app_context():
        for _ in range(10):
            if controller.reconcile(run_id).value == "failed":
                break
        refs = [JobRef.from_dict(r) for r in db.session.scalars(
            sa.select(TaskRun.backend_ref).filter_by(pipeline_run_id=run_id))]
    assert len(refs) == 2 and all(backend.cleaned[r.job_name] == 1 for r in refs)
    assert [line.line for line in archive.read(refs[1])] == [f"log of {refs[1].job_name}"]
    with app.app_context():
        samples = db.session.scalars(sa.select(TaskRun.metrics).filter_by(pipeline_run_id=run_id)).all()
    assert all(s and s[0]["cpu_cores"] == 0.5 and s[0]["replica"] == "master-0" for s in samples)


def test_every_backend_job_state_maps_to_a_task_state():
    """A new JobState must be given a TaskState explicitly; it can only be one an attempt on a backend takes."""
    from myapp.models import TaskState
    from myapp.models.states import TASK_ACTIVE, TASK_TERMINAL
    from myapp.pipelines.backend_calls import TASK_STATE_OF_JOB

    assert set(TASK_STATE_OF_JOB) == set(JobState)
    assert set(TASK_STATE_OF_JOB.values()) <= TASK_ACTIVE | TASK_TERMINAL
    assert not set(TASK_STATE_OF_JOB.values()) & {TaskState.QUEUED, TaskState.SKIPPED, TaskState.UPSTREAM_FAILED}
    assert len(set(TASK_STATE_OF_JOB.values())) == len(JobState)  # no two backend states collapse into one


@pytest.mark.parametrize("reported", list(JobState), ids=lambda s: s.value)
def test_attempt_takes_the_mapped_state_of_what_the_backend_reports(app, catalog, reported):
    from myapp.backends import Status
    from myapp.pipelines.backend_calls import TASK_STATE_OF_JOB

    class Reporting(FakeBackend):
        def status(self, ref):
            return Status(reported, f"backend says {reported.value}")

    run_id, _ = make_pipeline(app, catalog, {"a": {}}, [])
    drive(app, Reporting(), run_id, passes=3)
    assert task_states(app, run_id) == [("a", 1, TASK_STATE_OF_JOB[reported].value)]
