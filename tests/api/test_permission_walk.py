"""Walk every operation in the OpenAPI spec, as every kind of caller, and prove the checks hold.

The walk is driven by the served spec (each operation carries x-scope, x-permission and
x-resource), so an endpoint added later is covered, or the walk fails asking for it to be
classified, given a request body (BODIES) or a target (TARGETS; both in walk_operations.py, the
world in walk_world.py), without editing the loops below.

What a caller may do follows from the operation's scope and permission alone:

    caller            project reads   project writes   owner-only*   catalog reads   admin APIs, catalog writes
    anonymous         401             401              401           401             401
    outsider          404             404              404           ok              403
    viewer            ok              403              403           ok              403
    developer         ok              ok               403           ok              403
    owner             ok              ok               ok            ok              403
    admin             ok              ok               ok            ok              ok
    run token         as developer of its run's project (A), 404 elsewhere; never admin; starts no project
    revoked token     401             401              401           401             401

    * member management and project settings: writes of the `project` resource.

"outsider" is a signed-in user of another project: to them project A's objects do not exist (404);
lists are filtered instead. Every refused call must leave every row as it was and enqueue nothing;
every allowed write must change something (so the refused ones were real attempts). Deletes that
are allowed run on fresh objects, so the shared world stays whole.

A second walk mixes ids of two projects in one request: every URL with more than one id and every
request body that references another object is sent with one id of project B and the rest of
project A, by members of A only and by members of both; each must answer 400/404 and store nothing.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.api.walk_operations import (
    ABSENT,
    BODIES,
    MEMBERSHIP,
    MIXERS,
    NO_ROW_CHANGE,
    RANK,
    ROLES,
    TOKENS,
    Op,
    call,
    check_plannable,
    expected,
    fill,
    get_path,
    import_yaml,
    object_id,
    operations,
    plan,
    ref_paths,
    ref_resource,
    registry_credentials,
)
from tests.api.walk_world import Walk, changed_tables, run_token, sign_in, spare_user, state_queries
from tests.support import ApiClient, unique
from tests.world import add_member, build_catalog, build_project, created, insert_finished_run


@pytest.fixture(scope="module")
def walk(app) -> Iterator[Walk]:
    """Two projects with one of every object and users in every role, built once per module."""
    import myapp.api.pipelines

    engine, queries = state_queries(app)
    users = {key: sign_in(app, admin=key == "admin") for key in MEMBERSHIP if key not in ("anonymous", *TOKENS)}
    users["anonymous"] = ApiClient(app.test_client(), None)
    cat = build_catalog(users["admin"])
    a, b = build_project(users["owner"], cat, app), build_project(users["outsider"], cat, app)
    members: dict[str, dict[str, int]] = {"a": {"owner": a.ids["member"]}, "b": {"outsider": b.ids["member"]}}
    for key, roles in MEMBERSHIP.items():
        for project, role in roles.items():
            world = a if project == "a" else b
            if key not in members[project] and key not in TOKENS:
                creator = users["owner"] if project == "a" else users["outsider"]
                members[project][key] = add_member(creator, world.ids["project"], users[key].username, role)
    for world, creator in ((a, users["owner"]), (b, users["outsider"])):
        pid = world.ids["project"]
        world.ids["finished_run"] = insert_finished_run(app, pid, world.ids["pipeline"])
        graph = created(creator.post("/api/v1/pipeline/", json={"project_id": pid, "name": "graph"}))["id"]
        for name in ("left", "right"):
            created(creator.post("/api/v1/task/", json={"pipeline_id": graph, "name": name,
                                                        "template_id": cat["job_template"]}))
        world.ids["graph_pipeline"] = graph
        world.ids["registry_credentials"] = registry_credentials(creator, pid)
    # A task of a third pipeline of A: a reference to it from another pipeline's edge or graph is a mix too.
    other = created(users["owner"].post("/api/v1/pipeline/", json={"project_id": a.ids["project"], "name": "other"}))
    a.ids["other_task"] = created(users["owner"].post("/api/v1/task/", json={
        "pipeline_id": other["id"], "name": "lone", "template_id": cat["job_template"]}))["id"]
    # Members whose rows the walk changes and whose ids it mixes up: nobody signs in as them.
    _, spare_a = spare_user(app)
    a.ids["target_member"] = add_member(users["owner"], a.ids["project"], spare_a, "viewer")
    _, spare_b = spare_user(app)
    b.ids["member"] = add_member(users["outsider"], b.ids["project"], spare_b, "viewer")
    b.ids["target_member"] = b.ids["member"]
    cat["quota"] = created(users["admin"].post("/api/v1/quota/", json={
        "project_id": a.ids["project"], "resource_group_id": cat["resource_group"], "cpu": "8", "memory": "32Gi",
        "gpus": 2}))["id"]
    cat["fab_user"] = spare_user(app)[0]
    cat["user"] = spare_user(app)[0]  # the target of /api/v1/user/{pk} (myapp/api/users.py)
    cat["limits"] = b.ids["project"]  # the target of /api/v1/limits/project/{pk}: B's runs never run here
    template = users["admin"].get(f"/api/v1/job_template/{cat['job_template']}").get_json()
    names = {"a": a.project["name"], "b": b.project["name"], "template": template["name"]}
    users["run_token"] = ApiClient(app.test_client(), run_token(app, a.ids["pipeline_run"], [a, b]))
    users["revoked_token"] = ApiClient(app.test_client(), run_token(app, a.ids["finished_run"], []))
    spec = users["admin"].get("/api/v1/_openapi").get_json()
    enqueued: list[tuple] = []
    with pytest.MonkeyPatch.context() as patch:
        # The walk needs no workers: record what would be sent to them instead.
        patch.setattr(myapp.api.pipelines, "enqueue", lambda name, *args, **queue: enqueued.append((name, *args)))
        yield Walk(app, spec, users, a.ids, b.ids, cat, names, members, engine, queries, enqueued)



# ---- the role walk ------------------------------------------------------------------------------------

def check_collection(w: Walk, user: str, op: Op, payload: Any) -> None:
    """A list (or /me) as user: project A's rows for its members and the admin, nothing of A for others."""
    client, where = w.users[user], f"{user}: GET {op.path}"
    if op.resource == "me":
        roles = {p["id"]: p["role"] for p in payload["projects"]}
        assert roles.get(w.a["project"]) == MEMBERSHIP[user].get("a"), (where, payload)
        assert roles.get(w.b["project"]) == MEMBERSHIP[user].get("b"), (where, payload)
        assert payload["is_admin"] == (user == "admin"), where
        return
    if op.kind != "project":
        return
    sees_a = user == "admin" or "a" in MEMBERSHIP[user]
    if op.resource == "project":
        query, want = {"name": w.names["a"]}, w.a["project"]
    else:
        query, want = {"project_id": w.a["project"], "order": "id", "page_size": 100}, w.a[op.resource]
    resp = client.get(op.path, query_string=query)
    assert resp.status_code == 200, (where, query, resp.get_json())
    ids = [item["id"] for item in resp.get_json()["items"]]
    assert (want in ids) if sees_a else ids == [], (where, query, ids)
    if not sees_a:
        items = resp.get_json()["items"] + payload["items"]
        assert all(i.get("project_id", i["id"]) != w.a["project"] for i in items), where


