"""Celery on the real Redis and on the embedded filesystem transport, tasks in an app context."""
from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa

from tests.fake_backend import FakeBackend
from tests.pipelines.support import make_pipeline
from tests.support import REDIS_TEST_URL, wait_until
from tests.world import build_catalog, created


@pytest.fixture(params=["embedded", "redis"])
def celery_worker(request, app, tmp_path):
    from celery.contrib.testing.worker import start_worker

    from myapp.celery_app import make_celery
    from myapp.config import celery_settings

    redis_url = REDIS_TEST_URL if request.param == "redis" else None
    if redis_url:
        import redis

        redis.Redis.from_url(redis_url).flushdb()
    celery = make_celery(app, celery_settings(tmp_path, redis_url), default=False)
    celery.loader.import_module("celery.contrib.testing.tasks")
    celery.loader.import_default_modules()
    with start_worker(celery, pool="solo", perform_ping_check=True, shutdown_timeout=30):
        yield celery


@pytest.mark.slow  # starts a Celery worker
def test_task_runs_in_app_context_and_writes_sql(app, celery_worker):
    from myapp.extensions import db
    from myapp.models import WorkerHeartbeat

    host = f"test-{uuid.uuid4().hex[:8]}"
    first = celery_worker.send_task("myapp.heartbeat", args=[host]).get(timeout=30)
    second = celery_worker.send_task("myapp.heartbeat", args=[host]).get(timeout=30)
    assert (first["beats"], second["beats"]) == (1, 2)
    with app.app_context():
        row = db.session.scalar(sa.select(WorkerHeartbeat).filter_by(hostname=host))
        assert row.beats == 2


def test_broker_selection_follows_redis_url(tmp_path):
    from myapp.config import celery_settings

    embedded = celery_settings(tmp_path, None)
    assert embedded["broker_url"] == "myappfs://"
    assert (tmp_path / "celery" / "queue").is_dir()
    assert celery_settings(tmp_path, "redis://x:6379/0")["broker_url"] == "redis://x:6379/0"
    assert embedded["task_acks_late"] is True


def test_embedded_broker_never_hands_out_half_written_messages(tmp_path):
    """A consumer polling while a producer writes gets every message whole (kombu's own filesystem
    transport creates the file before writing it, and a fast reader got empty JSON)."""
    import threading

    from kombu import Connection

    from myapp import broker  # noqa: F401 - registers myappfs://
    from myapp.config import celery_settings

    options = celery_settings(tmp_path, None)["broker_transport_options"]
    payload = {"body": "x" * 200_000}  # large enough that a write is not one syscall's worth
    count, received, errors = 200, [], []

    def consume():
        with Connection("myappfs://", transport_options=options) as conn:
            channel = conn.default_channel
            while len(received) < count:
                try:
                    received.append(channel._get("q"))
                except Exception as exc:
                    if type(exc).__name__ != "Empty":
                        errors.append(exc)
                        return

    reader = threading.Thread(target=consume)
    reader.start()
    with Connection("myappfs://", transport_options=options) as conn:
        for _ in range(count):
            conn.default_channel._put("q", payload)
    reader.join(timeout=60)
    assert errors == [] and len(received) == count
    assert all(message == payload for message in received)


@pytest.fixture()
def fake_default_backend(app):
    """Workers resolve backends through the registry; put a fake one there for this process."""
    from myapp.backends import registry

    backend = FakeBackend()
    key = ("default", app.config["MYAPP_BACKEND"])
    saved = registry._backends.get(key)
    registry._backends[key] = backend
    yield backend
    registry._backends.pop(key)
    if saved is not None:
        registry._backends[key] = saved


@pytest.mark.slow  # starts a Celery worker
def test_worker_reconciles_a_run(app, celery_worker, fake_default_backend, catalog):
    run_id, _ = make_pipeline(app, catalog, {"a": {}, "b": {}}, [("a", "b")])
    state = None
    for _ in range(10):  # what beat's tick does
        state = celery_worker.send_task("myapp.reconcile_run", args=[run_id]).get(timeout=30)
        if state == "succeeded":
            break
    assert state == "succeeded"
    assert set(fake_default_backend.creations.values()) == {1} and len(fake_default_backend.creations) == 2


@pytest.mark.slow  # starts a Celery worker
def test_run_created_through_the_api_is_driven_by_the_worker(app, user, admin, fake_default_backend):
    """Web stores intent and enqueues on the app's own (embedded) broker; a worker picks it up."""
    from celery.contrib.testing.worker import start_worker

    cat = build_catalog(admin)
    project = created(user.post("/api/v1/project/", json={"name": f"p{uuid.uuid4().hex[:6]}"}))
    pipe = created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "p"}))
    created(user.post("/api/v1/task/", json={"pipeline_id": pipe["id"], "name": "only",
                                             "template_id": cat["job_template"]}))
    celery = app.extensions["celery"]
    celery.loader.import_module("celery.contrib.testing.tasks")
    with start_worker(celery, pool="solo", perform_ping_check=True, shutdown_timeout=30):
        run = created(user.post("/api/v1/pipeline_run/", json={"pipeline_id": pipe["id"]}))
        state = wait_until(lambda: (s := user.get(f"/api/v1/pipeline_run/{run['id']}").get_json()["state"])
                           in ("succeeded", "failed") and s, timeout=10, interval=0.1,
                           what="the worker to finish the run")
    assert state == "succeeded"
    runs = user.get("/api/v1/task_run/", query_string={"pipeline_run_id": run["id"]}).get_json()["items"]
    assert [(r["state"], r["attempt"]) for r in runs] == [("succeeded", 1)]
    assert runs[0]["manifests"][0]["kind"] == "Job"
