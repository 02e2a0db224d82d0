"""The UI's types come from the OpenAPI spec, and the spec says what the server really answers.

- frontend/src/api/schema.ts is what openapi-typescript makes of the current spec (else: regenerate);
- every operation of our APIs declares the shape of its success answer;
- real answers (objects, pages, custom routes, events, errors) validate against those shapes, strictly:
  a key the server writes and the spec does not name fails, as does a named key it leaves out.
"""
from __future__ import annotations

import dataclasses
import json
import re
from typing import Any

import pytest

from myapp.api.openapi_dump import REGENERATE, SCHEMA_TS, build_spec, dumps, generate_types
from tests.api.support import Shapes
from tests.world import build_catalog, build_project, created


@pytest.fixture(scope="module")
def spec(app) -> dict:
    return build_spec(app)


def test_generated_types_are_current(spec, tmp_path):
    out = tmp_path / "schema.ts"
    generate_types(dumps(spec), out)
    assert SCHEMA_TS.exists(), f"{SCHEMA_TS} is missing: generate it with {REGENERATE}"
    assert out.read_text() == SCHEMA_TS.read_text(), (
        f"frontend/src/api/schema.ts does not match the API's OpenAPI spec: regenerate it with {REGENERATE}, "
        "then fix what `npm run build` reports in the UI")


def test_dump_is_deterministic_and_served(app, spec, admin):
    assert dumps(build_spec(app)) == dumps(spec)
    served = admin.get("/api/v1/_openapi").get_json()
    assert served["paths"] == spec["paths"] and served["components"] == spec["components"]


