"""Schemathesis over every operation of the served OpenAPI spec: bad input is a 4xx, never a 5xx.

In-process over the WSGI app (no server), as a project owner for project and catalog reads and as an
admin for admin APIs and catalog writes. Path ids, body references and query filters that schemathesis
generates as plausible ids are pointed at a world this module builds, so the requests reach the schemas,
the domain code and the database instead of stopping at a 404; other values (strings, negative or huge
numbers) are sent as generated. Deletes act on a fresh object each time, and nothing is sent to the
workers (`enqueue` is recorded), so the shared test database keeps only this module's own rows.

Bounded for CI: FUZZ_EXAMPLES examples per operation and phase, derandomized (the same requests every
run). A larger exploratory run, which counts requests and server errors instead of stopping at the first:

    MYAPP_FUZZ_EXAMPLES=200 MYAPP_FUZZ_EXPLORE=1 .venv/bin/pytest -p no:cacheprovider -q -s tests/test_fuzz_api.py
"""
from __future__ import annotations

import collections
import os
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import schemathesis
from schemathesis.config import HealthCheck

from tests.support import ApiClient, unique
from tests.world import (
    add_member,
    build_catalog,
    build_project,
    created,
    data_file,
    experiment_body,
    insert_finished_run,
    insert_task_run,
)

pytestmark = [pytest.mark.backends, pytest.mark.slow]  # six thousand requests: a minute or more

FUZZ_EXAMPLES = int(os.environ.get("MYAPP_FUZZ_EXAMPLES", "10"))
EXPLORE = os.environ.get("MYAPP_FUZZ_EXPLORE") == "1"
ONLY = os.environ.get("MYAPP_FUZZ_ONLY")  # a path regex: fuzz only those operations (by hand, when fixing)
SEED = 20240612
PHASES = ["examples", "coverage", "fuzzing"]
CHECKS = ["not_a_server_error", "status_code_conformance", "content_type_conformance", "response_schema_conformance"]
ID_MAX = 2**31 - 1  # the INTEGER id columns; larger ids are sent as generated

# Body and query fields that reference another object, and the world object they get.
REFS = {"project_id": "project", "pipeline_id": "pipeline", "task_run_id": "task_run",
        "model_version_id": "model_version", "upstream_task_id": "task", "downstream_task_id": "task2",
        "template_id": "job_template", "resource_group_id": "resource_group", "cluster_id": "cluster",
        "member_id": "member"}
# Operations that act on another object than their resource's world one.
TARGETS = {
    ("PUT", "/api/v1/pipeline/{pk}/graph"): "graph_pipeline",  # replaces the tasks: not the world's
    ("POST", "/api/v1/pipeline_run/{pk}/rerun"): "finished_run",
    # A stream of something unfinished stays open for streams.STREAM_SECONDS (shortened by fuzz_world).
    ("GET", "/api/v1/pipeline_run/{pk}/events"): "finished_run",
    ("GET", "/api/v1/task_run/{pk}/log_stream"): "finished_task_run",
    ("PUT", "/api/v1/user/{pk}"): "user",
    ("POST", "/api/v1/user/{pk}/password"): "user",
}
ANONYMOUS = {"/api/v1/security/login", "/api/v1/security/refresh"}


