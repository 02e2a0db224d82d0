"""What the browser UI relies on: cookie-session login, the SPA under /ui/, the editor's graph save,
server-sent events for run states and logs, and the capacity-against-use report."""
from __future__ import annotations

import json
import time

import pytest

from tests.support import unique
from tests.world import build_catalog, created


# ---- session login (cookie + CSRF) ---------------------------------------------------------------
def csrf_of(client) -> str:
    return client.get("/api/v1/session/").get_json()["csrf_token"]


def test_session_login_logout(app, make_user):
    someone = make_user()
    browser = app.test_client()
    status = browser.get("/api/v1/session/").get_json()
    assert status["authenticated"] is False and status["csrf_token"]
    assert browser.get("/api/v1/me/").status_code == 401

    token = csrf_of(browser)
    wrong = browser.post("/api/v1/session/login", json={"username": someone.username, "password": "nope"},
                         headers={"X-CSRFToken": token})
    assert wrong.status_code == 401 and wrong.get_json()["message"] == "Invalid username or password"
    ok = browser.post("/api/v1/session/login", json={"username": someone.username, "password": someone.password},
                      headers={"X-CSRFToken": token})
    assert ok.status_code == 200, ok.get_json()
    assert browser.get("/api/v1/me/").get_json()["username"] == someone.username
    # Session writes need the CSRF token; the same request with it passes.
    body = {"name": unique("p")}
    assert browser.post("/api/v1/project/", json=body).status_code == 400
    assert browser.post("/api/v1/project/", json=body, headers={"X-CSRFToken": token}).status_code == 201

    assert browser.post("/api/v1/session/logout", headers={"X-CSRFToken": token}).status_code == 200
    assert browser.get("/api/v1/me/").status_code == 401


def test_session_login_needs_csrf_and_fields(app, make_user):
    someone = make_user()
    browser = app.test_client()
    no_token = browser.post("/api/v1/session/login", json={"username": someone.username, "password": someone.password})
    assert no_token.status_code == 400 and "CSRF" in no_token.get_json()["message"]
    token = csrf_of(browser)
    missing = browser.post("/api/v1/session/login", json={"username": someone.username},
                           headers={"X-CSRFToken": token})
    assert missing.status_code == 400
    assert missing.get_json()["errors"] == [{"field": "password", "reason": "is required"}]
    assert browser.get("/api/v1/me/").status_code == 401


# ---- the single-page app ---------------------------------------------------------------------------
def test_spa_served_with_history_fallback(app, tmp_path):
    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text("<!doctype html><div id=root></div>")
    (tmp_path / "assets" / "index-abc123.js").write_text("console.log(1)")
    old = app.config.get("MYAPP_UI_DIR")
    app.config["MYAPP_UI_DIR"] = str(tmp_path)
    try:
        client = app.test_client()
        assert client.get("/").headers["Location"].endswith("/ui/")
        for path in ("/ui/", "/ui/pipelines/3", "/ui/runs/9"):
            page = client.get(path)
            assert page.status_code == 200 and b"id=root" in page.data
            assert page.headers["Cache-Control"] == "no-cache"
        asset = client.get("/ui/assets/index-abc123.js")
        assert asset.status_code == 200 and "max-age=31536000" in asset.headers["Cache-Control"]
        assert client.get("/ui/assets/missing.js").status_code == 404
        for escape in ("/ui/assets/../../setup.py", "/ui/assets/%2e%2e/%2e%2e/setup.py"):
            assert b"setup(" not in client.get(escape).data
    finally:
        app.config["MYAPP_UI_DIR"] = old


def test_spa_not_built_says_how(app, tmp_path):
    old = app.config.get("MYAPP_UI_DIR")
    app.config["MYAPP_UI_DIR"] = str(tmp_path / "nothing")
    try:
        page = app.test_client().get("/ui/")
        assert page.status_code == 503 and b"make ui" in page.data
    finally:
        app.config["MYAPP_UI_DIR"] = old


# ---- the editor's graph ------------------------------------------------------------------------------
@pytest.fixture()
def pipeline(user, catalog):
    project = created(user.post("/api/v1/project/", json={"name": unique("p")}))
    pipe = created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "g"}))
    return {"id": pipe["id"], "project_id": project["id"], "template": catalog}


