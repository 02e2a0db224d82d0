"""The control plane under bad input: 400 (413 for size) naming the field, never a 500, nothing stored.

Runs on SQLite and, with MYAPP_TEST_DATABASE=postgresql, on PostgreSQL, which refuses integers beyond
64 bits and strings with lone surrogates that SQLite would take."""
from __future__ import annotations

import json

import pytest

from tests.api.support import Shapes
from tests.support import unique
from tests.world import build_catalog, created

pytestmark = pytest.mark.backends

BIG = 2**70


@pytest.fixture()
def project(user):
    return created(user.post("/api/v1/project/", json={"name": unique("p")}))


def errors_of(resp) -> dict[str, str]:
    return {e["field"]: e["reason"] for e in resp.get_json()["errors"]}


def obj(**members: object) -> str:
    """A JSON object written by hand: each value is JSON text, so it may be NaN or hold escapes."""
    return "{" + ", ".join(f'"{key}": {value}' for key, value in members.items()) + "}"


def raw_post(user, path: str, text: str | bytes, method: str = "POST"):
    return user.client.open(path, method=method, data=text, content_type="application/json",
                            headers={"Authorization": f"Bearer {user.token}"})


def pipelines_of(user, project) -> int:
    return user.get("/api/v1/pipeline/", query_string={"project_id": project["id"]}).get_json()["count"]


# ---- ids beyond 64 bits ------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/api/v1/pipeline/99999999999999999999999",
                                  "/api/v1/pipeline/9223372036854775808",
                                  "/api/v1/pipeline/99999999999999999999999/graph"])
def test_url_ids_beyond_64_bits_are_404(user, path):
    for method in ("GET", "PUT", "DELETE"):
        if method != "GET" and path.endswith("graph"):
            continue
        resp = user.request(method, path, json={"description": "x"} if method == "PUT" else None)
        assert resp.status_code == 404, (method, resp.get_json())
        assert "message" in resp.get_json()


def test_body_ids_beyond_64_bits_are_named(user, project):
    resp = user.post("/api/v1/pipeline/", json={"project_id": BIG, "name": "big"})
    assert resp.status_code == 400
    assert "64 bits" in errors_of(resp)["project_id"]
    resp = user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "big",
                                                "max_active_runs": -BIG})
    assert resp.status_code == 400 and "max_active_runs" in errors_of(resp)
    assert pipelines_of(user, project) == 0


def test_query_ints_beyond_64_bits_are_named(user):
    for query, field in [({"project_id": str(BIG)}, "project_id"), ({"page": str(BIG)}, "page"),
                         ({"page_size": str(BIG)}, "page_size"), ({"project_id": "9" * 5000}, "project_id")]:
        resp = user.get("/api/v1/pipeline/", query_string=query)
        assert resp.status_code == 400, (query, resp.get_json())
        assert field in errors_of(resp)


# ---- strings a database cannot store ------------------------------------------------------------------
def test_lone_surrogates_are_named(user, project):
    body = obj(project_id=project["id"], name='"ok"', description='"bad \\ud800 text"')
    resp = raw_post(user, "/api/v1/pipeline/", body)
    assert resp.status_code == 400
    assert "surrogate" in errors_of(resp)["description"]
    key = obj(project_id=project["id"], name='"ok"', **{"\\udfff": "1"})
    assert "surrogate" in raw_post(user, "/api/v1/pipeline/", key).get_json()["message"]
    assert pipelines_of(user, project) == 0


# ---- NaN, Infinity, nesting ------------------------------------------------------------------------------
@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_refused_naming_the_field(admin, user, project, constant):
    resp = raw_post(user, "/api/v1/pipeline/",
                    obj(project_id=project["id"], name='"n"', max_active_runs=constant))
    assert resp.status_code == 400
    assert constant in errors_of(resp)["max_active_runs"]
    cat = build_catalog(admin)
    pipe = created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "g"}))
    task = obj(key='"a"', name='"a"', template_id=cat["job_template"], args=obj(epochs=constant))
    body = obj(tasks=f"[{task}]", edges="[]")
    resp = raw_post(user, f"/api/v1/pipeline/{pipe['id']}/graph", body, method="PUT")
    assert resp.status_code == 400
    assert "finite" in errors_of(resp)["tasks[0].args.epochs"]
    assert user.get(f"/api/v1/pipeline/{pipe['id']}/graph").get_json()["tasks"] == []


# ---- ids beyond the INTEGER columns (32 bits): PostgreSQL fails a statement comparing one -------------
WIDE = 2**40