@dataclass
class FuzzWorld:
    app: Any
    user: ApiClient    # owner of the world's project
    admin: ApiClient
    ids: dict[str, int]
    fresh: dict[str, Callable[[], int]]  # resource -> makes a new object to delete
    enqueued: list[tuple] = field(default_factory=list)

    def caller(self, operation) -> ApiClient | None:
        if operation.path in ANONYMOUS:
            return None
        raw = operation.definition.raw
        scope, permission = raw.get("x-scope"), raw.get("x-permission")
        if scope == "admin" or (scope == "catalog" and permission == "can_write"):
            return self.admin
        return self.user

    def target(self, method: str, path: str, name: str) -> int:
        """The world's object for an id in the path (a fresh one to delete)."""
        if name == "member_id":
            return self.fresh["member"]() if method == "DELETE" else self.ids["member"]
        resource = TARGETS.get((method, path)) or path.split("/{pk}")[0].rsplit("/", 1)[-1]
        if method == "DELETE" and "{member_id}" not in path:
            return self.fresh[resource]()
        assert resource in self.ids, f"{method} {path}: which world object is {{{name}}}? (add it to TARGETS)"
        return self.ids[resource]

    def prepare(self, case) -> None:
        """Authenticate the case and point plausible ids at the world (see the module's docstring)."""
        # case.method: the coverage phase also sends an operation's case with the methods the path lacks.
        method, path = str(case.method).upper(), case.operation.path
        caller = self.caller(case.operation)
        case.headers = {k: v for k, v in (case.headers or {}).items() if k.lower() != "authorization"}
        if caller is not None:
            case.headers["Authorization"] = f"Bearer {caller.token}"
        probe = method != case.operation.method.upper()  # a method the path lacks: a 405 touches nothing
        for name, value in list((case.path_parameters or {}).items()):
            if name in ("pk", "member_id") and plausible_id(value) and not probe:
                case.path_parameters[name] = self.target(method, path, name)
        if isinstance(case.query, dict):
            point_refs(case.query, self.ids)
        if isinstance(case.body, dict | list):
            point_refs(case.body, self.ids)


def plausible_id(value: Any) -> bool:
    """What a URL's <int:...> or a JSON id could address: digits (as text in a path) within the id columns."""
    if isinstance(value, bool):
        return False
    if isinstance(value, str):
        return value.isascii() and value.isdigit() and int(value) <= ID_MAX
    return isinstance(value, int) and 0 <= value <= ID_MAX


def point_refs(data: Any, ids: dict[str, int]) -> None:
    """Replace plausible ids under the REFS keys, at any depth (graph tasks carry template_id)."""
    if isinstance(data, list):
        for item in data:
            point_refs(item, ids)
    elif isinstance(data, dict):
        for key, value in data.items():
            if key in REFS and plausible_id(value):
                data[key] = ids[REFS[key]]
            else:
                point_refs(value, ids)


def closed_all_of(spec: dict) -> dict:
    """The spec with each allOf of objects merged into one object, closed when all its parts are: how the
    spec means them (an object plus a few keys, as TypeScript's intersection reads it; tests/api/support.py
    Shapes does the same). In plain JSON Schema each part's additionalProperties: false refuses the
    others' keys, so no answer could match. And a text/event-stream answer's schema, which is of each
    event's data (what the UI's types are generated from), is put the way schemathesis reads one: of
    the event, its data JSON with that contentSchema."""
    schemas = spec["components"]["schemas"]

    def part(node: dict) -> dict:
        return schemas[node["$ref"].rsplit("/", 1)[-1]] if "$ref" in node else node

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(n) for n in node]
        if not isinstance(node, dict):
            return node
        out = {k: walk(v) for k, v in node.items()}
        parts = [part(p) for p in out.get("allOf", [])]
        stream = out.get("content", {}).get("text/event-stream")
        if stream is not None and "schema" in stream:  # the schema is of each event's data (JSON)
            stream["schema"] = {"type": "object", "properties": {"data": {
                "type": "string", "contentMediaType": "application/json", "contentSchema": stream["schema"]}}}
        if len(parts) > 1 and all(p.get("type") == "object" for p in parts):
            del out["allOf"]
            out |= {"type": "object", "properties": {k: v for p in parts for k, v in p.get("properties", {}).items()},
                    "required": [r for p in parts for r in p.get("required", [])]}
            if all(p.get("additionalProperties") is False for p in parts):
                out["additionalProperties"] = False
        return out

    return walk(spec)