def graph_task(key, name, template, **extra):
    return {"key": key, "name": name, "template_id": template, **extra}


def test_graph_create_update_delete_in_one_request(user, pipeline):
    url, tpl = f"/api/v1/pipeline/{pipeline['id']}/graph", pipeline["template"]
    first = user.put(url, json={"tasks": [
        graph_task("n1", "prepare", tpl, position={"x": 10, "y": 20}),
        graph_task("n2", "train", tpl, args={"script": "print(1)"}, retries=2, resources={"cpu": "2"}),
        graph_task("n3", "report", tpl, trigger_rule="all_done"),
    ], "edges": [{"upstream": "n1", "downstream": "n2"}, {"upstream": "n2", "downstream": "n3"}]})
    assert first.status_code == 200, first.get_json()
    body = first.get_json()
    ids = {t["key"]: t["id"] for t in body["tasks"]}
    assert {t["name"]: t["retries"] for t in body["tasks"]} == {"prepare": 0, "train": 2, "report": 0}
    assert sorted((e["upstream_task_id"], e["downstream_task_id"]) for e in body["edges"]) == sorted(
        [(ids["n1"], ids["n2"]), (ids["n2"], ids["n3"])])

    # Swap two names, drop a task, add one, rewire: one request, ids of kept tasks stay.
    second = user.put(url, json={"tasks": [
        graph_task(str(ids["n1"]), "train", tpl, id=ids["n1"]),
        graph_task(str(ids["n2"]), "prepare", tpl, id=ids["n2"], args={"script": "print(2)"}),
        graph_task("new", "evaluate", tpl),
    ], "edges": [{"upstream": str(ids["n2"]), "downstream": str(ids["n1"])},
                 {"upstream": str(ids["n1"]), "downstream": "new"}]})
    assert second.status_code == 200, second.get_json()
    got = user.get(url).get_json()
    by_name = {t["name"]: t for t in got["tasks"]}
    assert set(by_name) == {"train", "prepare", "evaluate"}
    assert by_name["train"]["id"] == ids["n1"] and by_name["prepare"]["args"] == {"script": "print(2)"}
    assert got["pipeline"]["id"] == pipeline["id"] and len(got["edges"]) == 2


@pytest.mark.parametrize("tasks, edges, status, field", [
    ([graph_task("a", "x", 0, args={"backoff_limit": 99})], [], 400, "tasks[0].args.backoff_limit"),
    ([graph_task("a", "x", 0), graph_task("b", "x", 0)], [], 409, "tasks[1].name"),
    ([graph_task("a", "x", 0), graph_task("a", "y", 0)], [], 400, "tasks[1].key"),
    ([graph_task("a", "Bad_Name", 0)], [], 400, "tasks[0].name"),
    ([graph_task("a", "x", 0, resources={"cpu": "999"})], [], 400, "tasks[0].resources.cpu"),
    ([graph_task("a", "x", 0, colour="red")], [], 400, "tasks[0].colour"),
    ([graph_task("a", "x", 10**6)], [], 404, "tasks[0].template_id"),
    ([graph_task("a", "x", 0, id=10**6)], [], 404, "tasks[0].id"),
    ([graph_task("a", "x", 0)], [{"upstream": "a", "downstream": "zz"}], 400, "edges[0].downstream"),
    ([graph_task("a", "x", 0)], [{"upstream": "a", "downstream": "a"}], 400, "edges[0].downstream"),
    ([graph_task("a", "x", 0), graph_task("b", "y", 0), graph_task("c", "z", 0)],
     [{"upstream": "a", "downstream": "b"}, {"upstream": "b", "downstream": "c"},
      {"upstream": "c", "downstream": "a"}], 400, "edges[2]"),
])
def test_graph_errors_name_the_task_and_field_and_keep_what_is_stored(user, pipeline, tasks, edges, status, field):
    url = f"/api/v1/pipeline/{pipeline['id']}/graph"
    kept = user.put(url, json={"tasks": [graph_task("k", "kept", pipeline["template"])], "edges": []})
    assert kept.status_code == 200
    for task in tasks:
        task["template_id"] = task["template_id"] or pipeline["template"]
    resp = user.put(url, json={"tasks": tasks, "edges": edges})
    assert resp.status_code == status, resp.get_json()
    assert resp.get_json()["errors"][0]["field"] == field
    assert [t["name"] for t in user.get(url).get_json()["tasks"]] == ["kept"]


