"""Reconcile requests (myapp/shared/reconcile_requests.py) and the controller's timer: at most one pending
reconcile per run, beat asks only for runs that are due, user actions on their own queue."""
from __future__ import annotations

import datetime as dt
import itertools
import uuid

import pytest

from myapp.config import ACTIONS_QUEUE, BACKGROUND_QUEUE
from tests.fake_backend import FakeBackend
from tests.pipelines.support import make_pipeline
from tests.support import wait_until
from tests.world import build_catalog, created

pytestmark = pytest.mark.backends


@pytest.fixture()
def sent(monkeypatch):
    """What would reach the broker: (run id, queue) per reconcile message."""
    from myapp.shared import reconcile_requests

    out: list[tuple[int, str]] = []
    monkeypatch.setattr(reconcile_requests, "send", lambda celery, ids, queue: out.extend((i, queue) for i in ids))
    return out


def row(app, run_id):
    from myapp.extensions import db
    from myapp.models import PipelineRun

    with app.app_context():
        run = db.session.get(PipelineRun, run_id)
        db.session.expunge(run)
        return run


def aware(value):
    return value if value is None or value.tzinfo else value.replace(tzinfo=dt.UTC)


def run_task(app, run_id):
    """The worker's reconcile_run, in this process (its messages go to `sent`)."""
    from myapp.tasks import reconcile_run

    with app.app_context():
        return reconcile_run(run_id)


def test_a_run_has_at_most_one_pending_request(app, catalog, sent, fake_default_backend):
    from myapp.shared import reconcile_requests

    run_id, _ = make_pipeline(app, catalog, {"a": {}}, [])
    fake_default_backend.script["a"] = ["hang"]
    celery = app.extensions["celery"]
    with app.app_context():
        assert reconcile_requests.request(celery, [run_id]) == [run_id]
        assert reconcile_requests.request(celery, [run_id, run_id]) == []
        assert run_id not in reconcile_requests.request_due(celery)  # due, but already requested
    assert [m for m in sent if m[0] == run_id] == [(run_id, ACTIONS_QUEUE)]
    assert run_task(app, run_id) == "running"
    assert row(app, run_id).reconcile_requested_at is None  # cleared when the reconcile started
    with app.app_context():
        assert reconcile_requests.request(celery, [run_id], BACKGROUND_QUEUE) == [run_id]
    assert sent[-1] == (run_id, BACKGROUND_QUEUE)


def test_beat_requests_only_runs_that_are_due_and_resends_stale_requests(app, catalog, sent, fake_default_backend):
    from myapp.extensions import db
    from myapp.models import PipelineRun
    from myapp.pipelines.timers import POLL_MIN
    from myapp.shared import reconcile_requests

    hanging, _ = make_pipeline(app, catalog, {"a": {}}, [])
    fake_default_backend.script["a"] = ["hang"]
    done, _ = make_pipeline(app, catalog, {"b": {}}, [])
    fresh, _ = make_pipeline(app, catalog, {"c": {}}, [])
    run_task(app, hanging)
    run_task(app, done)
    assert row(app, done).state.value == "succeeded" and row(app, done).next_reconcile_at is None
    celery = app.extensions["celery"]
    now = aware(row(app, hanging).next_reconcile_at) - dt.timedelta(seconds=POLL_MIN / 2)
    with app.app_context():
        due = reconcile_requests.request_due(celery, now)
    assert hanging not in due and done not in due and fresh in due
    later = now + dt.timedelta(seconds=POLL_MIN)
    with app.app_context():
        assert hanging in reconcile_requests.request_due(celery, later)
        # Its message waits in a long queue: nothing is sent again, however old the request.
        stale = later + reconcile_requests.STALE + dt.timedelta(seconds=1)
        assert hanging not in reconcile_requests.request_due(celery, later + dt.timedelta(seconds=10), queued=0)
        assert hanging not in reconcile_requests.request_due(celery, stale, queued=10**6)
        # The broker holds fewer messages than there are requests: lost, so the old one is sent again.
        assert hanging in reconcile_requests.request_due(celery, stale, queued=0)
        db.session.commit()
    assert all(queue == BACKGROUND_QUEUE for _, queue in sent)
    assert [i for i, _ in sent].count(done) == 0
    with app.app_context():
        assert db.session.get(PipelineRun, done).reconcile_requested_at is None


def test_the_timer_polls_young_jobs_often_and_long_ones_less(app, catalog):
    from myapp.pipelines.controller import RunController
    from myapp.pipelines.timers import IDLE_RECHECK, POLL_MAX, POLL_MIN

    run_id, _ = make_pipeline(app, catalog, {"a": {}}, [])
    backend = FakeBackend({"a": ["hang"]})
    start = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.UTC)
    clock = {"now": start}
    controller = RunController(lambda task: backend, now=lambda: clock["now"])
    with app.app_context():
        assert controller.reconcile(run_id).value == "running"
    assert aware(row(app, run_id).next_reconcile_at) == start + dt.timedelta(seconds=POLL_MIN)
    for age, wait in ((50, 5.0), (3600, POLL_MAX)):
        clock["now"] = start + dt.timedelta(seconds=age)
        with app.app_context():
            controller.reconcile(run_id)
        assert aware(row(app, run_id).next_reconcile_at) == clock["now"] + dt.timedelta(seconds=wait)
    assert POLL_MAX < IDLE_RECHECK


