"""Web hardening: Secure cookies, login rate limits per address, the password policy, sessions that end
at logout (by POST with the CSRF token only), Bearer tokens that stand alone (no CSRF bypass), caps on
open event streams. The sign-in limits per account are tests/auth/test_login_limits.py's."""
from __future__ import annotations

import uuid

import pytest

from tests.support import ApiClient, login_token, unique


def session_login(app, username: str, password: str, ip: str = "127.0.0.1"):
    """(browser client, its login answer): the UI's cookie-session login."""
    browser = app.test_client()
    browser.environ_base["REMOTE_ADDR"] = ip
    token = browser.get("/api/v1/session/").get_json()["csrf_token"]
    resp = browser.post("/api/v1/session/login", json={"username": username, "password": password},
                        headers={"X-CSRFToken": token})
    return browser, resp


def jwt_login(app, username: str, password: str, ip: str = "127.0.0.1"):
    return app.test_client().post("/api/v1/security/login", environ_base={"REMOTE_ADDR": ip},
                                  json={"username": username, "password": password, "provider": "db"})


def csrf_of(browser) -> str:
    return browser.get("/api/v1/me/").get_json()["csrf_token"]


# ---- cookies ------------------------------------------------------------------------------------------
def test_secure_cookies_follow_the_base_url_unless_told(monkeypatch, tmp_path):
    from myapp.config import build_config

    monkeypatch.setenv("MYAPP_BASE_URL", "https://ml.example.org")
    monkeypatch.delenv("MYAPP_SECURE_COOKIES", raising=False)
    config = build_config({"INSTANCE_PATH": str(tmp_path)})
    assert config["SESSION_COOKIE_SECURE"] and config["REMEMBER_COOKIE_SECURE"]
    assert config["SESSION_COOKIE_HTTPONLY"] and config["SESSION_COOKIE_SAMESITE"] == "Lax"
    monkeypatch.setenv("MYAPP_SECURE_COOKIES", "false")
    assert not build_config({"INSTANCE_PATH": str(tmp_path)})["SESSION_COOKIE_SECURE"]
    monkeypatch.setenv("MYAPP_BASE_URL", "http://127.0.0.1:8080")
    monkeypatch.setenv("MYAPP_SECURE_COOKIES", "on")
    assert build_config({"INSTANCE_PATH": str(tmp_path)})["SESSION_COOKIE_SECURE"]
    monkeypatch.setenv("MYAPP_SECURE_COOKIES", "maybe")
    with pytest.raises(ValueError, match="MYAPP_SECURE_COOKIES"):
        build_config({"INSTANCE_PATH": str(tmp_path)})


def test_the_session_cookie_is_secure_httponly_and_lax(app, user, monkeypatch):
    monkeypatch.setitem(app.config, "SESSION_COOKIE_SECURE", True)
    _, resp = session_login(app, user.username, user.password)
    assert resp.status_code == 200, resp.get_json()
    cookie = resp.headers["Set-Cookie"]
    assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=Lax" in cookie, cookie


# ---- sessions end at logout ---------------------------------------------------------------------------
def test_a_cookie_copied_before_logout_is_refused_after_it(app, user):
    browser, resp = session_login(app, user.username, user.password)
    assert resp.status_code == 200
    cookie = browser.get_cookie("session").value
    assert browser.get("/api/v1/me/").status_code == 200
    out = browser.post("/api/v1/session/logout", headers={"X-CSRFToken": csrf_of(browser)})
    assert out.status_code == 200 and out.get_json()["authenticated"] is False

    replay = app.test_client()
    replay.set_cookie("session", cookie)
    assert replay.get("/api/v1/me/").status_code == 401
    assert replay.get("/api/v1/session/").get_json()["authenticated"] is False