def finished_task_run(app, project_id: int, run_id: int, task_id: int) -> int:
    from myapp.extensions import db
    from myapp.models import TaskRun, TaskState
    from myapp.models.base import utcnow

    pk = insert_task_run(app, project_id, run_id, task_id)
    with app.app_context():
        row = db.session.get(TaskRun, pk)
        row.state, row.finished_at = TaskState.SUCCEEDED, utcnow()
        db.session.commit()
    return pk


def build_world(app, make_user) -> FuzzWorld:
    from myapp.setup_data import create_user

    user, admin = make_user(), make_user(admin=True)
    cat = build_catalog(admin)
    world = build_project(user, cat, app)
    ids = {**cat, **world.ids}
    pid = ids["project"]
    ids["finished_run"] = insert_finished_run(app, pid, ids["pipeline"])
    ids["finished_task_run"] = finished_task_run(app, pid, ids["finished_run"], ids["task"])
    ids["graph_pipeline"] = created(user.post("/api/v1/pipeline/", json={"project_id": pid, "name": "graph"}))["id"]
    ids["quota"] = created(admin.post("/api/v1/quota/", json={
        "project_id": pid, "resource_group_id": cat["resource_group"], "cpu": "8", "memory": "16Gi", "gpus": 0}))["id"]
    spare = make_user()
    ids["user"] = spare.user_id
    # The member the fuzzer may edit is a viewer, never the owner it signs in as.
    ids["member"] = add_member(user, pid, spare.username, "viewer")

    def spare_member() -> int:
        with app.app_context():  # nobody signs in as them
            name = create_user(unique("fuzzmember"), uuid.uuid4().hex).username
        return add_member(user, pid, name, "viewer")

    def pipeline() -> int:
        return created(user.post("/api/v1/pipeline/", json={"project_id": pid, "name": unique("p")}))["id"]

    def task() -> int:
        return created(user.post("/api/v1/task/", json={"pipeline_id": ids["graph_pipeline"], "name": unique("t"),
                                                        "template_id": cat["job_template"]}))["id"]

    def edge() -> int:
        pipe = pipeline()
        up, down = (created(user.post("/api/v1/task/", json={"pipeline_id": pipe, "name": name,
                                                             "template_id": cat["job_template"]}))["id"]
                    for name in ("u", "d"))
        return created(user.post("/api/v1/edge/", json={"pipeline_id": pipe, "upstream_task_id": up,
                                                        "downstream_task_id": down}))["id"]

    def catalog_image() -> str:  # a notebook names a catalog image as repository:tag
        image = admin.get(f"/api/v1/image/{cat['image']}").get_json()
        return f"{image['repository']}:{image['tag']}"

    def model_version() -> int:
        return created(user.post("/api/v1/model_version/", json={
            "project_id": pid, "name": unique("m"), "uri": data_file(app, pid, "models/m.pt")}))["id"]

    fresh: dict[str, Callable[[], int]] = {
        "project": lambda: created(user.post("/api/v1/project/", json={"name": unique("p")}))["id"],
        "pipeline": pipeline, "task": task, "edge": edge, "model_version": model_version,
        "pipeline_run": lambda: insert_finished_run(app, pid, ids["pipeline"]),
        "experiment": lambda: created(user.post("/api/v1/experiment/", json=experiment_body(ids["pipeline"])))["id"],
        "notebook": lambda: created(user.post("/api/v1/notebook/", json={
            "project_id": pid, "name": unique("nb"), "image": catalog_image()}))["id"],
        "inference_service": lambda: created(user.post("/api/v1/inference_service/", json={
            "project_id": pid, "name": unique("s"), "model_version_id": model_version()}))["id"],
        "image_build": lambda: created(user.post("/api/v1/image_build/", json={
            "project_id": pid, "repository": "registry.local/p/env", "tag": unique("v"), "packages": ["numpy"]}))["id"],
        "cluster": lambda: created(admin.post("/api/v1/cluster/", json={"name": unique("c"), "kind": "local"}))["id"],
        "resource_group": lambda: created(admin.post("/api/v1/resource_group/", json={
            "name": unique("g"), "cluster_id": cat["cluster"], "cpu": "1", "memory": "1Gi", "gpus": 0}))["id"],
        "job_template": lambda: build_catalog(admin)["job_template"],
        "image": lambda: created(admin.post("/api/v1/image/", json={
            "repository": "registry.local/team/x", "tag": unique("v")}))["id"],
        "quota": lambda: created(admin.post("/api/v1/quota/", json={
            "project_id": fresh["project"](), "resource_group_id": cat["resource_group"], "cpu": "1",
            "memory": "1Gi", "gpus": 0}))["id"],
        "member": spare_member,
        "user": lambda: ids["user"],  # DELETE /user/{pk}/login_limits clears limits: no user is deleted
    }
    return FuzzWorld(app, user, admin, ids, fresh)


