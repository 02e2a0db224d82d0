"""Run now, run one task alone, rerun from the failed tasks, clone, and webhooks."""
from __future__ import annotations

import http.server
import json
import threading

import pytest

from tests.fake_backend import FakeBackend
from tests.pipelines.support import drive, make_pipeline, task_states
from tests.support import in_process_worker, unique, wait_until
from tests.world import build_catalog, created


def test_rerun_keeps_succeeded_tasks(app, catalog):
    from myapp.extensions import db
    from myapp.models import PipelineRun

    first, _ = make_pipeline(app, catalog, {"a": {}, "b": {}, "c": {}}, [("a", "b"), ("b", "c")])
    backend = FakeBackend({"b": ["failed", "succeeded"]})
    assert drive(app, backend, first) == "failed"
    with app.app_context():
        src = db.session.get(PipelineRun, first)
        rerun = PipelineRun(project_id=src.project_id, pipeline_id=src.pipeline_id, run_key=unique("r"),
                            rerun_of_id=first, logical_date=src.logical_date)
        db.session.add(rerun)
        db.session.commit()
        rerun_id = rerun.id
    assert drive(app, backend, rerun_id) == "succeeded"
    assert task_states(app, rerun_id) == [("a", 1, "succeeded"), ("b", 1, "succeeded"), ("c", 1, "succeeded")]
    assert backend.attempts["a"] == 1  # not run again


def test_debug_run_of_one_task(app, catalog):
    from myapp.extensions import db
    from myapp.models import PipelineRun, RunTrigger

    first, ids = make_pipeline(app, catalog, {"a": {}, "b": {}}, [("a", "b")])
    with app.app_context():
        src = db.session.get(PipelineRun, first)
        debug = PipelineRun(project_id=src.project_id, pipeline_id=src.pipeline_id, run_key=unique("d"),
                            trigger=RunTrigger.DEBUG, only_task_id=ids["b"])
        db.session.add(debug)
        db.session.commit()
        debug_id = debug.id
    assert drive(app, FakeBackend(), debug_id) == "succeeded"
    assert task_states(app, debug_id) == [("b", 1, "succeeded")]


def test_actions_through_the_api(admin, user):
    cat = build_catalog(admin)
    project = created(user.post("/api/v1/project/", json={"name": unique("p")}))
    pipe = created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "p",
                                                        "schedule": "0 1 * * *"}))
    a = created(user.post("/api/v1/task/", json={"pipeline_id": pipe["id"], "name": "a",
                                                 "template_id": cat["job_template"]}))
    b = created(user.post("/api/v1/task/", json={"pipeline_id": pipe["id"], "name": "b",
                                                 "template_id": cat["job_template"]}))
    created(user.post("/api/v1/edge/", json={"pipeline_id": pipe["id"], "upstream_task_id": a["id"],
                                             "downstream_task_id": b["id"]}))
    clone = created(user.post(f"/api/v1/pipeline/{pipe['id']}/clone", json={"name": "p-copy"}))
    assert clone["paused"] is True and clone["schedule"] == "0 1 * * *"
    assert user.get("/api/v1/edge/", query_string={"pipeline_id": clone["id"]}).get_json()["count"] == 1
    assert user.post(f"/api/v1/pipeline/{pipe['id']}/clone", json={"name": "p-copy"}).status_code == 409
    debug = created(user.post(f"/api/v1/task/{b['id']}/run"))
    run = user.get(f"/api/v1/pipeline_run/{debug['run_id']}").get_json()
    assert (run["trigger"], run["only_task_id"]) == ("debug", b["id"])
    assert user.post(f"/api/v1/pipeline_run/{debug['run_id']}/rerun").status_code == 409  # not finished
    backfill = created(user.post(f"/api/v1/pipeline/{pipe['id']}/backfill",
                                 json={"start": "2026-01-01", "end": "2026-01-03"}))
    assert len(backfill["run_ids"]) == 3
    resp = user.post(f"/api/v1/pipeline/{pipe['id']}/backfill", json={"start": "2026-01-03", "end": "2026-01-01"})
    assert resp.status_code == 400 and resp.get_json()["errors"][0]["field"] == "end"


class Hook(http.server.BaseHTTPRequestHandler):
    received: list = []
    fail_first = 0

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if Hook.fail_first > 0:
            Hook.fail_first -= 1
            self.send_response(503)
        else:
            Hook.received.append(body)
            self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture()
def hook_server():
    Hook.received, Hook.fail_first = [], 2
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/hook"
    server.shutdown()


@pytest.mark.slow  # starts a Celery worker
def test_webhook_on_finish_with_retries(app, catalog, hook_server, tmp_path):
    from myapp.celery_app import make_celery
    from myapp.config import celery_settings
    from myapp.extensions import db
    from myapp.models import Pipeline, PipelineRun
    from myapp.pipelines.controller import RunController

    run_id, _ = make_pipeline(app, catalog, {"a": {}}, [])
    with app.app_context():
        pipeline = db.session.get(Pipeline, db.session.get(PipelineRun, run_id).pipeline_id)
        pipeline.webhook_url = hook_server
        db.session.commit()
    celery = make_celery(app, celery_settings(tmp_path, None), default=False)
    celery.loader.import_default_modules()
    results = []
    with in_process_worker(celery, pool="solo", perform_ping_check=False, shutdown_timeout=30):
        backend = FakeBackend()
        notify = celery.send_task
        controller = RunController(lambda task: backend,
                                   on_finish=lambda rid: results.append(notify("myapp.notify_run", args=[rid])))
        with app.app_context():
            for _ in range(10):
                if controller.reconcile(run_id).value == "succeeded":
                    break
        assert len(results) == 1
        # notify_run keeps no result (myapp/tasks.py): the receiver says when it got it, after two 503s.
        wait_until(lambda: Hook.received, what="the webhook retried past two 503s", timeout=60)
        assert Hook.fail_first == 0
    assert len(Hook.received) == 1
    payload = Hook.received[0]
    assert ((payload["event"], payload["run_id"], payload["tasks"]["a"]["state"])
            == ("run.succeeded", run_id, "succeeded"))