@pytest.mark.parametrize("user", ROLES)
def test_every_operation_as_each_role(walk: Walk, user: str):
    w, client = walk, walk.users[user]
    checked = 0
    for op in operations(w.spec):
        if op.kind == "public":
            continue
        want = expected(user, op)
        allowed = 200 <= want < 300
        url, body = plan(w, op, allowed)
        before = w.state()
        status, payload = call(client, op, url, body)
        hidden = want == 404 and op.params
        if hidden:
            # Existence is not revealed: project A's object answers as an id no row has.
            absent = call(client, op, fill(op.path, dict.fromkeys(op.params, ABSENT)), body)
        after = w.state()
        where = f"{user}: {op.method.upper()} {url}"
        if hidden:
            assert absent[0] == 404 and re.sub(r"\d+", "#", json.dumps(absent[1])) == re.sub(
                r"\d+", "#", json.dumps(payload)), (where, "answers unlike a missing object", payload, absent)
        if op.fab and allowed:
            # The admin's probe: past FAB's role check, refused for its absent id or malformed body.
            assert status not in (401, 403) and status < 500, (where, status, payload)
        else:
            assert status == want, (where, f"expected {want}, got {status}", body, payload)
        if not allowed or op.method == "get" or op.fab:
            assert after == before, f"{where} answered {status} but changed {changed_tables(before, after)}"
        elif op.key not in NO_ROW_CHANGE:
            assert after != before, f"{where} succeeded but changed nothing: give it a body that changes something"
        if allowed and op.collection and op.method == "get":
            check_collection(w, user, op, payload)
        elif allowed and op.method == "get" and op.path.endswith("/{pk}") and not op.fab:
            assert payload["id"] == int(url.rsplit("/", 1)[-1]), (where, payload)
        checked += 1
    # The platform's own operations (FAB's generic security API is off: users are myapp/api/users.py).
    assert checked >= 90, f"the walk covered only {checked} operations"


