"""Walk every operation in the OpenAPI spec and prove no project leaks into another.

The walk is driven by the served spec, so an endpoint added later is covered (or the
walk fails, asking for it to be classified) without editing this file's loop.
"""
from __future__ import annotations

import re

import pytest

from world import build_catalog, build_project

# Operations anyone may call: logging in needs no token.
PUBLIC = {("post", "/api/v1/security/login"), ("post", "/api/v1/security/refresh")}
# FAB's own user/role/permission APIs and menu: admin-only by FAB role.
ADMIN_PREFIXES = ("/api/v1/security/", "/api/v1/menu/")
SIGNED_IN = {"/api/{version}/_openapi"}


def create_bodies(a: dict, b: dict, cat: dict) -> dict[str, list[dict]]:
    """POST bodies a member of project A sends that reach into project B: each must be 404."""
    b_yaml = f"name: leak\nproject: {b['project_name']}\ntasks: [{{name: t, template: python}}]\n"
    return {
        "pipeline/import": [{"yaml": b_yaml}],
        "pipeline": [{"project_id": b["project"], "name": "leak"}],
        "task": [{"pipeline_id": b["pipeline"], "name": "leak", "template_id": cat["job_template"]}],
        "edge": [
            {"pipeline_id": b["pipeline"], "upstream_task_id": b["task"], "downstream_task_id": b["task2"]},
            # A's own pipeline, B's tasks:
            {"pipeline_id": a["pipeline"], "upstream_task_id": b["task"], "downstream_task_id": a["task"]},
        ],
        "pipeline_run": [{"pipeline_id": b["pipeline"]}],
        "notebook": [{"project_id": b["project"], "name": "leak", "image": "jupyter/base:1"}],
        "model_version": [
            {"project_id": b["project"], "name": "leak", "uri": "file:///x"},
            {"project_id": a["project"], "name": "leak", "uri": "file:///x", "task_run_id": b["task_run"]},
        ],
        "inference_service": [
            {"project_id": b["project"], "name": "leak", "model_version_id": b["model_version"]},
            {"project_id": a["project"], "name": "leak", "model_version_id": b["model_version"]},
        ],
        "image_build": [{"project_id": b["project"], "repository": "r.io/x", "tag": "v1", "packages": ["numpy"]}],
        "project": [],  # creating a project touches no other project; tested in test_api_projects
        "project/members": [{"username": "nobody", "role": "viewer"}],
    }


def operations(spec: dict):
    for path, ops in sorted(spec["paths"].items()):
        for method, op in ops.items():
            yield method, path, op


def classify(method: str, path: str, op: dict) -> str:
    if (method, path) in PUBLIC:
        return "public"
    if path in SIGNED_IN:
        return "signed-in"
    if path.startswith(ADMIN_PREFIXES):
        return "admin"
    scope = op.get("x-scope")
    assert scope in {"admin", "catalog", "project"}, f"unclassified operation {method.upper()} {path}"
    return scope


def fill(path: str, resource: str, ids: dict) -> str:
    def sub(match: re.Match) -> str:
        name = match.group(1)
        if name == "version":
            return "v1"
        if path.startswith(ADMIN_PREFIXES):
            return "1"  # FAB's users/roles: any id; the role check comes first
        key = {"pk": resource, "member_id": "member"}.get(name, "?")
        assert key in ids, f"no id for path parameter {{{name}}} of {path}: extend fill()"
        return str(ids[key])

    return re.sub(r"{(\w+)}", sub, path)


def resource_key(path: str, op: dict) -> str:
    """The resource, plus the action for collection-level actions (/pipeline/import)."""
    res = op.get("x-resource", "")
    tail = path.rstrip("/").rsplit("/", 1)[-1]
    if "{" not in path and tail != res:
        return f"{res}/{tail}"
    return f"{res}/members" if "/members" in path else res