def test_fab_form_logout_ends_the_session_too(app, user):
    browser = app.test_client()
    page = browser.get("/login/").get_data(as_text=True)
    token = page.split('name="csrf_token" type="hidden" value="')[1].split('"')[0]
    assert browser.post("/login/", data={"username": user.username, "password": user.password,
                                         "csrf_token": token}).status_code == 302
    cookie = browser.get_cookie("session").value
    assert browser.get("/api/v1/me/").status_code == 200
    assert browser.post("/logout/", headers={"X-CSRFToken": csrf_of(browser)}).status_code == 302
    replay = app.test_client()
    replay.set_cookie("session", cookie)
    assert replay.get("/api/v1/me/").status_code == 401


@pytest.mark.parametrize("path", ["/logout/", "/api/v1/session/logout"])
def test_logout_takes_a_post_with_the_csrf_token(app, user, path):
    """A link or an image on another site (a GET) or a form posted from it (no CSRF token) signs no one out."""
    browser, _ = session_login(app, user.username, user.password)
    assert browser.get(path).status_code == 405
    refused = browser.post(path)
    assert refused.status_code == 400 and "CSRF" in refused.get_data(as_text=True)
    assert browser.get("/api/v1/me/").status_code == 200  # still signed in
    assert browser.post(path, headers={"X-CSRFToken": csrf_of(browser)}).status_code in (200, 302)
    assert browser.get("/api/v1/me/").status_code == 401


def test_a_password_reset_ends_every_session_and_token(app, admin, user):
    browser, _ = session_login(app, user.username, user.password)
    assert browser.get("/api/v1/me/").status_code == 200 and user.get("/api/v1/me/").status_code == 200
    new = f"fresh passphrase {uuid.uuid4().hex[:6]}"
    assert admin.post(f"/api/v1/user/{user.user_id}/password", json={"password": new}).status_code == 200
    assert browser.get("/api/v1/me/").status_code == 401
    refused = user.get("/api/v1/me/")
    assert refused.status_code == 401 and "password was changed" in refused.get_json()["message"]
    again = ApiClient(app.test_client(), login_token(app.test_client(), user.username, new))
    assert again.get("/api/v1/me/").status_code == 200  # a token issued after the change works


def test_an_admin_changing_their_own_password_keeps_their_browser_session(app, admin):
    browser, _ = session_login(app, admin.username, admin.password)
    resp = browser.post(f"/api/v1/user/{admin.user_id}/password", json={"password": "my brand new passphrase"},
                        headers={"X-CSRFToken": csrf_of(browser)})
    assert resp.status_code == 200, resp.get_json()
    assert browser.get("/api/v1/me/").status_code == 200
    assert admin.get("/api/v1/me/").status_code == 401  # the JWT of the old password is not


# ---- Bearer tokens stand alone ------------------------------------------------------------------------
def test_a_dummy_bearer_header_cannot_skip_csrf_on_a_cookie_session(app, user):
    browser, _ = session_login(app, user.username, user.password)
    attack = browser.post("/api/v1/project/", json={"name": unique("p")}, headers={"Authorization": "Bearer x"})
    assert attack.status_code == 401, attack.get_json()
    assert browser.get("/api/v1/me/", headers={"Authorization": "Bearer x"}).status_code == 401
    assert user.get("/api/v1/project/").get_json()["count"] == 0
    no_csrf = browser.post("/api/v1/project/", json={"name": unique("p")})
    assert no_csrf.status_code == 400 and "CSRF" in no_csrf.get_json()["message"]


def test_a_valid_bearer_token_wins_over_the_cookie(app, user, make_user):
    other = make_user()
    browser, _ = session_login(app, user.username, user.password)
    me = browser.get("/api/v1/me/", headers={"Authorization": f"Bearer {other.token}"}).get_json()
    assert me["username"] == other.username
    made = browser.post("/api/v1/project/", json={"name": unique("p")},
                        headers={"Authorization": f"Bearer {other.token}"})
    assert made.status_code == 201, made.get_json()  # a script's write: no CSRF token needed
    assert other.get("/api/v1/project/").get_json()["count"] == 1
    assert user.get("/api/v1/project/").get_json()["count"] == 0


