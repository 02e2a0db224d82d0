"""Cron schedules, backfill and run policies (max active runs; wait, skip, cancel)."""
from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

from tests.fake_backend import FakeBackend
from tests.pipelines.support import make_pipeline

pytestmark = pytest.mark.backends

UTC = dt.UTC


def pipeline_of(app, run_id):
    from myapp.extensions import db
    from myapp.models import PipelineRun

    with app.app_context():
        return db.session.get(PipelineRun, run_id).pipeline_id


def runs(app, pipeline_id):
    from myapp.extensions import db
    from myapp.models import PipelineRun

    with app.app_context():
        return db.session.execute(sa.select(PipelineRun.id, PipelineRun.state, PipelineRun.logical_date,
                                            PipelineRun.trigger).where(PipelineRun.pipeline_id == pipeline_id)
                                  .order_by(PipelineRun.id)).all()


def test_latest_fire_time():
    from myapp.pipelines.scheduling import latest_fire_time

    now = dt.datetime(2026, 11, 21, 3, 30, tzinfo=UTC)
    assert latest_fire_time("0 2 * * *", now) == dt.datetime(2026, 11, 21, 2, 0, tzinfo=UTC)
    assert latest_fire_time("0 2 * * *", dt.datetime(2026, 11, 21, 2, 0, tzinfo=UTC)).hour == 2


def test_schedule_creates_one_run_per_fire_time(app, catalog):
    from myapp.extensions import db
    from myapp.models import Pipeline
    from myapp.pipelines.scheduling import schedule_due

    run_id, _ = make_pipeline(app, catalog, {"a": {}}, [])
    pid = pipeline_of(app, run_id)
    with app.app_context():
        pipeline = db.session.get(Pipeline, pid)
        pipeline.schedule, pipeline.created_at = "0 2 * * *", dt.datetime(2026, 1, 1, tzinfo=UTC)
        db.session.commit()
        now = dt.datetime(2026, 11, 21, 3, 0, tzinfo=UTC)
        first = schedule_due(now)
        again = schedule_due(now + dt.timedelta(minutes=5))  # beat fired twice: nothing new
        pipeline = db.session.get(Pipeline, pid)
        pipeline.paused = True
        db.session.commit()
        paused = schedule_due(now + dt.timedelta(days=1))
    mine = [r for r in runs(app, pid) if r.trigger.value == "schedule"]
    ids = {m.id for m in mine}
    # one run: not a second for the repeated beat, none for the next day's fire time while paused
    assert len(mine) == 1 and mine[0].id in first
    assert not ids & (set(again) | set(paused))
    assert mine[0].logical_date == dt.date(2026, 11, 21)


def test_backfill_one_run_per_date_limited_concurrency(app, catalog):
    from myapp.extensions import db
    from myapp.models import Pipeline
    from myapp.pipelines.controller import RunController
    from myapp.pipelines.scheduling import backfill

    first, _ = make_pipeline(app, catalog, {"a": {"args": {"command": "echo {{ ds }}"}}}, [], max_active_runs=2)
    pid = pipeline_of(app, first)
    backend = FakeBackend({"a": ["hang"]})
    controller = RunController(lambda task: backend)
    with app.app_context():
        controller.cancel(first)
        ids = backfill(db.session.get(Pipeline, pid), dt.date(2026, 11, 1), dt.date(2026, 11, 5))
        db.session.commit()
        assert backfill(db.session.get(Pipeline, pid), dt.date(2026, 11, 1), dt.date(2026, 11, 5)) == []
        for run_id in ids:
            controller.reconcile(run_id)
    states = {r.logical_date: r.state.value for r in runs(app, pid) if r.trigger.value == "backfill"}
    assert list(states) == [dt.date(2026, 11, d) for d in range(1, 6)]
    assert list(states.values()) == ["running", "running", "queued", "queued", "queued"]
    manifests = str([job["manifests"] for job in backend.jobs.values()])
    assert "echo 2026-11-01" in manifests and "echo 2026-11-02" in manifests  # each run its own ds
    assert "echo 2026-11-03" not in manifests  # still queued: not submitted


def test_skip_and_cancel_policies(app, catalog):
    from myapp.extensions import db
    from myapp.models import ConcurrencyPolicy, Pipeline, PipelineRun, RunTrigger
    from myapp.pipelines.controller import RunController

    for policy, expected in ((ConcurrencyPolicy.SKIP, ("running", "cancelled")),
                             (ConcurrencyPolicy.CANCEL, ("cancelled", "running"))):
        first, _ = make_pipeline(app, catalog, {"a": {}}, [], concurrency_policy=policy)
        backend = FakeBackend({"a": ["hang"]})
        controller = RunController(lambda task, backend=backend: backend)
        with app.app_context():
            controller.reconcile(first)
            pid = db.session.get(PipelineRun, first).pipeline_id
            second = PipelineRun(project_id=db.session.get(Pipeline, pid).project_id, pipeline_id=pid,
                                 run_key=f"scheduled-{policy.value}", trigger=RunTrigger.SCHEDULE)
            db.session.add(second)
            db.session.commit()
            controller.reconcile(second.id)
            states = tuple(db.session.get(PipelineRun, r).state.value for r in (first, second.id))
        assert states == expected, policy


def test_depends_on_past_waits_for_the_previous_run(app, catalog):
    from myapp.extensions import db
    from myapp.models import PipelineRun
    from myapp.pipelines.controller import RunController

    first, _ = make_pipeline(app, catalog, {"a": {}}, [], depends_on_past=True, max_active_runs=2)
    backend = FakeBackend({"a": ["hang", "succeeded"]})
    controller = RunController(lambda task: backend)
    with app.app_context():
        src = db.session.get(PipelineRun, first)
        second = PipelineRun(project_id=src.project_id, pipeline_id=src.pipeline_id, run_key="next",
                             logical_date=dt.date(2026, 11, 21))
        db.session.add(second)
        db.session.commit()
        controller.reconcile(first)
        controller.reconcile(second.id)
        assert backend.attempts["a"] == 1  # the second run's "a" waits for the first's
        backend.jobs[next(iter(backend.jobs))]["outcome"] = "succeeded"
        for _ in range(5):
            controller.reconcile(first)
            controller.reconcile(second.id)
        assert [db.session.get(PipelineRun, r).state.value for r in (first, second.id)] == ["succeeded", "succeeded"]
    assert backend.attempts["a"] == 2
