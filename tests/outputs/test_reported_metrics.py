"""Metrics a task reports through the API with its run's token (POST /api/v1/task_run/{id}/reported_metrics):
kept with the attempt beside those of metrics.jsonl, only for the token's own run, only until the attempt
ends, finite numbers, bounded; bad input stores nothing."""
from __future__ import annotations

import json
import threading

import pytest
import sqlalchemy as sa

from tests.pipelines.support import make_pipeline
from tests.support import wsgi_server


def attempt_of(app, run_id: int, task_id: int, state: str = "running", output_dir: str | None = None,
               number: int = 1) -> int:
    from myapp.extensions import db
    from myapp.models import PipelineRun, TaskRun, TaskState

    with app.app_context():
        run = db.session.get(PipelineRun, run_id)
        row = TaskRun(project_id=run.project_id, pipeline_run_id=run_id, task_id=task_id, attempt=number,
                      state=TaskState(state), manifests=[{"kind": "Job"}], output_dir=output_dir)
        db.session.add(row)
        db.session.commit()
        return row.id


def token_for(app, run_id: int) -> str:
    from myapp.auth.run_tokens import issue, token_of
    from myapp.extensions import db
    from myapp.models import PipelineRun
    from myapp.models.base import utcnow

    with app.app_context():
        row = issue(db.session.get(PipelineRun, run_id), utcnow())
        db.session.commit()
        return token_of(row)


def second_run(app, run_id: int) -> int:
    """Another run of the same pipeline (same project): its token is a developer of that project too."""
    from myapp.extensions import db
    from myapp.models import PipelineRun

    with app.app_context():
        first = db.session.get(PipelineRun, run_id)
        other = PipelineRun(project_id=first.project_id, pipeline_id=first.pipeline_id, run_key=f"other-{run_id}")
        db.session.add(other)
        db.session.commit()
        return other.id


def kept(app, task_run_id: int) -> list | None:
    from myapp.extensions import db
    from myapp.models import TaskRun

    with app.app_context():
        return db.session.scalar(sa.select(TaskRun.reported_metrics).where(TaskRun.id == task_run_id))


@pytest.fixture()
def reporting(app, catalog):
    from tests.support import ApiClient

    run_id, ids = make_pipeline(app, catalog, {"train": {}}, [])
    task_run = attempt_of(app, run_id, ids["train"])
    client = ApiClient(app.test_client(), token_for(app, run_id))
    return run_id, ids, task_run, client


def test_a_task_reports_metrics_with_its_run_token(app, reporting):
    _, _, task_run, client = reporting
    url = f"/api/v1/task_run/{task_run}/reported_metrics"
    for step, (loss, accuracy) in enumerate([(0.9, 0.5), (0.4, 0.75)]):
        answer = client.post(url, json={"step": step, "values": {"loss": loss, "accuracy": accuracy}})
        assert answer.status_code == 200, answer.get_json()
    assert answer.get_json() == {"kept": 4}
    want = [{"step": 0, "name": "accuracy", "value": 0.5}, {"step": 0, "name": "loss", "value": 0.9},
            {"step": 1, "name": "accuracy", "value": 0.75}, {"step": 1, "name": "loss", "value": 0.4}]
    assert kept(app, task_run) == want
    # The run view and the compare page read them where they read metrics.jsonl's.
    assert client.get(f"/api/v1/task_run/{task_run}/outputs").get_json()["metrics"] == want
    assert client.get(f"/api/v1/task_run/{task_run}").get_json()["reported_metrics"] == want


def test_only_the_runs_own_token_reports_and_only_until_the_attempt_ends(app, reporting, user):
    from tests.support import ApiClient

    run_id, ids, task_run, _ = reporting
    body = {"step": 1, "values": {"loss": 0.5}}
    url = f"/api/v1/task_run/{task_run}/reported_metrics"
    other = ApiClient(app.test_client(), token_for(app, second_run(app, run_id)))
    answer = other.post(url, json=body)
    assert answer.status_code == 403 and "reports metrics of that run's tasks only" in answer.get_json()["message"]
    assert user.post(url, json=body).status_code == 404  # not a member of the project
    assert kept(app, task_run) is None
    finished = attempt_of(app, run_id, ids["train"], state="succeeded", number=2)
    client = ApiClient(app.test_client(), token_for(app, run_id))
    answer = client.post(f"/api/v1/task_run/{finished}/reported_metrics", json=body)
    assert answer.status_code == 409 and "reports no more metrics" in answer.get_json()["message"]
    assert kept(app, finished) is None


@pytest.mark.parametrize(("body", "field"), [
    ({"step": 0, "values": {"loss": "0.5"}}, "values.loss"),
    ({"step": 0, "values": {"loss": True}}, "values.loss"),
    ({"step": 0, "values": {"loss": 1e400}}, None),  # Infinity: json_body refuses it before the schema
    ({"step": -1, "values": {"loss": 0.5}}, "step"),
    ({"step": 1.5, "values": {"loss": 0.5}}, "step"),
    ({"step": 0, "values": {}}, "values"),
    ({"step": 0, "values": {f"m{i}": 1 for i in range(101)}}, "values"),
    ({"step": 0, "values": {"x" * 129: 1}}, "values." + "x" * 129),
    ({"step": 0, "values": {"a\nb": 1}}, "values.a\nb"),
    ({"values": {"loss": 0.5}}, "step"),
    ({"step": 0, "values": {"loss": 0.5}, "extra": 1}, "extra"),
])
def test_bad_reports_name_the_field_and_store_nothing(app, reporting, body, field):
    _, _, task_run, client = reporting
    answer = client.request("POST", f"/api/v1/task_run/{task_run}/reported_metrics", data=json.dumps(body),
                            headers={"Content-Type": "application/json"})
    assert answer.status_code == 400, answer.get_json()
    if field is not None:
        fields = [e["field"] for e in answer.get_json()["errors"]]
        assert fields == [field], answer.get_json()
    assert kept(app, task_run) is None