@dataclass
class Outcome:
    requests: int
    statuses: collections.Counter
    server_errors: list[str]  # "METHOD path: status"
    failures: list[str]       # what the checks found, one line each
    tested: set[str]          # operations that got requests ("METHOD /path")


def run_schemathesis(app, world: FuzzWorld, examples: int, phases: list[str], checks: list[str]) -> Outcome:
    """One schemathesis run over every operation of the served spec, as the CLI's `run` would do it."""
    from schemathesis.engine import events, from_schema
    from schemathesis.hooks import GLOBAL_HOOK_DISPATCHER

    statuses: collections.Counter = collections.Counter()
    server_errors: list[str] = []
    tested: set[str] = set()
    per_operation: collections.Counter = collections.Counter()
    by_phase: collections.Counter = collections.Counter()
    seconds: collections.Counter = collections.Counter()
    started = [0.0]

    def before_call(context, case, kwargs) -> None:
        world.prepare(case)
        started[0] = time.monotonic()

    def after_call(context, case, response) -> None:
        label = f"{case.operation.method.upper()} {case.operation.path}"
        tested.add(label)
        per_operation[label] += 1
        seconds[label] += time.monotonic() - started[0]
        by_phase[case.meta.phase.name if case.meta else "?"] += 1
        statuses[response.status_code] += 1
        if response.status_code >= 500:
            sent = f"query={case.query!r} body={case.body!r}"[:300]
            server_errors.append(f"{label}: {response.status_code} {response.text[:200]} <- {sent}")

    served = world.admin.get("/api/v1/_openapi")
    assert served.status_code == 200, served.get_json()
    schema = schemathesis.openapi.from_dict(closed_all_of(served.get_json()), config=schemathesis.Config(seed=SEED))
    schema.app = app  # in-process WSGI, as schemathesis.openapi.from_wsgi does
    if ONLY:
        schema = schema.include(path_regex=ONLY)
    # Every request carries a real token (prepare): random Authorization headers only test FAB's 401.
    schema.config.generation.update(max_examples=examples, deterministic=True, database="none",
                                    with_security_parameters=False)
    schema.config.phases.update(phases=phases)
    schema.config.auth.auto_signup = False  # it would sign up through POST /user/: the world has its users
    schema.config.checks.update(included_check_names=checks)
    # Counting every server error, not only each operation's first (by hand: MYAPP_FUZZ_EXPLORE).
    schema.config.update(suppress_health_check=[HealthCheck.all], continue_on_failure=EXPLORE)
    failures: list[str] = []
    schemathesis.hook(before_call)
    schemathesis.hook(after_call)
    propagate = app.config.get("PROPAGATE_EXCEPTIONS")
    app.config["PROPAGATE_EXCEPTIONS"] = False  # an exception is a 500, as in production, not a test error
    try:
        for event in from_schema(schema).execute():
            if EXPLORE and isinstance(event, events.PhaseFinished | events.Interrupted | events.EngineFinished):
                print(f"  {type(event).__name__}: {getattr(event, 'phase', '')} {getattr(event, 'status', '')} "
                      f"{getattr(event, 'stop_reason', '')}")
            if isinstance(event, events.ScenarioFinished):
                for nodes in event.recorder.checks.values():
                    failures += [f"{event.label}: {node.name}: {node.failure_info.failure.title}: "
                                 f"{node.failure_info.failure.message[:500]}\n    {node.failure_info.code_sample}"
                                 for node in nodes if node.failure_info is not None]
            elif isinstance(event, events.NonFatalError):
                failures.append(f"{event.label}: {event.info.format()}")
                if event.info.title == "Runtime Error":  # the app raised: Flask answers 500, schemathesis re-raises
                    server_errors.append(f"{event.label}: raised {event.value!r}"[:300])
            elif isinstance(event, events.FatalError):
                raise event.exception
    finally:
        app.config["PROPAGATE_EXCEPTIONS"] = propagate
        GLOBAL_HOOK_DISPATCHER.unregister(before_call)
        GLOBAL_HOOK_DISPATCHER.unregister(after_call)
    if EXPLORE:
        print("\n".join(f"  {count:5d} requests  {label}" for label, count in sorted(per_operation.items())))
        print(f"  by phase: {dict(by_phase)}; slowest: {seconds.most_common(8)}")
    return Outcome(sum(statuses.values()), statuses, server_errors, sorted(set(failures)), tested)