def test_graph_is_project_scoped(make_user, user, pipeline):
    stranger = make_user()
    url = f"/api/v1/pipeline/{pipeline['id']}/graph"
    assert stranger.get(url).status_code == 404
    assert stranger.put(url, json={"tasks": [], "edges": []}).status_code == 404
    other = created(user.post("/api/v1/pipeline/", json={"project_id": pipeline["project_id"], "name": "other"}))
    other_task = created(user.post("/api/v1/task/", json={"pipeline_id": other["id"], "name": "t",
                                                          "template_id": pipeline["template"]}))
    # A task of another pipeline cannot be pulled in by id.
    resp = user.put(url, json={"tasks": [graph_task("a", "t", pipeline["template"], id=other_task["id"])]})
    assert resp.status_code == 404 and resp.get_json()["errors"][0]["field"] == "tasks[0].id"


# ---- server-sent events ------------------------------------------------------------------------------
def read_events(response, until: str, limit: float = 20.0) -> list[tuple[str, dict]]:
    """Parse SSE chunks from a streamed test response until an event named `until`. A later call on the same
    response reads on from there: the server yields whole events, so nothing is left over in between."""
    events, buffer, deadline = [], "", time.monotonic() + limit
    for chunk in response.response:
        buffer += chunk.decode() if isinstance(chunk, bytes) else chunk
        while "\n\n" in buffer:
            block, buffer = buffer.split("\n\n", 1)
            fields = dict(line.split(": ", 1) for line in block.splitlines()
                          if ": " in line and not line.startswith(":"))
            if "event" in fields:
                events.append((fields["event"], json.loads(fields["data"]) | {"_id": fields.get("id")}))
                if fields["event"] == until:
                    assert not buffer, f"a chunk held more than whole events: {buffer!r}"
                    return events
        assert time.monotonic() < deadline, f"no {until!r} event in time: {events}"
    return events


def test_run_events_push_changes_then_end(app, user, pipeline):
    from myapp.extensions import db
    from myapp.models import PipelineRun, RunState
    from myapp.models.base import utcnow

    user.put(f"/api/v1/pipeline/{pipeline['id']}/graph",
             json={"tasks": [graph_task("a", "only", pipeline["template"])]})
    run = created(user.post("/api/v1/pipeline_run/", json={"pipeline_id": pipeline["id"]}))
    stream = user.get(f"/api/v1/pipeline_run/{run['id']}/events", buffered=False)
    assert stream.status_code == 200 and stream.mimetype == "text/event-stream"

    events = read_events(stream, "run")  # the run as the stream found it
    with app.app_context():  # then it finishes, as a worker would commit it
        row = db.session.get(PipelineRun, run["id"])
        row.state, row.started_at, row.finished_at = RunState.SUCCEEDED, utcnow(), utcnow()
        db.session.commit()
    events += read_events(stream, "end")
    states = [data["run"]["state"] for name, data in events if name == "run"]
    assert states[0] in ("queued", "running") and states[-1] == "succeeded"
    assert "reconciled_at" not in events[0][1]["run"] and isinstance(events[0][1]["task_runs"], list)


def test_run_events_are_project_scoped(make_user, user, pipeline):
    run = created(user.post("/api/v1/pipeline_run/", json={"pipeline_id": pipeline["id"]}))
    assert make_user().get(f"/api/v1/pipeline_run/{run['id']}/events").status_code == 404