def test_every_operation_is_classified(walk: Walk):
    ops = operations(walk.spec)
    for op in ops:
        check_plannable(walk, op)
    kinds = {op.kind for op in ops}
    assert kinds == {"public", "signed-in", "admin", "catalog", "project"}, kinds
    assert not set(BODIES) - {op.key for op in ops}, "BODIES for operations that no longer exist"


@pytest.mark.parametrize("operation, reason", [
    (("post", "/api/v1/widget/{pk}/frob", {"summary": "no x-scope"}), "unclassified operation"),
    (("get", "/api/v1/securityish/", {"summary": "outside FAB's prefixes, no x-scope"}), "unclassified operation"),
    (("put", "/api/v1/pipeline/{pk}/rename", {"x-scope": "project", "x-permission": "can_read",
                                              "x-resource": "pipeline"}), "reads are can_read"),
    (("post", "/api/v1/pipeline/{pk}/frob", {"x-scope": "project", "x-permission": "can_write",
                                             "x-resource": "pipeline", "requestBody": {}}), "no request body"),
    (("delete", "/api/v1/pipeline/{pk}/steps/{step_id}", {"x-scope": "project", "x-permission": "can_write",
                                                          "x-resource": "pipeline"}), "no id for path parameter"),
    (("get", "/api/v1/pipeline/stats", {"x-scope": "project", "x-permission": "can_read",
                                        "x-resource": "pipeline"}), "no check for the collection read"),
    (("delete", "/api/v1/widget/{pk}", {"x-scope": "project", "x-permission": "can_write",
                                        "x-resource": "widget"}), "the walk's world has no widget"),
    (("post", "/api/v1/pipeline/{pk}/clone", {  # a body gains a reference to another object
        "x-scope": "project", "x-permission": "can_write", "x-resource": "pipeline", "requestBody": {
            "content": {"application/json": {"schema": {"properties": {"widget_id": {"type": "integer"}}}}}}}),
     "references something the mixed-id walk does not know"),
])
def test_an_unclassified_operation_fails_the_walk(walk: Walk, operation, reason):
    """An endpoint the walk cannot check (no scope, a write declared read, no body or target) fails it."""
    method, path, op = operation
    spec = {**walk.spec, "paths": {**walk.spec["paths"], path: {method: op}}}
    with pytest.raises(AssertionError, match=reason):
        for each in operations(spec):
            check_plannable(walk, each)


# ---- the mixed-id walk -------------------------------------------------------------------------------

@dataclass
class Mixed:
    label: str
    url: str
    body: dict | None
    home: str  # the project the request acts in: "a" or "b"
    tokens: tuple[str, ...]  # the refusal names one of them: an id or field of the request
    only_b: bool = False  # nothing of A is left: a member of B may do it


