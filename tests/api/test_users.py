"""Users, managed by admins through /api/v1/user/: create (a given password of at least 12 characters, or
a generated one answered once), deactivate and reactivate (a deactivated user cannot sign in, and the
session and JWTs they hold stop working), reset a password, the admin flag; an admin keeps their own
admin flag and stays active. Non-admins are refused (403) and change nothing."""
from __future__ import annotations

import logging
import uuid

import pytest
import sqlalchemy as sa

from tests.api.support import Shapes
from tests.support import ApiClient, login_token, unique

pytestmark = pytest.mark.backends


@pytest.fixture(scope="module")
def shapes(app) -> Shapes:
    from myapp.api.openapi_dump import build_spec

    return Shapes(build_spec(app))


def new_body(**extra) -> dict:
    name = unique("u")
    return {"username": name, "first_name": "Grace", "last_name": "Hopper", "email": f"{name}@example.org", **extra}


def user_row(app, user_id: int) -> dict:
    """Everything stored about a user, their roles included."""
    from myapp.extensions import db
    from myapp.models import User

    with app.app_context():
        user = db.session.get(User, user_id)
        row = {c.key: getattr(user, c.key) for c in sa.inspect(User).column_attrs}
        row["roles"] = sorted(r.name for r in user.roles)
        db.session.rollback()
        return row


def user_count(app) -> int:
    from myapp.extensions import db
    from myapp.models import User

    with app.app_context():
        return db.session.scalar(sa.select(sa.func.count()).select_from(User))


def jwt_login(app, username: str, password: str):
    return app.test_client().post("/api/v1/security/login",
                                  json={"username": username, "password": password, "provider": "db"})


def browser_login(app, username: str, password: str):
    """A browser session: (client, status of the session login)."""
    browser = app.test_client()
    token = browser.get("/api/v1/session/").get_json()["csrf_token"]
    resp = browser.post("/api/v1/session/login", json={"username": username, "password": password},
                        headers={"X-CSRFToken": token})
    return browser, resp.status_code


def signed_in(app, username: str, password: str) -> ApiClient:
    client = app.test_client()
    return ApiClient(client, login_token(client, username, password))


def field_errors(resp) -> dict[str, str]:
    return {e["field"]: e["reason"] for e in resp.get_json().get("errors", [])}


# ---- create -----------------------------------------------------------------------------------------------

def test_admin_creates_a_user_who_signs_in(app, admin, shapes, caplog):
    password = "correct horse battery"
    with caplog.at_level(logging.DEBUG):
        resp = admin.post("/api/v1/user/", json=new_body(password=password))
    assert resp.status_code == 201, resp.get_json()
    shapes.answer("post", "/api/v1/user/", resp)
    made = resp.get_json()
    assert made["active"] is True and made["is_admin"] is False and "generated_password" not in made
    assert password not in resp.get_data(as_text=True), "the given password was echoed back"
    assert not [r for r in caplog.records if password in r.getMessage()], "the password was logged"
    assert user_row(app, made["id"])["roles"] == ["User"]

    shapes.answer("get", "/api/v1/user/{pk}", admin.get(f"/api/v1/user/{made['id']}"))
    listed = admin.get("/api/v1/user/", query_string={"username": made["username"]})
    shapes.answer("get", "/api/v1/user/", listed)
    assert [u["id"] for u in listed.get_json()["items"]] == [made["id"]]
    assert "password" not in listed.get_data(as_text=True), "the list shows password hashes"

    assert jwt_login(app, made["username"], password).status_code == 200
    browser, status = browser_login(app, made["username"], password)
    assert status == 200 and browser.get("/api/v1/me/").get_json()["username"] == made["username"]


