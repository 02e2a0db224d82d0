"""Project membership and roles: viewer reads, developer edits and runs, owner manages members."""
from __future__ import annotations

from tests.support import REDIS_TEST_URL, unique
from tests.world import created


def test_creator_owns_project_and_manages_roles(make_user):
    owner, dev, viewer, outsider = make_user(), make_user(), make_user(), make_user()
    project = created(owner.post("/api/v1/project/", json={"name": unique("p")}))
    pid = project["id"]
    assert project["namespace"] == project["name"] and project["service_account"].startswith("myapp-")
    for who, role in ((dev, "developer"), (viewer, "viewer")):
        created(owner.post(f"/api/v1/project/{pid}/members", json={"username": who.username, "role": role}))
    me = dev.get("/api/v1/me/").get_json()
    assert me["projects"] == [{"id": pid, "name": project["name"], "role": "developer"}]
    assert me["is_admin"] is False and me["csrf_token"]

    # developer edits and runs, but does not manage the project or its members
    pipe = created(dev.post("/api/v1/pipeline/", json={"project_id": pid, "name": "p"}))
    created(dev.post("/api/v1/pipeline_run/", json={"pipeline_id": pipe["id"]}))
    assert dev.put(f"/api/v1/project/{pid}", json={"description": "x"}).status_code == 403
    assert dev.post(f"/api/v1/project/{pid}/members",
                    json={"username": outsider.username, "role": "owner"}).status_code == 403
    # viewer reads only
    assert viewer.get(f"/api/v1/pipeline/{pipe['id']}").status_code == 200
    assert viewer.put(f"/api/v1/pipeline/{pipe['id']}", json={"description": "x"}).status_code == 403
    assert viewer.post("/api/v1/pipeline/", json={"project_id": pid, "name": "q"}).status_code == 403
    # outsider: the project does not exist for them
    assert outsider.get(f"/api/v1/project/{pid}").status_code == 404
    assert outsider.get(f"/api/v1/project/{pid}/members").status_code == 404


def test_last_owner_cannot_leave(user):
    pid = created(user.post("/api/v1/project/", json={"name": unique("p")}))["id"]
    member = user.get(f"/api/v1/project/{pid}/members").get_json()["items"][0]
    # Both answer 409 naming the member's role (the UI shows it next to that member's role).
    resp = user.delete(f"/api/v1/project/{pid}/members/{member['id']}")
    assert resp.status_code == 409 and resp.get_json()["errors"][0]["field"] == "role", resp.get_json()
    resp = user.put(f"/api/v1/project/{pid}/members/{member['id']}", json={"role": "viewer"})
    assert resp.status_code == 409 and resp.get_json()["errors"][0]["field"] == "role", resp.get_json()
    assert "last owner" in resp.get_json()["errors"][0]["reason"]
    assert user.get(f"/api/v1/project/{pid}/members").get_json()["items"][0]["role"] == "owner"


def test_non_admin_cannot_manage_capacity_or_users(user):
    assert user.post("/api/v1/cluster/", json={"name": "c", "kind": "local"}).status_code == 403
    assert user.get("/api/v1/quota/").status_code == 403
    assert user.get("/api/v1/user/").status_code == 403
    assert user.post("/api/v1/user/", json={"username": "x", "generate_password": True}).status_code == 403
    assert user.get("/api/v1/security/users/").status_code == 404  # FAB's generic user API is off
    assert user.get("/api/v1/resource_group/").status_code == 200  # the catalog is readable
    assert user.post("/api/v1/job_template/", json={}).status_code == 403


def test_browser_session_needs_csrf_token(app, user):
    browser = app.test_client()
    page = browser.get("/login/")
    assert page.status_code == 200
    token = page.get_data(as_text=True).split('name="csrf_token" type="hidden" value="')[1].split('"')[0]
    resp = browser.post("/login/", data={"username": user.username, "password": user.password, "csrf_token": token})
    assert resp.status_code == 302
    me = browser.get("/api/v1/me/")
    assert me.status_code == 200 and me.get_json()["username"] == user.username
    # a write without the token is refused, with it accepted
    resp = browser.post("/api/v1/project/", json={"name": unique("p")})
    assert resp.status_code == 400 and "CSRF" in resp.get_json()["message"]
    assert user.get("/api/v1/project/").get_json()["count"] == 0
    resp = browser.post("/api/v1/project/", json={"name": unique("p")},
                        headers={"X-CSRFToken": me.get_json()["csrf_token"]})
    assert resp.status_code == 201, resp.get_json()


def test_openapi_spec_is_served(user):
    spec = user.get("/api/v1/_openapi").get_json()
    assert spec["openapi"].startswith("3.")
    assert "/api/v1/pipeline/{pk}" in spec["paths"]
    assert spec["paths"]["/api/v1/pipeline/"]["post"]["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Pipeline"}


def test_membership_changes_take_effect_at_once(make_user):
    """Memberships are cached; every change drops the entry after its commit."""
    owner, dev = make_user(), make_user()
    pid = created(owner.post("/api/v1/project/", json={"name": unique("p")}))["id"]
    assert dev.get(f"/api/v1/project/{pid}").status_code == 404  # now cached as "not a member"
    member = created(owner.post(f"/api/v1/project/{pid}/members", json={"username": dev.username, "role": "viewer"}))
    assert dev.get(f"/api/v1/project/{pid}").status_code == 200
    assert dev.post("/api/v1/pipeline/", json={"project_id": pid, "name": "p"}).status_code == 403
    owner.put(f"/api/v1/project/{pid}/members/{member['id']}", json={"role": "developer"})
    assert dev.post("/api/v1/pipeline/", json={"project_id": pid, "name": "p"}).status_code == 201
    assert owner.delete(f"/api/v1/project/{pid}/members/{member['id']}").status_code == 200
    assert dev.get(f"/api/v1/project/{pid}").status_code == 404


def test_cache_is_redis_when_configured(tmp_path):
    import flask
    from flask_caching import Cache

    from myapp.config import cache_settings

    assert cache_settings(tmp_path, None)["CACHE_TYPE"] == "FileSystemCache"
    settings = cache_settings(tmp_path, REDIS_TEST_URL)
    assert settings["CACHE_TYPE"] == "RedisCache"
    # Two processes' caches on the same Redis see each other's writes and deletes.
    caches = []
    for _ in range(2):
        plain = flask.Flask("cache-check")
        plain.config.update(settings)
        caches.append(Cache(plain))
    key = unique("k")
    caches[0].set(key, {"1": "owner"})
    assert caches[1].get(key) == {"1": "owner"}
    caches[1].delete(key)
    assert caches[0].get(key) is None