def mixed_cases(w: Walk, op: Op) -> Iterator[Mixed]:
    a_values = {p: object_id(w, op, p, "a") for p in op.params}
    if len(op.params) > 1:
        for param in op.params:
            values = {**a_values, param: object_id(w, op, param, "b")}
            body = BODIES[op.key](w) if op.has_body else None
            yield Mixed(f"{{{param}}} of project B", fill(op.path, values), body,
                        "b" if param == op.params[0] else "a", tuple(str(v) for v in values.values()))
    paths = ref_paths(w.spec, op)
    for path in paths:
        resource = ref_resource(path)
        # Another project's object; for the catalog's (seen by all), an id no row has; for tasks, also
        # a task of another pipeline of the same project.
        variants = [(w.b[resource], "project B")] if resource else [(ABSENT, "nowhere")]
        if resource == "task":
            variants.append((w.a["other_task"], "another pipeline of project A"))
        for bad, where in variants:
            body = BODIES[op.key](w)
            found = get_path(body, path)
            if found is None and op.method == "put" and "." not in path:
                body = {}  # a partial update of that field alone
                found = (body, path)
            assert found is not None, f"BODIES[{op.key!r}] lacks the reference field {path}: add it"
            holder, leaf = found
            holder[leaf] = bad
            left = [p for p in paths if p != path and ref_resource(p) and get_path(body, p)]
            only_b = where == "project B" and not op.params and not left
            tokens = (str(bad), *{p.rsplit(".", 1)[-1] for p in paths})
            yield Mixed(f"{path} of {where}", fill(op.path, a_values), body, "b" if only_b else "a", tokens, only_b)
    if op.key == "post /api/v1/pipeline/import":
        yaml = import_yaml(w.names["b"], unique("imp"), w.names["template"])
        yield Mixed("project B by name", op.path, {"yaml": yaml}, "b", (w.names["b"],), only_b=True)


@pytest.mark.parametrize("caller", MIXERS)
def test_ids_of_two_projects_never_mix(walk: Walk, caller: str):
    w, client = walk, walk.users[caller]
    cases = 0
    for op in operations(w.spec):
        if op.kind != "project" or op.method == "get":
            continue
        for case in mixed_cases(w, op):
            role = MEMBERSHIP[caller].get(case.home)
            if case.only_b and role is not None:
                continue  # a member of B may write into B: nothing mixed
            if role is None:
                want = {404}
            elif RANK[role] < RANK[op.need]:
                want = {403}
            else:
                want = {400, 404}
            before = w.state()
            status, payload = call(client, op, case.url, case.body)
            after = w.state()
            where = f"{caller}: {op.method.upper()} {case.url} with {case.label}"
            assert status in want, (where, f"expected {sorted(want)}, got {status}", case.body, payload)
            assert after == before, f"{where} answered {status} but changed {changed_tables(before, after)}"
            if status != 403:
                text = json.dumps(payload)
                assert any(t in text for t in case.tokens), (where, "the refusal names none of", case.tokens, payload)
            cases += 1
    assert cases >= 25, f"the mixed-id walk covered only {cases} requests"


# ---- members ------------------------------------------------------------------------------------------

def test_members_are_managed_by_owners_only(walk: Walk):
    w = walk
    pid, members = w.a["project"], w.members["a"]
    # Nobody below owner changes a member, not even themselves.
    for user, member, body in (("developer", "developer", {"role": "owner"}), ("viewer", "viewer", {"role": "owner"}),
                               ("developer", "owner", {"role": "viewer"}), ("viewer", "owner", {"role": "viewer"})):
        for method in ("put", "delete"):
            before = w.state()
            resp = w.users[user].request(method, f"/api/v1/project/{pid}/members/{members[member]}",
                                         json=body if method == "put" else None)
            assert resp.status_code == 403, (user, method, member, resp.get_json())
            assert w.state() == before, (user, method, member)
    # An owner promotes a member, who may then manage members, and demotes them again.
    spare = w.spare_user()[1]
    added = add_member(w.owner, pid, spare, "developer")
    resp = w.owner.put(f"/api/v1/project/{pid}/members/{members['developer']}", json={"role": "owner"})
    assert resp.status_code == 200 and resp.get_json()["role"] == "owner", resp.get_json()
    resp = w.users["developer"].put(f"/api/v1/project/{pid}/members/{added}", json={"role": "viewer"})
    assert resp.status_code == 200 and resp.get_json()["role"] == "viewer", resp.get_json()
    resp = w.owner.put(f"/api/v1/project/{pid}/members/{members['developer']}", json={"role": "developer"})
    assert resp.status_code == 200 and resp.get_json()["role"] == "developer", resp.get_json()
    before = w.state()
    resp = w.users["developer"].delete(f"/api/v1/project/{pid}/members/{added}")
    assert resp.status_code == 403, resp.get_json()
    assert w.state() == before
    assert w.owner.delete(f"/api/v1/project/{pid}/members/{added}").status_code == 200