def test_a_generated_password_is_answered_once(app, admin, shapes):
    resp = admin.post("/api/v1/user/", json=new_body(generate_password=True, is_admin=True))
    assert resp.status_code == 201, resp.get_json()
    shapes.answer("post", "/api/v1/user/", resp)
    made = resp.get_json()
    generated = made["generated_password"]
    assert len(generated) >= 12 and made["is_admin"] is True
    assert user_row(app, made["id"])["roles"] == ["Admin", "User"]  # the flag adds Admin; everyone keeps User
    again = admin.get(f"/api/v1/user/{made['id']}")
    assert "generated_password" not in again.get_json() and generated not in again.get_data(as_text=True)
    token = signed_in(app, made["username"], generated)
    assert token.get("/api/v1/me/").get_json()["is_admin"] is True


@pytest.mark.parametrize("body, field, reason", [
    ({"password": "short-11chr"}, "password", "at least 12 characters"),
    ({}, "password", "is required"),
    ({"password": "long enough password", "generate_password": True}, "generate_password", "not both"),
    ({"password": "x" * 257}, "password", "at most 256 characters"),
    ({"password": "long enough password", "username": "no spaces"}, "username", "letters, digits"),
    ({"password": "long enough password", "email": "not-an-email"}, "email", "email"),
    ({"password": "long enough password", "role": "Admin"}, "role", "Unknown field"),
])
def test_bad_new_users_are_refused_naming_the_field(app, admin, body, field, reason):
    before = user_count(app)
    sent = {**new_body(), **body}
    resp = admin.post("/api/v1/user/", json=sent)
    assert resp.status_code == 400, resp.get_json()
    assert reason in field_errors(resp).get(field, ""), resp.get_json()
    if "password" in body:
        assert body["password"] not in resp.get_data(as_text=True)
    assert user_count(app) == before


def test_usernames_and_emails_are_unique_case_insensitively(app, admin):
    first = admin.post("/api/v1/user/", json=new_body(password="long enough password")).get_json()
    before = user_count(app)
    clash = admin.post("/api/v1/user/", json=new_body(password="long enough password",
                                                     username=first["username"].upper()))
    assert clash.status_code == 409 and "username" in field_errors(clash), clash.get_json()
    clash = admin.post("/api/v1/user/", json=new_body(password="long enough password",
                                                     email=first["email"].upper()))
    assert clash.status_code == 409 and "email" in field_errors(clash), clash.get_json()
    other = admin.post("/api/v1/user/", json=new_body(password="long enough password")).get_json()
    clash = admin.put(f"/api/v1/user/{other['id']}", json={"email": first["email"]})
    assert clash.status_code == 409 and "email" in field_errors(clash), clash.get_json()
    assert user_count(app) == before + 1


# ---- deactivate, reactivate -------------------------------------------------------------------------------

def test_a_deactivated_user_is_locked_out_at_once(app, admin, make_user, shapes):
    someone = make_user()
    browser, status = browser_login(app, someone.username, someone.password)
    assert status == 200 and someone.get("/api/v1/me/").status_code == 200

    resp = admin.put(f"/api/v1/user/{someone.user_id}", json={"active": False})
    assert resp.status_code == 200 and resp.get_json()["active"] is False, resp.get_json()
    shapes.answer("put", "/api/v1/user/{pk}", resp)

    # The JWT they hold (FAB's user loader refuses inactive users) and their browser session stop working.
    refused = someone.get("/api/v1/me/")
    assert refused.status_code == 401, refused.get_json()
    assert "deactivated" in refused.get_json()["message"], refused.get_json()
    shapes.answer("get", "/api/v1/me/", refused)
    assert someone.post("/api/v1/project/", json={"name": unique("p")}).status_code == 401
    assert browser.get("/api/v1/me/").status_code == 401
    # Nor can they sign in again, either way.
    assert jwt_login(app, someone.username, someone.password).status_code == 401
    assert browser_login(app, someone.username, someone.password)[1] == 401
    assert admin.get(f"/api/v1/user/{someone.user_id}").get_json()["active"] is False

    resp = admin.put(f"/api/v1/user/{someone.user_id}", json={"active": True})
    assert resp.status_code == 200 and resp.get_json()["active"] is True
    assert jwt_login(app, someone.username, someone.password).status_code == 200
    assert someone.get("/api/v1/me/").status_code == 200


