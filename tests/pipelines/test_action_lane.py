"""User actions never wait for the worker's pool (myapp/celery_app.ActionLane): with every pool thread
held by background work, a cancel sent to the actions queue still takes effect."""
from __future__ import annotations

import threading

import pytest

from tests.pipelines.support import make_pipeline
from tests.support import in_process_worker, unique, wait_until

pytestmark = pytest.mark.backends


def _state(app, run_id: int) -> str:
    from myapp.extensions import db
    from myapp.models import PipelineRun

    with app.app_context():
        state = db.session.get(PipelineRun, run_id).state.value
        db.session.rollback()
        return state


@pytest.mark.slow  # starts a Celery worker
def test_a_cancel_passes_a_busy_pool(app, catalog, tmp_path):
    from myapp.celery_app import make_celery
    from myapp.config import ACTIONS_QUEUE, BACKGROUND_QUEUE, celery_settings

    run_id, _ = make_pipeline(app, catalog, {"a": {}}, [])
    celery = make_celery(app, celery_settings(tmp_path, None), default=False)
    celery.loader.import_default_modules()
    release, busy = threading.Event(), threading.Event()

    hold = unique("test.hold_the_pool")

    @celery.task(name=hold)
    def hold_the_pool() -> None:  # a long background task: a reconcile on a loaded machine, a webhook
        busy.set()
        release.wait(30)

    with in_process_worker(celery, pool="threads", concurrency=1, perform_ping_check=False, shutdown_timeout=30):
        try:
            celery.send_task(hold, queue=BACKGROUND_QUEUE)
            wait_until(busy.is_set, what="the pool's one thread held")
            celery.send_task("myapp.cancel_run", args=[run_id], queue=ACTIONS_QUEUE)
            # The pool alone would take it only once the background task ends (30 s, past this wait).
            wait_until(lambda: _state(app, run_id) == "cancelled", what="the cancel, past the busy pool")
            assert not release.is_set() and busy.is_set()
        finally:
            release.set()
    # An embedded worker ends with a cold shutdown, which sends no worker_shutdown: its lane must end with
    # it all the same, or it would go on taking actions from the broker for a worker that is gone.
    wait_until(lambda: not [t for t in threading.enumerate() if t.name == "action lane" and t.is_alive()],
               what="no action lane left once its worker stopped", timeout=10)