def test_the_last_owner_stays(walk: Walk):
    w = walk
    owner, admin, developer = w.owner, w.admin, w.users["developer"]
    pid = created(owner.post("/api/v1/project/", json={"name": unique("sole")}))["id"]
    first = owner.get(f"/api/v1/project/{pid}/members").get_json()["items"][0]["id"]
    for client in (owner, admin):
        before = w.state()
        attempts = [client.delete(f"/api/v1/project/{pid}/members/{first}")]
        attempts += [client.put(f"/api/v1/project/{pid}/members/{first}", json={"role": role})
                     for role in ("developer", "viewer")]
        for resp in attempts:  # 409, naming the member's role
            assert resp.status_code == 409, resp.get_json()
            assert resp.get_json()["errors"][0]["field"] == "role" and "last owner" in resp.get_json()["message"]
        assert w.state() == before, "the last owner was removed or demoted"
    # With a second owner the first may step down; then the second is the last one.
    second = add_member(owner, pid, developer.username, "owner")
    assert owner.put(f"/api/v1/project/{pid}/members/{first}", json={"role": "viewer"}).status_code == 200
    before = w.state()
    assert developer.delete(f"/api/v1/project/{pid}/members/{second}").status_code == 409
    assert developer.put(f"/api/v1/project/{pid}/members/{second}", json={"role": "viewer"}).status_code == 409
    assert owner.put(f"/api/v1/project/{pid}/members/{second}", json={"role": "viewer"}).status_code == 403
    assert w.state() == before


@pytest.mark.parametrize("action", ["put", "delete"])
def test_two_owners_cannot_demote_each_other_at_once(walk: Walk, monkeypatch, action: str):
    """Each of the last two owners demotes (or removes) the other at the same moment: one wins, the
    other is refused, and the project keeps an owner. Both requests are held right after counting the
    other owners, so without a lock both would see one left and both would go through."""
    import threading

    from myapp.api.projects import ProjectApi

    w = walk
    first, second = w.owner, w.users["owner_both"]
    pid = created(first.post("/api/v1/project/", json={"name": unique("two")}))["id"]
    mine = first.get(f"/api/v1/project/{pid}/members").get_json()["items"][0]["id"]
    theirs = add_member(first, pid, second.username, "owner")
    barrier = threading.Barrier(2, timeout=1.5)
    counted = ProjectApi._owners_left

    def held(self, pk: int, without: int) -> int:
        left = counted(self, pk, without)
        try:
            barrier.wait()  # the other request has counted too (unless a lock holds it back)
        except threading.BrokenBarrierError:
            pass
        return left

    monkeypatch.setattr(ProjectApi, "_owners_left", held)
    answers: dict[str, int] = {}

    def demote(name: str, client: ApiClient, member: int) -> None:
        caller = ApiClient(client.client.application.test_client(), client.token)
        url = f"/api/v1/project/{pid}/members/{member}"
        resp = caller.put(url, json={"role": "viewer"}) if action == "put" else caller.delete(url)
        answers[name] = resp.status_code

    threads = [threading.Thread(target=demote, args=("first", first, theirs)),
               threading.Thread(target=demote, args=("second", second, mine))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    monkeypatch.setattr(ProjectApi, "_owners_left", counted)
    members = w.admin.get(f"/api/v1/project/{pid}/members").get_json()["items"]
    owners = [m for m in members if m["role"] == "owner"]
    assert sorted(answers.values()) == [200, 409] and len(owners) == 1, (answers, members)


def test_admin_sees_and_manages_everything(walk: Walk):
    w = walk
    admin = w.admin
    for key in ("pipeline", "notebook", "task_run"):
        assert admin.get(f"/api/v1/{key}/{w.b[key]}").status_code == 200
    group = created(admin.post("/api/v1/resource_group/", json=BODIES["post /api/v1/resource_group/"](w)))
    quota = created(admin.post("/api/v1/quota/", json={"project_id": w.b["project"], "resource_group_id": group["id"],
                                                       "cpu": "8", "memory": "32Gi", "gpus": 2}))
    quota = admin.get(f"/api/v1/quota/{quota['id']}").get_json()
    assert (quota["cpu"], quota["memory"], quota["gpus"]) == ("8", "32Gi", 2)
    resp = admin.put(f"/api/v1/quota/{quota['id']}", json={"cpu": "500m"})
    assert resp.status_code == 200 and resp.get_json()["cpu_millicores"] == 500