def test_the_timer_wakes_a_run_for_its_timeout_and_its_retry(app, catalog):
    from myapp.pipelines.controller import RunController
    from myapp.pipelines.dag import retry_delay

    run_id, _ = make_pipeline(app, catalog, {"slow": {"timeout": 3}, "flaky": {"retries": 1, "retry_delay": 60}}, [])
    backend = FakeBackend({"slow": ["hang"], "flaky": ["failed", "succeeded"]})
    start = dt.datetime(2026, 11, 20, 12, 0, tzinfo=dt.UTC)
    controller = RunController(lambda task: backend, now=lambda: start)
    with app.app_context():
        controller.reconcile(run_id)
    # flaky failed at `start` and retries after its backoff; slow times out 3 s after its submit,
    # which is sooner than both its next poll and the retry.
    assert aware(row(app, run_id).next_reconcile_at) == start + dt.timedelta(seconds=1)  # slow's first poll
    later = start + dt.timedelta(seconds=2)
    controller.now = lambda: later
    with app.app_context():
        controller.reconcile(run_id)
    timeout_at = start + dt.timedelta(seconds=3)
    assert aware(row(app, run_id).next_reconcile_at) == timeout_at
    assert timeout_at < start + dt.timedelta(seconds=retry_delay(60, 1))


def test_one_request_drives_a_long_chain_past_max_passes(app, catalog, sent, fake_default_backend):
    from myapp.pipelines.controller import MAX_PASSES

    names = [f"t{i}" for i in range(12)]  # about 3 passes per task: well past MAX_PASSES
    run_id, _ = make_pipeline(app, catalog, {n: {} for n in names}, list(itertools.pairwise(names)))
    assert 3 * len(names) > MAX_PASSES
    assert run_task(app, run_id) == "succeeded"
    assert set(fake_default_backend.creations.values()) == {1} and len(fake_default_backend.creations) == len(names)


def test_a_run_that_ends_wakes_the_runs_waiting_for_it(app, catalog, sent, fake_default_backend):
    from myapp.extensions import db
    from myapp.models import PipelineRun

    first, _ = make_pipeline(app, catalog, {"a": {}}, [], max_active_runs=1)
    with app.app_context():
        run = db.session.get(PipelineRun, first)
        second = PipelineRun(project_id=run.project_id, pipeline_id=run.pipeline_id, run_key=uuid.uuid4().hex)
        db.session.add(second)
        db.session.commit()
        second_id = second.id
    fake_default_backend.script["a"] = ["hang"]
    assert run_task(app, first) == "running"
    assert run_task(app, second_id) == "queued"  # waits for the first
    assert aware(row(app, second_id).next_reconcile_at) > dt.datetime.now(dt.UTC)
    from myapp.tasks import cancel_run

    with app.app_context():
        cancel_run(first)
    assert row(app, first).state.value == "cancelled"
    assert (second_id, BACKGROUND_QUEUE) in sent  # woken by the end of the first, not by a timer


def test_beat_requests_a_run_whose_local_job_finished_before_its_timer(app, catalog, sent):
    """The supervisor's event (myapp/backends/local/events.py), not the timer, brings the run to beat."""
    from myapp.backends.local import LocalBackend
    from myapp.backends.registry import local_workdir
    from myapp.extensions import db
    from myapp.models import PipelineRun
    from myapp.rendering import RenderContext, render
    from myapp.rendering.catalog import get_template
    from myapp.tasks import tick

    run_id, _ = make_pipeline(app, catalog, {"a": {}}, [])
    unknown = run_id + 10**6
    with app.app_context():
        run = db.session.get(PipelineRun, run_id)
        run.next_reconcile_at = dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
        db.session.commit()
        tick()
        assert run_id not in [i for i, _ in sent]  # not due, nothing changed
        local = LocalBackend(local_workdir(), gpus=[])  # the workdir of the registry's default backend
        refs = [local.submit(render(get_template("python"), {"script": "print('done')"},
                                    RenderContext(project="p", namespace="proj-events", pipeline="pipe", run_id=i,
                                                  task="a", attempt=1, service_account="runner")))
                for i in (run_id, unknown)]
        for ref in refs:
            assert local.wait(ref, timeout=60).state.value == "succeeded"
        folder = local.workdir / "events"
        names = {f"{i}.{ref.job_name}.succeeded" for i, ref in zip((run_id, unknown), refs, strict=True)}

        def ours():
            return names & {p.name for p in folder.iterdir()}

        wait_until(lambda: ours() == names, what=lambda: f"the finished markers {names}, saw {ours()}")
        tick()
    assert (run_id, BACKGROUND_QUEUE) in sent and unknown not in [i for i, _ in sent]
    assert row(app, run_id).reconcile_requested_at is not None
    assert not ours()  # taken once, the unknown run's too


@pytest.mark.slow  # API round trips
def test_user_actions_go_to_their_own_queue_and_backfills_to_the_background(app, user, admin, sent, monkeypatch):
    celery = app.extensions["celery"]
    tasks_sent: list[tuple[str, str]] = []
    monkeypatch.setattr(celery, "send_task", lambda name, args, queue: tasks_sent.append((name, queue)))
    cat = build_catalog(admin)
    project = created(user.post("/api/v1/project/", json={"name": f"p{uuid.uuid4().hex[:6]}"}))
    pipe = created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "p"}))
    created(user.post("/api/v1/task/", json={"pipeline_id": pipe["id"], "name": "only",
                                             "template_id": cat["job_template"]}))
    run = created(user.post("/api/v1/pipeline_run/", json={"pipeline_id": pipe["id"]}))
    assert sent == [(run["id"], ACTIONS_QUEUE)]
    backfill = created(user.post(f"/api/v1/pipeline/{pipe['id']}/backfill",
                                 json={"start": "2026-01-01", "end": "2026-01-03"}))
    assert sent[1:] == [(i, BACKGROUND_QUEUE) for i in sorted(backfill["run_ids"])]
    assert user.post(f"/api/v1/pipeline_run/{run['id']}/cancel").status_code == 202
    assert tasks_sent == [("myapp.cancel_run", ACTIONS_QUEUE)]