def test_log_stream_sends_lines_filters_and_resumes(app, user, pipeline):
    from myapp.backends import JobRef
    from myapp.backends.base import LogLine, ObjectRef
    from myapp.backends.registry import log_archive
    from myapp.extensions import db
    from myapp.models import TaskRun, TaskState

    graph = user.put(f"/api/v1/pipeline/{pipeline['id']}/graph",
                     json={"tasks": [graph_task("a", "only", pipeline["template"])]}).get_json()
    run = created(user.post("/api/v1/pipeline_run/", json={"pipeline_id": pipeline["id"]}))
    job = ObjectRef("batch/v1", "Job", "ns", unique("job"))
    ref = JobRef(backend="local", namespace="ns", job_name=job.name, primary=job, objects=(job,))
    with app.app_context():
        log_archive().write(ref, [LogLine("master-0", i, f"step {i}", 1.0 + i) for i in range(1, 4)]
                            + [LogLine("worker-0", i, f"worker step {i}", 1.5 + i) for i in range(1, 3)])
        attempt = TaskRun(project_id=pipeline["project_id"], pipeline_run_id=run["id"],
                          task_id=graph["tasks"][0]["id"], attempt=1, state=TaskState.SUCCEEDED,
                          backend_ref=ref.as_dict(), manifests=[])
        db.session.add(attempt)
        db.session.commit()
        attempt_id = attempt.id

    url = f"/api/v1/task_run/{attempt_id}/log_stream"
    events = read_events(user.get(url, buffered=False), "end")
    lines = [item["line"] for name, data in events if name == "lines" for item in data["items"]]
    assert sorted(lines) == sorted(["step 1", "step 2", "step 3", "worker step 1", "worker step 2"])
    cursor = events[-1][1]["_id"]
    assert cursor == "master-0:3,worker-0:2"

    only_worker = read_events(user.get(url + "?replica=worker-0&search=step%202", buffered=False), "end")
    assert [i["line"] for n, d in only_worker if n == "lines" for i in d["items"]] == ["worker step 2"]

    # A reconnect with Last-Event-ID gets nothing it has already seen.
    resumed = read_events(user.get(url, headers={"Last-Event-ID": cursor}, buffered=False), "end")
    assert [n for n, _ in resumed] == ["end"]
    assert user.get(url + "?limit=5").status_code == 400  # only replica and search are known


# ---- capacity against use -----------------------------------------------------------------------
def test_usage_sums_running_requests_per_group_and_project(app, admin, user, pipeline):
    from myapp.extensions import db
    from myapp.models import TaskRun, TaskState

    world = build_catalog(admin)
    group = world["resource_group"]
    created(admin.post("/api/v1/quota/", json={"project_id": pipeline["project_id"], "resource_group_id": group,
                                               "cpu": "8", "memory": "16Gi", "gpus": 0}))
    graph = user.put(f"/api/v1/pipeline/{pipeline['id']}/graph", json={"tasks": [
        graph_task("a", "train", pipeline["template"], resource_group_id=group)]}).get_json()
    run = created(user.post("/api/v1/pipeline_run/", json={"pipeline_id": pipeline["id"]}))
    container = {"name": "c", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}
    manifests = [{"kind": "PyTorchJob", "spec": {"pytorchReplicaSpecs": {
        "Master": {"replicas": 1, "template": {"spec": {"containers": [container]}}},
        "Worker": {"replicas": 3, "template": {"spec": {"containers": [container]}}}}}}]
    with app.app_context():
        for attempt, state in ((1, TaskState.FAILED), (2, TaskState.RUNNING)):
            db.session.add(TaskRun(project_id=pipeline["project_id"], pipeline_run_id=run["id"],
                                   task_id=graph["tasks"][0]["id"], attempt=attempt, state=state,
                                   manifests=manifests))
        db.session.commit()

    report = admin.get("/api/v1/quota/usage").get_json()["items"]
    entry = next(e for e in report if e["resource_group_id"] == group)
    assert entry["capacity"] == {"cpu_millicores": 16000, "memory_bytes": 64 * 2**30, "gpus": 0}
    assert entry["used"] == {"cpu_millicores": 2000, "memory_bytes": 4 * 2**30, "gpus": 0}  # running attempt only
    project = next(p for p in entry["projects"] if p["project_id"] == pipeline["project_id"])
    assert project["quota"]["cpu_millicores"] == 8000 and project["used"]["cpu_millicores"] == 2000
    assert user.get("/api/v1/quota/usage").status_code == 403