@pytest.fixture(scope="module")
def fuzz_world(app) -> Iterator[FuzzWorld]:
    import myapp.api.pipelines
    import myapp.api.streams
    from myapp.setup_data import create_user

    def make_user(admin: bool = False) -> ApiClient:
        from tests.support import login_token

        name, password = unique("fuzzadmin" if admin else "fuzzuser"), uuid.uuid4().hex
        with app.app_context():
            user_id = create_user(name, password, admin=admin).id
        client = app.test_client()
        api = ApiClient(client, login_token(client, name, password))
        api.username, api.password, api.user_id = name, password, user_id
        return api

    with pytest.MonkeyPatch.context() as patch:
        world = build_world(app, make_user)
        limits = world.admin.get("/api/v1/limits/").get_json()["platform"]
        patch.setattr(myapp.api.pipelines, "enqueue", lambda *args, **kwargs: world.enqueued.append(args))
        # A stream of an unfinished object (the world's image build) still goes through the poller (one
        # POLL_SECONDS step), but ends then instead of after 30 s: at 30 s those few requests were two thirds
        # of the test's time, at 1 s still a third (17 s of 50).
        patch.setattr(myapp.api.streams, "STREAM_SECONDS", myapp.api.streams.POLL_SECONDS)
        yield world
    # The platform-wide limits are the one setting the fuzzer changes that other tests read.
    resp = world.admin.put("/api/v1/limits/", json={k: v["value"] if v["set"] else None for k, v in limits.items()})
    assert resp.status_code == 200, resp.get_json()


def operations(spec: dict) -> set[str]:
    return {f"{method.upper()} {path}" for path, ops in spec["paths"].items() for method in ops
            if method in ("get", "put", "post", "delete", "patch")}


def test_no_server_errors_on_any_operation(app, fuzz_world):
    outcome = run_schemathesis(app, fuzz_world, FUZZ_EXAMPLES, PHASES, CHECKS)
    if EXPLORE:
        print(f"\nfuzz: {outcome.requests} requests, {len(outcome.server_errors)} server errors; "
              f"statuses {dict(sorted(outcome.statuses.items()))}")
        for line, count in collections.Counter(outcome.server_errors).most_common():
            print(f"  {count:5d}  {line}")
        for line in outcome.failures:
            print(f"  check: {line}")
    assert not outcome.server_errors, "\n".join(sorted(set(outcome.server_errors)))
    assert not outcome.failures, "\n".join(outcome.failures)
    spec = fuzz_world.admin.get("/api/v1/_openapi").get_json()
    if not ONLY:
        assert operations(spec) - outcome.tested == set()
