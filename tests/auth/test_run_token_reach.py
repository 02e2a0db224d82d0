"""What a run's platform API token may reach (myapp/auth/run_tokens.py): its own project, as a developer,
and nothing else, whatever roles its bot holds; the OpenAPI spec walked with it.
"""
from __future__ import annotations

import datetime as dt
import io

import pytest

from tests.auth.support import as_token
from tests.world import build_catalog, build_project, data_file, experiment_body

pytestmark = pytest.mark.backends


# ---- what a run token may reach: its project, as a developer; nothing else ------------------------

# Creates of B's objects through a parent of B (the collection POSTs): each must answer 404.
def b_creates(b: dict[str, int], names: dict[str, str]) -> dict[str, dict]:
    return {
        "/api/v1/pipeline/": {"project_id": b["project"], "name": "x"},
        "/api/v1/task/": {"pipeline_id": b["pipeline"], "name": "x", "template_id": names["template_id"]},
        "/api/v1/edge/": {"pipeline_id": b["pipeline"], "upstream_task_id": b["task"],
                          "downstream_task_id": b["task2"]},
        "/api/v1/pipeline_run/": {"pipeline_id": b["pipeline"]},
        "/api/v1/experiment/": experiment_body(b["pipeline"]),
        "/api/v1/experiment/import": {"yaml": f"name: x\nproject: {names['b']}\npipeline: train\n"
                                               "objectives: [{metric: loss}]\nsearch_space: [{name: lr, type: float, "
                                               "low: 0.1, high: 1.0}]\n"},
        "/api/v1/model_version/": {"project_id": b["project"], "name": "x", "uri": "file:///m.pt"},
        "/api/v1/model_version/upload": {"project_id": str(b["project"]), "name": "x", "framework": "sklearn"},
        "/api/v1/notebook/": {"project_id": b["project"], "name": "x", "image": "jupyter/base:1"},
        "/api/v1/inference_service/": {"project_id": b["project"], "name": "x",
                                       "model_version_id": b["model_version"]},
        "/api/v1/image_build/": {"project_id": b["project"], "repository": "r.local/x", "tag": "v1",
                                 "packages": ["numpy==2.1"]},
        "/api/v1/pipeline/import": {
            "yaml": f"name: x\nproject: {names['b']}\ntasks:\n- {{name: t, template: python}}\n"},
    }


def test_a_run_token_reaches_its_project_only_and_no_admin_api(app, catalog, make_user, monkeypatch):
    """Walk the OpenAPI spec with project A's run token, its bot made an Admin and an owner of A and
    B on purpose: the token still acts as a developer of A alone. Lists show nothing of B, every
    operation on an object of B is 404, every admin API 403; A's objects are there."""
    import myapp.api.pipelines
    from myapp.auth import run_tokens
    from myapp.auth.security import ADMIN_ROLE
    from myapp.extensions import appbuilder, db
    from myapp.models import PipelineRun, Project, ProjectMember, ProjectRole, RunState

    monkeypatch.setattr(myapp.api.pipelines, "enqueue", lambda *args: None)  # no workers needed
    admin = make_user(admin=True)
    cat = build_catalog(admin)
    a, b = build_project(make_user(), cat, app), build_project(make_user(), cat, app)
    with app.app_context():
        run = db.session.get(PipelineRun, a.ids["pipeline_run"])
        run.transition(RunState.RUNNING)
        row = run_tokens.issue(run, dt.datetime.now(dt.UTC))
        bot = db.session.get(appbuilder.sm.user_model, row.user_id)
        bot.roles.append(appbuilder.sm.find_role(ADMIN_ROLE))
        for project_id in (a.ids["project"], b.ids["project"]):
            db.session.add(ProjectMember(project_id=project_id, user_id=bot.id, role=ProjectRole.OWNER))
        b_name = db.session.get(Project, b.ids["project"]).name
        db.session.commit()
        token = run_tokens.token_of(row)
    api = as_token(app, token)
    spec = admin.get("/api/v1/_openapi").get_json()
    ids_b = {**b.ids, "member_id": b.ids["member"]}
    checked: dict[str, int] = {}
    for path, ops in sorted(spec["paths"].items()):
        for method, op in ops.items():
            where, scope = f"{method.upper()} {path}", op.get("x-scope")
            url = path.replace("{version}", "v1")
            if path.startswith(("/api/v1/security/", "/api/v1/menu/")):
                if path in ("/api/v1/security/login", "/api/v1/security/refresh"):
                    continue
                resp = api.request(method, url.replace("{pk}", "1").replace("{role_id}", "1"), json={})
                expected = 403
            elif scope == "admin":
                resp = api.request(method, url.replace("{pk}", "1"), json={} if method != "get" else None)
                expected = 403
            elif path == "/api/v1/notebook/authz":  # asked by the notebook proxy alone (its own key)
                resp = api.get(url)
                expected = 403
            elif scope == "catalog":
                resp = api.request(method, url.replace("{pk}", str(cat[op["x-resource"]])),
                                   json={} if method != "get" else None)
                expected = 200 if method == "get" else 403
            elif scope == "project" and "{pk}" in path:
                target = url.replace("{pk}", str(ids_b[op["x-resource"]])).replace(
                    "{member_id}", str(ids_b["member_id"]))
                resp = api.request(method, target, json={} if method != "get" else None)
                expected = 404
            elif scope == "project" and method == "post":
                body = b_creates(b.ids, {"template_id": cat["job_template"], "b": b_name}).get(path)
                assert body is not None or path == "/api/v1/project/", f"{where}: no body of B to try"
                if body is None:
                    continue  # a new project: any signed-in user may start one
                if "multipart/form-data" in op.get("requestBody", {}).get("content", {}):  # a model file
                    resp = api.post(url, json=None, content_type="multipart/form-data",
                                    data={**body, "file": (io.BytesIO(b"model"), "model.joblib")})
                else:
                    resp = api.post(url, json=body)
                expected = 404
            elif scope == "project":  # lists: only A's rows
                resp = api.get(url)
                assert resp.status_code == 200, (where, resp.get_json())
                body = resp.get_json()
                if path == "/api/v1/me/":
                    seen = {p["id"] for p in body["projects"]}
                    assert body["is_admin"] is False and [p["role"] for p in body["projects"]] == ["developer"]
                else:
                    seen = {item["id"] if op["x-resource"] == "project" else item["project_id"]
                            for item in body["items"]}
                assert seen == {a.ids["project"]}, (where, seen)
                checked[where] = 200
                continue
            else:
                assert path == "/api/{version}/_openapi", f"unclassified {where}"
                continue
            assert resp.status_code == expected, (where, resp.status_code, resp.get_json())
            checked[where] = expected
    assert len([w for w, s in checked.items() if s == 404]) >= 30, checked
    # A's own objects are there for it, as for a developer: it reads, writes, but does not own.
    for resource in ("project", "pipeline", "task", "pipeline_run", "task_run", "model_version", "notebook"):
        assert api.get(f"/api/v1/{resource}/{a.ids[resource]}").status_code == 200, resource
    model = data_file(app, a.ids["project"], "m.pt")
    assert api.post("/api/v1/model_version/", json={"project_id": a.ids["project"], "name": "digits",
                                                     "uri": model}).status_code == 201
    assert api.put(f"/api/v1/project/{a.ids['project']}", json={"description": "x"}).status_code == 403
