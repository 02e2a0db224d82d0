"""Celery on the real Redis and on the embedded SQLite transport, tasks in an app context."""
from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa

from tests.pipelines.support import make_pipeline
from tests.support import REDIS_TEST_URL, in_process_worker, wait_until
from tests.world import build_catalog, created

pytestmark = pytest.mark.backends


@pytest.fixture(params=["embedded", "redis"])
def celery_worker(request, app, tmp_path):
    from myapp.celery_app import make_celery
    from myapp.config import celery_settings

    redis_url = REDIS_TEST_URL if request.param == "redis" else None
    if redis_url:
        import redis

        redis.Redis.from_url(redis_url).flushdb()
    celery = make_celery(app, celery_settings(tmp_path, redis_url), default=False)
    celery.loader.import_module("celery.contrib.testing.tasks")
    celery.loader.import_default_modules()
    with in_process_worker(celery, pool="solo", perform_ping_check=True, shutdown_timeout=30):
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


@pytest.mark.slow  # starts a Celery worker
def test_a_worker_in_the_tests_process_leaves_later_tests_their_warnings(app, tmp_path, caplog):
    """Celery's logging setup would leave the root logger at the worker's ERROR level for the rest of the process:
    a later test there saw no warning (tests/outputs/test_outputs_claim.py's failed reader, after this module)."""
    import logging

    from myapp.celery_app import make_celery
    from myapp.config import celery_settings

    celery = make_celery(app, celery_settings(tmp_path, None), default=False)
    with in_process_worker(celery, pool="solo", perform_ping_check=False, shutdown_timeout=30):
        pass
    logging.getLogger("myapp.outputs.store").warning("outputs of task run 1 not copied from the claim")
    assert "not copied from the claim" in caplog.text


def test_broker_selection_follows_redis_url(tmp_path):
    from myapp.config import ACTIONS_QUEUE, BACKGROUND_QUEUE, celery_settings

    embedded = celery_settings(tmp_path, None)
    assert embedded["broker_url"] == "myappsql://"
    assert embedded["broker_transport_options"]["path"] == str(tmp_path / "celery" / "broker.sqlite")
    assert celery_settings(tmp_path, "redis://x:6379/0")["broker_url"] == "redis://x:6379/0"
    assert embedded["task_acks_late"] is True
    assert [q.name for q in embedded["task_queues"]] == [ACTIONS_QUEUE, BACKGROUND_QUEUE]
    assert embedded["task_default_queue"] == BACKGROUND_QUEUE


def test_embedded_broker_hands_each_message_to_exactly_one_consumer(tmp_path):
    """Two consumers (threads, each its own connection) polling while a producer writes: every
    message arrives once, whole, in the order sent per consumer; other queues are untouched."""
    import threading
    from queue import Empty

    from kombu import Connection

    from myapp.config import celery_settings
    from myapp.shared import broker  # noqa: F401 - registers myappsql://

    options = celery_settings(tmp_path, None)["broker_transport_options"]
    count, received, errors = 300, [[], []], []
    done = threading.Event()

    def consume(into):
        with Connection("myappsql://", transport_options=options) as conn:
            channel = conn.default_channel
            while not done.is_set():
                try:
                    into.append(channel._get("q"))
                except Empty:
                    continue
                except Exception as exc:
                    errors.append(exc)
                    return

    readers = [threading.Thread(target=consume, args=(into,)) for into in received]
    for reader in readers:
        reader.start()
    with Connection("myappsql://", transport_options=options) as conn:
        channel = conn.default_channel
        channel._put("other", {"n": -1})
        for n in range(count):
            channel._put("q", {"n": n, "body": "x" * 1000})
        wait_until(lambda: sum(map(len, received)) >= count, what="both consumers to drain the queue")
        done.set()
        for reader in readers:
            reader.join(timeout=30)
        assert channel._size("q") == 0 and channel._size("other") == 1
    assert errors == []
    got = [m["n"] for m in received[0] + received[1]]
    assert sorted(got) == list(range(count))  # none lost, none twice
    assert all(m["body"] == "x" * 1000 for m in received[0] + received[1])
    for part in received:
        assert [m["n"] for m in part] == sorted(m["n"] for m in part)