def test_ids_beyond_32_bits_are_404_or_named(admin, user, project):
    cat = build_catalog(admin)
    assert user.get(f"/api/v1/pipeline/{WIDE}").status_code == 404
    resp = user.post("/api/v1/pipeline/", json={"project_id": WIDE, "name": "wide"})
    assert resp.status_code == 400 and "project_id" in errors_of(resp)
    resp = user.get("/api/v1/pipeline/", query_string={"project_id": str(WIDE)})
    assert resp.status_code == 400 and "32 bits" in errors_of(resp)["project_id"]
    pipe = created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "w"}))
    resp = user.put(f"/api/v1/pipeline/{pipe['id']}/graph", json={"tasks": [
        {"key": "a", "name": "a", "template_id": cat["job_template"]},
        {"key": "b", "name": "b", "template_id": WIDE}], "edges": []})
    assert resp.status_code == 400 and "tasks[1].template_id" in errors_of(resp)
    assert user.get(f"/api/v1/pipeline/{pipe['id']}/graph").get_json()["tasks"] == []


@pytest.mark.parametrize("depth", [100, 10_000])
def test_deep_nesting_is_refused(user, project, depth):
    body = obj(project_id=project["id"], name='"deep"', description="[" * depth + "]" * depth)
    resp = raw_post(user, "/api/v1/pipeline/", body)
    assert resp.status_code == 400
    assert "nested deeper" in resp.get_json()["errors"][0]["reason"]
    assert pipelines_of(user, project) == 0


def test_graph_put_with_big_ids_stores_nothing(admin, user, project):
    cat = build_catalog(admin)
    pipe = created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "g"}))
    resp = user.put(f"/api/v1/pipeline/{pipe['id']}/graph", json={"tasks": [
        {"key": "a", "name": "a", "template_id": cat["job_template"]},
        {"key": "b", "name": "b", "template_id": BIG}], "edges": []})
    assert resp.status_code == 400
    assert "64 bits" in errors_of(resp)["tasks[1].template_id"]
    assert user.get(f"/api/v1/pipeline/{pipe['id']}/graph").get_json()["tasks"] == []


# ---- size --------------------------------------------------------------------------------------------
def test_oversized_body_is_413_json(app, user, project):
    limit = app.config["MAX_CONTENT_LENGTH"]
    assert limit == 2 * 1024 * 1024
    body = json.dumps({"project_id": project["id"], "name": "huge", "description": "x" * limit})
    resp = raw_post(user, "/api/v1/pipeline/", body)
    assert resp.status_code == 413
    assert "message" in resp.get_json()
    assert pipelines_of(user, project) == 0


# ---- YAML import -------------------------------------------------------------------------------------
BOMB = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def yaml_of(project, extra: str = "", epochs: str = "3") -> str:
    return (f"name: imported\nproject: {project['name']}\n{extra}tasks:\n"
            f"  - name: a\n    template: nope\n    args: {{epochs: {epochs}}}\n")


@pytest.mark.parametrize("text, words", [
    (BOMB, "expands to more than"),
    ("a: " + "[" * 10_000 + "]" * 10_000, "nested deeper"),
    ("a: " + "[" * 100 + "]" * 100, "nested deeper"),
    ("a: " + "x" * 1_000_001, "Length"),
    ("\x88a: b", "not valid YAML"),  # control characters: PyYAML's reader refuses them before parsing
])
def test_yaml_bombs_and_limits_name_yaml(user, project, text, words):
    resp = user.post("/api/v1/pipeline/import", json={"yaml": text})
    assert resp.status_code in (400, 413), resp.get_json()
    if resp.status_code == 400:
        assert words.lower() in errors_of(resp)["yaml"].lower()
    assert pipelines_of(user, project) == 0


@pytest.mark.parametrize("epochs, words", [(".nan", "finite"), (".inf", "finite"), (str(BIG), "64 bits"),
                                           ('"\\ud800"', "surrogate")])
def test_yaml_values_a_database_cannot_store_name_yaml(user, project, epochs, words):
    resp = user.post("/api/v1/pipeline/import", json={"yaml": yaml_of(project, epochs=epochs)})
    assert resp.status_code == 400, resp.get_json()
    reason = errors_of(resp)["yaml"]
    assert words in reason and "tasks[0].args.epochs" in reason
    assert pipelines_of(user, project) == 0


# ---- security headers ------------------------------------------------------------------------------
def check_headers(resp) -> None:
    csp = resp.headers["Content-Security-Policy"]
    assert "default-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp.split("script-src")[1] if "script-src" in csp else True
    assert resp.headers["X-Frame-Options"] == "DENY"
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert resp.headers["Referrer-Policy"] == "same-origin"