def test_inactive_filter(app, admin, make_user):
    someone = make_user()
    admin.put(f"/api/v1/user/{someone.user_id}", json={"active": False})
    inactive = admin.get("/api/v1/user/", query_string={"active": "false", "page_size": 100}).get_json()
    assert someone.user_id in [u["id"] for u in inactive["items"]]
    assert all(u["active"] is False for u in inactive["items"])


# ---- passwords --------------------------------------------------------------------------------------------

def test_admin_resets_a_password(app, admin, make_user, shapes, caplog):
    someone = make_user()
    # A letter last: digits at either end are dropped before the common-password check ("new password 123456").
    new = f"new passphrase {uuid.uuid4().hex[:6]}z"
    with caplog.at_level(logging.DEBUG):
        resp = admin.post(f"/api/v1/user/{someone.user_id}/password", json={"password": new})
    assert resp.status_code == 200, resp.get_json()
    shapes.answer("post", "/api/v1/user/{pk}/password", resp)
    assert new not in resp.get_data(as_text=True) and "generated_password" not in resp.get_json()
    assert not [r for r in caplog.records if new in r.getMessage()], "the password was logged"
    assert jwt_login(app, someone.username, someone.password).status_code == 401
    assert jwt_login(app, someone.username, new).status_code == 200

    resp = admin.post(f"/api/v1/user/{someone.user_id}/password", json={"generate_password": True})
    assert resp.status_code == 200, resp.get_json()
    shapes.answer("post", "/api/v1/user/{pk}/password", resp)
    generated = resp.get_json()["generated_password"]
    assert len(generated) >= 12
    assert jwt_login(app, someone.username, new).status_code == 401
    assert jwt_login(app, someone.username, generated).status_code == 200

    before = user_row(app, someone.user_id)
    for body, field in (({"password": "too short"}, "password"), ({}, "password"),
                        ({"password": "long enough password", "generate_password": True}, "generate_password")):
        resp = admin.post(f"/api/v1/user/{someone.user_id}/password", json=body)
        assert resp.status_code == 400 and field in field_errors(resp), resp.get_json()
    assert user_row(app, someone.user_id) == before
    assert admin.post("/api/v1/user/999999999/password", json={"generate_password": True}).status_code == 404


# ---- the admin flag, and what an admin cannot do to themselves ----------------------------------------------

def test_admin_flag_grants_and_revokes_the_admin_apis(app, admin, make_user):
    someone = make_user()
    assert someone.get("/api/v1/cluster/").status_code == 403
    resp = admin.put(f"/api/v1/user/{someone.user_id}", json={"is_admin": True})
    assert resp.status_code == 200 and resp.get_json()["is_admin"] is True, resp.get_json()
    assert someone.get("/api/v1/cluster/").status_code == 200
    assert someone.get("/api/v1/me/").get_json()["is_admin"] is True
    resp = admin.put(f"/api/v1/user/{someone.user_id}", json={"is_admin": False})
    assert resp.status_code == 200 and resp.get_json()["is_admin"] is False
    assert user_row(app, someone.user_id)["roles"] == ["User"]
    assert someone.get("/api/v1/cluster/").status_code == 403
    assert someone.get("/api/v1/me/").get_json()["is_admin"] is False


def test_admin_edits_names(app, admin, make_user):
    someone = make_user()
    resp = admin.put(f"/api/v1/user/{someone.user_id}",
                     json={"first_name": "Ada", "last_name": "Lovelace", "email": f"{someone.username}@example.org"})
    assert resp.status_code == 200, resp.get_json()
    assert (resp.get_json()["first_name"], resp.get_json()["last_name"]) == ("Ada", "Lovelace")
    assert admin.put(f"/api/v1/user/{someone.user_id}", json={"username": "renamed"}).status_code == 400
    assert admin.put(f"/api/v1/user/{someone.user_id}", json={"first_name": ""}).status_code == 400
    assert admin.delete(f"/api/v1/user/{someone.user_id}").status_code in (404, 405)
    assert user_row(app, someone.user_id)["username"] == someone.username