# ---- password policy ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("password", "reason"), [
    ("short-pass", "at least 12"),
    ("Password2024!", "too common"),
    ("qwerty123456", "too common"),
    ("aaaaaaaaaaaaaaaa", "too common"),
])
def test_the_users_api_refuses_weak_passwords(admin, password, reason):
    body = {"username": unique("u"), "first_name": "A", "email": f"{unique('e')}@example.org", "password": password}
    resp = admin.post("/api/v1/user/", json=body)
    assert resp.status_code == 400, resp.get_json()
    assert resp.get_json()["errors"][0]["field"] == "password" and reason in resp.get_json()["errors"][0]["reason"]
    target = admin.post("/api/v1/user/", json=body | {"password": "a sound passphrase"}).get_json()
    reset = admin.post(f"/api/v1/user/{target['id']}/password", json={"password": password})
    assert reset.status_code == 400 and reset.get_json()["errors"][0]["field"] == "password"


@pytest.mark.parametrize(("password", "reason"), [
    ("{username}", "username"),
    ("{email}", "e-mail address"),
    ("{email}!", "e-mail address"),
    ("{username}{username}123", "username"),
    ("{local}2024", "e-mail address"),
    ("Grace Hopperx", "name"),
    ("davedave1234", "repeats a short pattern"),
    ("abcabcabcabc", "repeats a short pattern"),
    ("monkeymonkey!!", "repeats a short pattern"),
])
def test_who_the_user_is_and_repeated_patterns_are_no_password(admin, password, reason):
    name = unique("longusername")
    email, local = f"{unique('mail')}@example.org", unique("mailbox")
    body = {"username": name, "first_name": "Grace", "last_name": "Hopper", "email": email}
    chosen = password.format(username=name.upper(), email=email, local=local)
    if "{local}" in password:
        body["email"] = f"{local}@example.org"
    resp = admin.post("/api/v1/user/", json=body | {"password": chosen})
    assert resp.status_code == 400 and reason in resp.get_json()["errors"][0]["reason"], resp.get_json()
    target = admin.post("/api/v1/user/", json=body | {"password": "a sound passphrase"}).get_json()
    reset = admin.post(f"/api/v1/user/{target['id']}/password", json={"password": chosen})
    assert reset.status_code == 400 and reason in reset.get_json()["errors"][0]["reason"], reset.get_json()


@pytest.mark.parametrize("password", ["my long passphrase my long passphrase", "davedave and more words"])
def test_a_long_repeat_or_a_repeat_among_words_is_fine(password):
    from myapp.auth.passwords import check_password

    check_password(password, "dave", email="dave@example.org", names=("Dave", "-"))


def test_create_user_and_init_apply_the_policy(app, monkeypatch):
    from myapp.errors import FieldError
    from myapp.setup_data import create_user, ensure_admin

    with app.app_context():
        with pytest.raises(FieldError, match="too common"):
            create_user(unique("cli"), "password1234")
        with pytest.raises(FieldError, match="e-mail address"):
            create_user(unique("cli"), "grace.hopper@example.org", email="grace.hopper@example.org")
        monkeypatch.setenv("MYAPP_ADMIN_USER", unique("root"))
        monkeypatch.setenv("MYAPP_ADMIN_PASSWORD", "changeme")
        with pytest.raises(FieldError, match="at least 12"):
            ensure_admin()


# ---- rate limit per address ---------------------------------------------------------------------------
def test_too_many_attempts_from_one_address_are_429_on_every_login_path(app, user, monkeypatch):
    monkeypatch.setitem(app.config, "MYAPP_LOGIN_RATE_PER_IP", "3 per minute")
    ip = f"10.9.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}"
    for _ in range(3):
        assert jwt_login(app, user.username, user.password, ip).status_code == 200
    for resp in (jwt_login(app, user.username, user.password, ip),
                 session_login(app, user.username, user.password, ip)[1],
                 app.test_client().post("/login/", environ_base={"REMOTE_ADDR": ip},
                                        data={"username": user.username, "password": user.password})):
        assert resp.status_code == 429, resp.get_data(as_text=True)
        assert int(resp.headers["Retry-After"]) >= 1 and "from this address" in resp.get_json()["message"]
    assert jwt_login(app, user.username, user.password).status_code == 200  # other addresses are not limited