def test_security_headers_on_api_ui_and_errors(app, user, project):
    check_headers(user.get(f"/api/v1/project/{project['id']}"))
    check_headers(user.get("/api/v1/pipeline/99999999999999999999999"))
    check_headers(user.post("/api/v1/pipeline/", json={"project_id": BIG}))
    client = app.test_client()
    check_headers(client.get("/ui/"))
    check_headers(client.get("/"))
    check_headers(client.get("/health"))
    check_headers(client.get("/no-such-page"))
    check_headers(client.get("/api/v1/session/"))


def test_swagger_gets_its_own_narrow_policy(app, admin):
    browser = app.test_client()
    token = browser.get("/api/v1/session/").get_json()["csrf_token"]
    login = browser.post("/api/v1/session/login", json={"username": admin.username, "password": admin.password},
                         headers={"X-CSRFToken": token})
    assert login.status_code == 200, login.get_json()
    resp = browser.get("/swagger/v1")
    assert resp.status_code == 200 and b"swagger-ui" in resp.data
    csp = resp.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in csp and resp.headers["X-Frame-Options"] == "DENY"
    assert "script-src 'self' 'unsafe-inline'" in csp  # its inline start-up script, and only here
    assert "unsafe-inline" not in browser.get("/ui/").headers["Content-Security-Policy"].split("style-src")[0]


# ---- found by schemathesis (tests/test_fuzz_api.py) --------------------------------------------------
def test_nul_characters_are_named(user, project):
    """PostgreSQL's text and JSONB cannot hold U+0000: refused on both databases, naming the field."""
    resp = user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "n", "description": "a\x00b"})
    assert resp.status_code == 400
    assert "NUL" in errors_of(resp)["description"]
    resp = user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "n", "params": {"k\x00": 1}})
    assert resp.status_code == 400 and "NUL" in errors_of(resp)["params"]
    resp = user.post("/api/v1/pipeline/import", json={"yaml": yaml_of(project, epochs='"a\\0b"')})
    assert resp.status_code == 400 and "NUL" in errors_of(resp)["yaml"]
    assert pipelines_of(user, project) == 0


def test_options_with_a_bearer_token_answers_allow(user):
    """flask-jwt-extended verifies nothing on OPTIONS: the Bearer check must not then load a user (a 500)."""
    for path in ("/api/v1/pipeline/", "/api/v1/pipeline/1", "/api/v1/me/"):
        resp = user.request("OPTIONS", path)
        assert resp.status_code == 200, (path, resp.data[:200])
        assert "GET" in resp.headers["Allow"]


def test_jwt_login_without_provider_is_400_naming_it(app, user):
    """FAB's login read payload["provider"] though its schema made it optional: a 500."""
    resp = app.test_client().post("/api/v1/security/login", json={"username": user.username, "password": user.password})
    assert resp.status_code == 400, resp.get_json()
    assert "provider" in resp.get_json()["message"]
    Shapes(user.get("/api/v1/_openapi").get_json()).answer("post", "/api/v1/security/login", resp)


@pytest.mark.parametrize("path", ["/api/v1/security/login", "/api/v1/session/login"])
def test_a_login_name_with_a_nul_character_is_400_naming_it(app, user, path):
    """Found by the fuzz test on PostgreSQL: the lockout's account lookup sent "\x00" to the database (a 500)."""
    resp = app.test_client().post(path, json={"username": "a\x00b", "password": "not the password",
                                              "provider": "db"})
    assert resp.status_code == 400, resp.get_json()
    assert "NUL" in errors_of(resp)["username"]
    if path == "/api/v1/security/login":
        Shapes(user.get("/api/v1/_openapi").get_json()).answer("post", path, resp)


def test_answers_the_spec_did_not_document_now_match_it(user, project):
    """Statuses schemathesis received but the spec did not list: conflicts on writes, FAB's menu refused
    to plain users, the sign-in limits, the stream caps and bodies too large."""
    spec = user.get("/api/v1/_openapi").get_json()
    shapes, paths = Shapes(spec), spec["paths"]
    taken = user.post("/api/v1/project/", json={"name": project["name"]})
    assert taken.status_code == 409
    shapes.answer("post", "/api/v1/project/", taken)
    shapes.answer("get", "/api/v1/menu/", user.get("/api/v1/menu/"))
    assert "409" not in paths["/api/v1/project/"]["get"]["responses"]  # reads never conflict
    assert "429" in paths["/api/v1/security/login"]["post"]["responses"]
    assert "429" in paths["/api/v1/pipeline_run/{pk}/events"]["get"]["responses"]
    assert "429" not in paths["/api/v1/pipeline_run/{pk}"]["get"]["responses"]
    assert "413" in paths["/api/v1/pipeline/import"]["post"]["responses"]  # a body over MYAPP_MAX_BODY_BYTES
    assert "413" not in paths["/api/v1/pipeline/{pk}"]["get"]["responses"]