@pytest.mark.parametrize("body, field", [({"active": False}, "active"), ({"is_admin": False}, "is_admin"),
                                         ({"first_name": "Me", "active": False}, "active")])
def test_an_admin_cannot_lock_themselves_out(app, admin, body, field):
    before = user_row(app, admin.user_id)
    resp = admin.put(f"/api/v1/user/{admin.user_id}", json=body)
    assert resp.status_code == 409, resp.get_json()
    assert field in field_errors(resp) and "you cannot" in field_errors(resp)[field], resp.get_json()
    assert user_row(app, admin.user_id) == before
    assert admin.get("/api/v1/cluster/").status_code == 200


def test_an_admin_may_change_their_own_name_and_password(app, admin):
    resp = admin.put(f"/api/v1/user/{admin.user_id}", json={"first_name": "Root", "active": True, "is_admin": True})
    assert resp.status_code == 200, resp.get_json()
    resp = admin.post(f"/api/v1/user/{admin.user_id}/password", json={"password": "a new long password"})
    assert resp.status_code == 200, resp.get_json()
    assert jwt_login(app, admin.username, "a new long password").status_code == 200


# ---- everyone else -------------------------------------------------------------------------------------------

def test_non_admins_are_refused_and_change_nothing(app, admin, make_user):
    target, caller = make_user(), make_user()
    # An owner of a project is no admin either.
    caller.post("/api/v1/project/", json={"name": unique("p")})
    anonymous = ApiClient(app.test_client(), None)
    before_target, before_caller = user_row(app, target.user_id), user_row(app, caller.user_id)
    before_count = user_count(app)
    attempts = [
        ("GET", "/api/v1/user/", None),
        ("GET", f"/api/v1/user/{target.user_id}", None),
        ("POST", "/api/v1/user/", new_body(password="long enough password")),
        ("POST", "/api/v1/user/", new_body(generate_password=True, is_admin=True)),
        ("PUT", f"/api/v1/user/{target.user_id}", {"active": False}),
        ("PUT", f"/api/v1/user/{caller.user_id}", {"is_admin": True}),
        ("POST", f"/api/v1/user/{target.user_id}/password", {"password": "long enough password"}),
        ("POST", f"/api/v1/user/{caller.user_id}/password", {"generate_password": True}),
    ]
    for method, path, body in attempts:
        resp = caller.request(method, path, json=body)
        assert resp.status_code == 403, (method, path, resp.get_json())
        assert "generated_password" not in resp.get_data(as_text=True)
        assert anonymous.request(method, path, json=body).status_code == 401, (method, path)
    assert user_row(app, target.user_id) == before_target
    assert user_row(app, caller.user_id) == before_caller
    assert user_count(app) == before_count
    assert caller.get("/api/v1/cluster/").status_code == 403
    assert jwt_login(app, target.username, target.password).status_code == 200


def test_the_browser_session_of_an_admin_needs_csrf(app, admin, make_user):
    someone = make_user()
    browser = app.test_client()
    token = browser.get("/api/v1/session/").get_json()["csrf_token"]
    assert browser.post("/api/v1/session/login", json={"username": admin.username, "password": admin.password},
                        headers={"X-CSRFToken": token}).status_code == 200
    path = f"/api/v1/user/{someone.user_id}"
    assert browser.put(path, json={"active": False}).status_code == 400
    assert user_row(app, someone.user_id)["active"] is True
    assert browser.put(path, json={"active": False}, headers={"X-CSRFToken": token}).status_code == 200
    assert user_row(app, someone.user_id)["active"] is False