@pytest.fixture()
def walk_world(app, admin, make_user):
    alice, bob, carol = make_user(), make_user(), make_user()
    cat = build_catalog(admin)
    a = build_project(alice, cat, app)
    b = build_project(bob, cat, app)
    resp = bob.post(f"/api/v1/project/{b.ids['project']}/members", json={"username": carol.username, "role": "viewer"})
    assert resp.status_code == 201, resp.get_json()
    quota = admin.post("/api/v1/quota/", json={"project_id": b.ids["project"], "resource_group_id": cat["resource_group"],
                                               "cpu": "8", "memory": "32Gi", "gpus": 2})
    assert quota.status_code == 201, quota.get_json()
    cat["quota"] = quota.get_json()["id"]
    spec = admin.get("/api/v1/_openapi").get_json()
    b.ids["project_name"] = b.project["name"]
    return {"alice": alice, "bob": bob, "carol": carol, "admin": admin, "cat": cat, "a": a.ids, "b": b.ids,
            "spec": spec}


def snapshot(client, ids: dict) -> dict:
    out = {}
    for key, value in ids.items():
        if key in ("task2", "member", "project_name"):
            continue
        resp = client.get(f"/api/v1/{key}/{value}")
        assert resp.status_code == 200, (key, resp.get_json())
        out[key] = resp.get_json()
    return out


def test_every_operation_is_scoped(walk_world):
    w = walk_world
    alice, bob, carol = w["alice"], w["bob"], w["carol"]
    before = snapshot(bob, w["b"])
    bodies = create_bodies(w["a"], w["b"], w["cat"])
    anonymous = type(alice)(alice.client.application.test_client(), None)
    checked = 0
    for method, path, op in operations(w["spec"]):
        kind = classify(method, path, op)
        if kind == "public":
            continue
        res = resource_key(path, op)
        url = fill(path, op.get("x-resource", ""), {**w["cat"], **w["b"]})
        where = f"{method.upper()} {path}"
        # Nobody signed in: 401 everywhere but the public operations.
        assert anonymous.request(method, url, json={}).status_code == 401, where
        if kind == "admin":
            assert alice.request(method, url, json={}).status_code == 403, where
            assert carol.request(method, url, json={}).status_code == 403, where
        elif kind == "catalog":
            expected = 200 if method == "get" else 403
            assert alice.request(method, url, json={}).status_code == expected, where
        elif kind == "signed-in":
            assert alice.request(method, url).status_code == 200, where
        elif "{" in path:
            # An object of project B, by id: 404 for a member of A, whatever the action.
            resp = alice.request(method, url, json={})
            assert resp.status_code == 404, (where, resp.get_json())
            if method == "get":
                assert bob.get(url).status_code == 200, f"control: owner of B reads {where}"
            if op["x-permission"] == "can_write":
                # A viewer of B sees the object but may not change it.
                resp = carol.request(method, url, json={})
                assert resp.status_code == 403, (where, resp.get_json())
        elif method == "get" and res == "me":
            projects = alice.get(url).get_json()["projects"]
            assert w["b"]["project"] not in [p["id"] for p in projects], where
        elif method == "get":
            # Lists: nothing of B, even when asked for by filter.
            items = alice.get(url).get_json()["items"]
            assert all(i.get("project_id", i.get("id")) != w["b"]["project"] for i in items), where
            filtered = alice.get(url, query_string={"project_id": w["b"]["project"]})
            if res != "project":
                assert filtered.status_code == 200, where
                assert filtered.get_json()["items"] == [], where
        elif method == "post":
            assert res in bodies, f"no cross-project bodies for {where}: add them to create_bodies()"
            for body in bodies[res]:
                resp = alice.post(url, json=body)
                assert resp.status_code == 404, (where, body, resp.get_json())
        else:
            pytest.fail(f"unexpected collection operation {where}")
        checked += 1
    assert checked > 50, f"the walk covered only {checked} operations"
    assert snapshot(bob, w["b"]) == before, "project B changed during the walk"


def test_admin_sees_and_manages_everything(walk_world):
    w = walk_world
    admin = w["admin"]
    for key in ("pipeline", "notebook", "task_run"):
        assert admin.get(f"/api/v1/{key}/{w['b'][key]}").status_code == 200
    quota = admin.get(f"/api/v1/quota/{w['cat']['quota']}").get_json()
    assert (quota["cpu"], quota["memory"], quota["gpus"]) == ("8", "32Gi", 2)
    resp = admin.put(f"/api/v1/quota/{w['cat']['quota']}", json={"cpu": "500m"})
    assert resp.status_code == 200 and resp.get_json()["cpu_millicores"] == 500