def test_cli_prints_the_spec(app, spec):
    from myapp.cli import main

    result = app.test_cli_runner().invoke(main, ["openapi"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["components"] == spec["components"]


def our_operations(spec: dict):
    for path, ops in sorted(spec["paths"].items()):
        for method, op in ops.items():
            if "x-resource" in op:
                yield method, path, op


def success(op: dict) -> tuple[str, dict]:
    status = min(s for s in op["responses"] if s.startswith("2"))  # the usual one (a 202 may come beside it)
    return status, op["responses"][status]


def test_every_operation_declares_its_answer(spec):
    missing = [f"{method.upper()} {path}" for method, path, op in our_operations(spec)
               if "content" not in success(op)[1]]
    assert not missing, f"give these routes route(..., response=...) (myapp/api/responses.py): {missing}"
    for method, path, op in our_operations(spec):
        for status in ("400", "401", "403", "404"):
            assert op["responses"][status]["$ref"].startswith("#/components/responses/"), (method, path, status)


def test_stream_fields_are_the_attempt_summary(spec):
    from myapp.api.streams import TASK_RUN_FIELDS

    summary = spec["components"]["schemas"]["AttemptSummary"]
    assert list(summary["properties"]) == list(TASK_RUN_FIELDS)


# ---- real answers against the spec --------------------------------------------------------------------------
def sse_events(resp) -> list[tuple[str, Any]]:
    events = []
    for block in resp.get_data(as_text=True).split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line and not line.startswith(":"))
        if "event" in fields:
            events.append((fields["event"], json.loads(fields["data"])))
    return events


@pytest.fixture()
def world(app, admin, make_user):
    from myapp.backends.base import MetricSample
    from myapp.extensions import db
    from myapp.models import PipelineRun, RunState, TaskRun, TaskState

    owner = make_user()
    cat = build_catalog(admin)
    project = build_project(owner, cat, app)
    quota = {"project_id": project.ids["project"], "resource_group_id": cat["resource_group"],
             "cpu": "2", "memory": "4Gi"}
    cat["quota"] = created(admin.post("/api/v1/quota/", json=quota))["id"]
    cat["user"] = owner.user_id  # /api/v1/user/{pk}
    sample = MetricSample(timestamp=1.5, replica="worker-0", cpu_cores=0.5, memory_bytes=1024)
    with app.app_context():
        run = db.session.get(PipelineRun, project.ids["pipeline_run"])
        run.state = RunState.SUCCEEDED
        attempt = db.session.get(TaskRun, project.ids["task_run"])
        attempt.state, attempt.metrics = TaskState.SUCCEEDED, [dataclasses.asdict(sample)]
        db.session.commit()
    return {"owner": owner, "admin": admin, "ids": {**cat, **project.ids}}


def fill(path: str, op: dict, ids: dict) -> str:
    key = {"pk": op["x-resource"], "member_id": "member"}
    return re.sub(r"{(\w+)}", lambda m: str(ids[key[m.group(1)]]), path)


def test_answers_match_the_spec(spec, world):
    shapes, admin, owner, ids = Shapes(spec), world["admin"], world["owner"], world["ids"]
    checked = set()
    for method, path, op in our_operations(spec):
        status, declared = success(op)
        if method != "get" or "application/json" not in declared["content"]:
            continue
        if path == "/api/v1/notebook/authz":  # the notebook proxy's alone (tests/notebooks): its refusal here
            shapes.answer(method, path, admin.get(path, query_string={"path": "/notebook/x/y/"}))
            continue
        resp = admin.get(fill(path, op, ids))
        assert resp.status_code == int(status), (path, resp.get_json())
        shapes.answer(method, path, resp)
        checked.add(path)
    assert len(checked) > 30, sorted(checked)
    assert admin.get(f"/api/v1/task_run/{ids['task_run']}/metrics").get_json()["items"], "no samples checked"

    # Writes: each answer against its operation.
    pipeline, url = ids["pipeline"], f"/api/v1/pipeline/{ids['pipeline']}/graph"
    graph = owner.put(url, json={"tasks": [{"key": "n1", "name": "one", "template_id": ids["job_template"]}]})
    shapes.answer("put", "/api/v1/pipeline/{pk}/graph", graph)
    assert graph.get_json()["tasks"][0]["key"] == "n1"
    shapes.answer("post", "/api/v1/pipeline/{pk}/clone", owner.post(f"/api/v1/pipeline/{pipeline}/clone",
                                                                      json={"name": "copy"}))
    exported = owner.get(f"/api/v1/pipeline/{pipeline}/export").get_json()["yaml"]
    shapes.answer("post", "/api/v1/pipeline/import", owner.post("/api/v1/pipeline/import", json={"yaml": exported}))
    rerun = owner.post(f"/api/v1/pipeline_run/{ids['pipeline_run']}/rerun")
    shapes.answer("post", "/api/v1/pipeline_run/{pk}/rerun", rerun)
    shapes.answer("post", "/api/v1/task/{pk}/run", owner.post(f"/api/v1/task/{graph.get_json()['tasks'][0]['id']}/run"))
    shapes.answer("put", "/api/v1/quota/{pk}", admin.put(f"/api/v1/quota/{ids['quota']}", json={"cpu": "1"}))
    shapes.answer("delete", "/api/v1/image/{pk}", admin.delete(f"/api/v1/image/{ids['image']}"))

    # Errors: the same shape whatever failed.
    shapes.answer("get", "/api/v1/pipeline/{pk}", owner.get("/api/v1/pipeline/999999"))
    shapes.answer("post", "/api/v1/pipeline/", owner.post("/api/v1/pipeline/", json={"name": "Bad Name"}))
    shapes.answer("get", "/api/v1/pipeline/", owner.get("/api/v1/pipeline/", query_string={"colour": "red"}))


def test_events_match_the_spec(spec, world):
    shapes, owner, ids = Shapes(spec), world["owner"], world["ids"]
    run_events = sse_events(owner.get(f"/api/v1/pipeline_run/{ids['pipeline_run']}/events"))
    assert [name for name, _ in run_events] == ["run", "end"]
    shapes.component("RunSnapshot", run_events[0][1])
    shapes.component("StreamEnd", run_events[1][1])
    log_events = sse_events(owner.get(f"/api/v1/task_run/{ids['task_run']}/log_stream"))
    assert [name for name, _ in log_events] == ["end"]
    shapes.component("StreamEnd", log_events[0][1])


def test_log_lines_and_session_match_the_spec(app, spec, user):
    from myapp.backends.base import LogLine
    from myapp.pipelines.observation import line_json

    shapes = Shapes(spec)
    line = line_json(LogLine(replica="worker-1", seq=3, line="epoch 1", timestamp=12.5))
    shapes.component("LogLine", line)
    shapes.component("LogBatch", {"state": "running", "items": [line]})
    browser = app.test_client()
    shapes.component("Session", browser.get("/api/v1/session/").get_json())
    shapes.component("Me", user.get("/api/v1/me/").get_json())