def test_an_attempt_keeps_a_bounded_number_of_metrics(app, reporting, monkeypatch):
    from myapp.outputs import store as outputs_store

    _, _, task_run, client = reporting
    monkeypatch.setattr(outputs_store, "MAX_METRIC_LINES", 5)
    url = f"/api/v1/task_run/{task_run}/reported_metrics"
    assert client.post(url, json={"step": 0, "values": {"a": 1, "b": 2, "c": 3}}).status_code == 200
    answer = client.post(url, json={"step": 1, "values": {"a": 1, "b": 2, "c": 3}})
    assert answer.status_code == 409 and "at most 5" in answer.get_json()["message"]
    assert len(kept(app, task_run)) == 3


def test_concurrent_reports_are_all_kept(app, reporting):
    """Each post appends under the row's lock: none overwrites another's (PostgreSQL: concurrent
    transactions; SQLite: one writer at a time)."""
    from tests.support import ApiClient

    _, _, task_run, client = reporting
    url = f"/api/v1/task_run/{task_run}/reported_metrics"
    failures: list = []

    def post(worker: int) -> None:
        api = ApiClient(app.test_client(), client.token)
        for step in range(5):
            answer = api.post(url, json={"step": step, "values": {f"w{worker}": float(step)}})
            if answer.status_code != 200:
                failures.append(answer.get_json())

    threads = [threading.Thread(target=post, args=(w,)) for w in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert sorted((m["name"], m["step"]) for m in kept(app, task_run)) == sorted(
        (f"w{w}", s) for w in range(6) for s in range(5))


def test_the_end_of_an_attempt_keeps_posted_metrics_beside_the_files(app, reporting):
    from myapp.extensions import db
    from myapp.models import Project, TaskRun, TaskState
    from myapp.outputs import store as outputs_store

    run_id, ids, _, client = reporting
    task_run = attempt_of(app, run_id, ids["train"], output_dir=f"{run_id}/train/2", number=2)
    answer = client.post(f"/api/v1/task_run/{task_run}/reported_metrics", json={"step": 7, "values": {"auc": 0.8}})
    assert answer.status_code == 200
    with app.app_context():
        attempt = db.session.get(TaskRun, task_run)
        folder = outputs_store.attempt_folder(attempt, db.session.get(Project, attempt.project_id).namespace)
        folder.mkdir(parents=True)
        (folder / "metrics.jsonl").write_text(json.dumps({"step": 0, "name": "loss", "value": 0.3}) + "\n")
        # While it runs the API shows both, in the order the end will keep them.
        live = client.get(f"/api/v1/task_run/{task_run}/outputs").get_json()["metrics"]
        attempt.transition(TaskState.SUCCEEDED, None, attempt.created_at)
        outputs_store.record(attempt, db.session.get(Project, attempt.project_id).namespace)
        db.session.commit()
    want = [{"step": 0, "name": "loss", "value": 0.3}, {"step": 7, "name": "auc", "value": 0.8}]
    assert live == want
    assert kept(app, task_run) == want


# What docs/outputs.md tells a job to do with the standard library alone, run by a real sandboxed job.
REPORTER = """
import json, os, urllib.request
base, token = os.environ["PLATFORM_API_URL"], os.environ["PLATFORM_API_TOKEN"]
def call(method, path, body=None):
    request = urllib.request.Request(base + path, method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return json.loads(answer.read())
(attempt,) = call("GET", f"/api/v1/task_run/?pipeline_run_id={os.environ['MYAPP_RUN_ID']}")["items"]
for step, loss in enumerate([0.8, 0.4]):
    print("kept", call("POST", f"/api/v1/task_run/{attempt['id']}/reported_metrics",
                       {"step": step, "values": {"loss": loss}})["kept"])
"""


def test_a_real_job_reports_metrics_with_its_own_token(app, catalog, tmp_path):
    """A sandboxed task of the generic python template (which mounts secret://myapp-api-token/token)
    on the local backend reports through the API with its run's token; the attempt keeps what it posted."""
    import time

    from myapp.backends.local import LocalBackend
    from myapp.backends.registry import local_workdir
    from myapp.extensions import db
    from myapp.models import TaskRun
    from myapp.pipelines.controller import RunController
    from myapp.pipelines.observation import read_lines

    run_id, _ = make_pipeline(app, catalog, {"train": {"args": {"script": REPORTER}}}, [])
    with wsgi_server(app) as url, app.app_context():
        backend = LocalBackend(local_workdir(), override_env={"PLATFORM_API_URL": url, "MYAPP_API_URL": url},
                               gpus=[], restart_delay=0.05,
                               poll_interval=0.02)
        controller = RunController(lambda task: backend)
        deadline = time.monotonic() + 90
        while (state := controller.reconcile(run_id).value) not in ("succeeded", "failed", "cancelled"):
            assert time.monotonic() < deadline, f"run {run_id} still {state}"
            time.sleep(0.2)
        attempt = db.session.scalars(sa.select(TaskRun).where(TaskRun.pipeline_run_id == run_id)).one()
        log = [line.line for line in read_lines(attempt)]
        assert state == "succeeded", (attempt.reason, log)
        assert "kept 2" in log
        assert attempt.reported_metrics == [{"step": 0, "name": "loss", "value": 0.8},
                                            {"step": 1, "name": "loss", "value": 0.4}]