# ---- event streams ------------------------------------------------------------------------------------
@pytest.fixture()
def run_url(user, catalog) -> str:
    """The events URL of a queued run of user's (nothing runs it: its stream stays open)."""
    project = user.post("/api/v1/project/", json={"name": unique("p")}).get_json()
    pipeline = user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "g"}).get_json()
    user.put(f"/api/v1/pipeline/{pipeline['id']}/graph",
             json={"tasks": [{"key": "a", "name": "only", "template_id": catalog}]})
    run = user.post("/api/v1/pipeline_run/", json={"pipeline_id": pipeline["id"]})
    assert run.status_code == 201, run.get_json()
    return f"/api/v1/pipeline_run/{run.get_json()['id']}/events"


# Streams here share the test's thread, each holding its request context while open: they are closed
# in the reverse order of opening (a server gives each its own thread).
def test_open_streams_are_capped_per_user(app, user, run_url, monkeypatch):
    monkeypatch.setitem(app.config, "MYAPP_STREAMS_PER_USER", 2)
    first, second = user.get(run_url, buffered=False), user.get(run_url, buffered=False)
    assert first.status_code == second.status_code == 200
    refused = user.get(run_url, buffered=False)
    assert refused.status_code == 429 and "at most 2 per user" in refused.get_json()["message"]
    assert int(refused.headers["Retry-After"]) > 0
    second.close()  # a stream the client closed frees its slot
    third = user.get(run_url, buffered=False)
    assert third.status_code == 200
    third.close()
    first.close()


def test_open_streams_are_capped_per_process(app, user, run_url, monkeypatch):
    monkeypatch.setitem(app.config, "MYAPP_STREAMS_PER_PROCESS", 1)
    held = user.get(run_url, buffered=False)
    refused = user.get(run_url, buffered=False)
    assert refused.status_code == 429 and "its limit" in refused.get_json()["message"]
    held.close()
    assert user.get("/api/v1/me/").status_code == 200


def test_the_process_cap_leaves_threads_for_other_requests():
    from myapp.api.streams import process_cap

    assert process_cap({"MYAPP_WEB_THREADS": 128}) == 112
    assert process_cap({"MYAPP_WEB_THREADS": 16}) == 8
    assert process_cap({"MYAPP_WEB_THREADS": 128, "MYAPP_STREAMS_PER_PROCESS": 5}) == 5



FAB_PAGES = ("/users/list/", "/users/add", "/roles/list/", "/groups/list/", "/permissions/list/", "/viewmenus/list/",
             "/permissionviews/list/", "/resetmypassword/form", "/resetpassword/form", "/userinfoeditview/form",
             "/users/userinfo/", "/userstatschartview/chart/")


def test_users_and_passwords_have_one_way_in_the_api(app, make_user):
    """FAB's own pages for users, roles and passwords are not served: through them an admin set the password
    "a" past the password policy, and their navbar's logout link was a GET (405)."""
    admin = make_user(admin=True)
    browser, resp = session_login(app, admin.username, admin.password)
    assert resp.status_code == 200
    for path in FAB_PAGES:
        assert browser.get(path).status_code == 404, path
        assert browser.post(path, data={"password": "a", "conf_password": "a"},
                            headers={"X-CSRFToken": csrf_of(browser)}).status_code == 404, path
    assert login_token(app.test_client(), admin.username, admin.password)  # the password is as it was
    assert browser.get("/login/").status_code == 302  # the form login stays (signed in: on to the UI)
