"""Celery on the real Redis and on the embedded filesystem transport, tasks in an app context."""
from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa

from conftest import REDIS_TEST_URL


@pytest.fixture(params=["embedded", "redis"])
def celery_worker(request, app, tmp_path):
    from celery.contrib.testing.worker import start_worker

    from myapp.celery_app import make_celery
    from myapp.config import celery_settings

    redis_url = REDIS_TEST_URL if request.param == "redis" else None
    if redis_url:
        import redis

        redis.Redis.from_url(redis_url).flushdb()
    celery = make_celery(app, celery_settings(tmp_path, redis_url))
    celery.loader.import_module("celery.contrib.testing.tasks")
    celery.loader.import_default_modules()
    with start_worker(celery, pool="solo", perform_ping_check=True, shutdown_timeout=30):
        yield celery


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
    assert embedded["broker_url"] == "filesystem://"
    assert (tmp_path / "celery" / "queue").is_dir()
    assert celery_settings(tmp_path, "redis://x:6379/0")["broker_url"] == "redis://x:6379/0"
    assert embedded["task_acks_late"] is True