def test_embedded_broker_fanout_reaches_queues_bound_in_another_connection(tmp_path):
    """Celery's control (ping, inspect) broadcasts on a fanout exchange: a binding made by one
    process must route the messages another publishes, so the bindings live in the file."""
    from kombu import Connection, Exchange, Queue

    from myapp.config import celery_settings
    from myapp.shared import broker  # noqa: F401

    options = celery_settings(tmp_path, None)["broker_transport_options"]
    exchange = Exchange("bcast", type="fanout")
    with Connection("myappsql://", transport_options=options) as consumer:
        for name in ("w1", "w2"):
            Queue(name, exchange)(consumer.default_channel).declare()
        with Connection("myappsql://", transport_options=options) as producer:
            producer.Producer(exchange=exchange).publish({"ping": 1}, declare=[])
        channel = consumer.default_channel
        assert channel._size("w1") == 1 and channel._size("w2") == 1
        Queue("w1", exchange)(channel).delete()
        assert channel.get_table("bcast") == [("", "", "w2")]


def test_worker_reconciles_a_run(app, celery_worker, fake_default_backend, catalog):
    """One request drives the run to its end: the worker asks again itself while it has more to do."""
    from myapp.extensions import db
    from myapp.models import PipelineRun
    from myapp.shared import reconcile_requests

    run_id, _ = make_pipeline(app, catalog, {"a": {}, "b": {}}, [("a", "b")])
    with app.app_context():
        assert reconcile_requests.request(celery_worker, [run_id]) == [run_id]

    def state():
        with app.app_context():
            run = db.session.get(PipelineRun, run_id)
            db.session.commit()
            return run.state.value if run.is_finished else None

    assert wait_until(state, timeout=30, what="the worker to finish the run") == "succeeded"
    assert set(fake_default_backend.creations.values()) == {1} and len(fake_default_backend.creations) == 2
    with app.app_context():
        run = db.session.get(PipelineRun, run_id)
        assert run.next_reconcile_at is None  # finished: beat never looks at it again


@pytest.mark.slow  # starts a Celery worker
def test_run_created_through_the_api_is_driven_by_the_worker(app, user, admin, fake_default_backend):
    """Web stores intent and enqueues on the app's own (embedded) broker; a worker picks it up."""
    cat = build_catalog(admin)
    project = created(user.post("/api/v1/project/", json={"name": f"p{uuid.uuid4().hex[:6]}"}))
    pipe = created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "p"}))
    created(user.post("/api/v1/task/", json={"pipeline_id": pipe["id"], "name": "only",
                                             "template_id": cat["job_template"]}))
    celery = app.extensions["celery"]
    celery.loader.import_module("celery.contrib.testing.tasks")
    # The app (and its broker) outlive this test: earlier tests' requests for their own runs, never
    # consumed for want of a worker, would come first and eat this test's time.
    assert celery.control.purge() >= 0
    with in_process_worker(celery, pool="solo", perform_ping_check=True, shutdown_timeout=30):
        run = created(user.post("/api/v1/pipeline_run/", json={"pipeline_id": pipe["id"]}))
        state = wait_until(lambda: (s := user.get(f"/api/v1/pipeline_run/{run['id']}").get_json()["state"])
                           in ("succeeded", "failed") and s, timeout=30, interval=0.1,
                           what="the worker to finish the run")
    assert state == "succeeded"
    runs = user.get("/api/v1/task_run/", query_string={"pipeline_run_id": run["id"]}).get_json()["items"]
    assert [(r["state"], r["attempt"]) for r in runs] == [("succeeded", 1)]
    assert runs[0]["manifests"][0]["kind"] == "Job"
