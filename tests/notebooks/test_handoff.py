"""The way into a notebook's own origin (myapp/notebooks/gate.py, myapp/web/notebook_gate.py): the platform's
one-time code after the member check, redeemed once, within its minute, at its own origin only, for a
session of that origin that ends with the platform session and with the membership; the platform's own
cookies never leave the platform's host."""
from __future__ import annotations

import datetime as dt
import threading
import urllib.parse

import pytest
import requests

from tests.notebooks.origin_client import NAVIGATE, code_from, platform_session, signed_in_client
from tests.support import unique, wsgi_server
from tests.world import add_member, created

KEY_HEADER = "X-Myapp-Notebook-Proxy"
SESSION_HEADER = "X-Myapp-Notebook-Session"


def run_notebook(app, owner, image: str, name: str = "lab", upstream: str = "http://127.0.0.1:9") -> dict:
    """A project of `owner` with a notebook the platform believes running at `upstream`."""
    from myapp.extensions import db
    from myapp.models import Notebook, NotebookState

    project = created(owner.post("/api/v1/project/", json={"name": unique("nbo")}))
    nb = created(owner.post("/api/v1/notebook/", json={"project_id": project["id"], "name": name, "image": image}))
    with app.app_context():
        row = db.session.get(Notebook, nb["id"])
        row.state, row.reason, row.upstream = NotebookState.RUNNING, None, upstream
        row.job = {"ref": None, "token": f"token-of-{project['name']}"}
        row.url = f"/notebook/{project['name']}/{name}/lab"
        db.session.commit()
    return {"project": project, "notebook": nb, "host": f"{name}.{project['name']}.localhost"}


@pytest.fixture()
def world(app, admin, make_user, catalog):
    image = created(admin.post("/api/v1/image/", json={"repository": "registry.local/nb/lab", "tag": unique("v")}))
    image_name = f"{image['repository']}:{image['tag']}"
    owner, viewer, stranger = make_user(), make_user(), make_user()
    a = run_notebook(app, owner, image_name)
    add_member(owner, a["project"]["id"], viewer.username, "viewer")
    return {"owner": owner, "viewer": viewer, "stranger": stranger, "admin": admin, "a": a,
            "b": run_notebook(app, owner, image_name, name="other")}


def open_notebook(client, host: str, next_path: str = "", headers: dict | None = None):
    query = urllib.parse.urlencode({"host": host, "next": next_path})
    return client.get(f"/notebook-open?{query}", headers=NAVIGATE if headers is None else headers)


def proxy_key(app) -> str:
    from myapp.api.notebooks import proxy_key as key

    with app.app_context():
        return key()


def redeem(app, code: str, host: str):
    return app.test_client().post("/api/v1/notebook/handoff", json={"code": code, "host": host},
                                  headers={KEY_HEADER: proxy_key(app)})


def authz(app, host: str, session: str | None, path: str = "/"):
    headers = {KEY_HEADER: proxy_key(app)} | ({SESSION_HEADER: session} if session else {})
    return app.test_client().get("/api/v1/notebook/authz?" + urllib.parse.urlencode({"host": host, "path": path}),
                                 headers=headers)


def test_a_member_gets_a_code_bound_to_the_notebooks_origin_and_redeems_it_once(app, world):
    a = world["a"]
    owner = signed_in_client(app, world["owner"])
    answer = open_notebook(owner, a["host"], f"/notebook/{a['project']['name']}/lab/tree/x")
    assert answer.status_code == 302 and answer.headers["Cache-Control"] == "no-store"
    location = urllib.parse.urlsplit(answer.headers["Location"])
    assert (location.scheme, location.hostname, location.path) == ("http", a["host"], "/_myapp/handoff")
    code = code_from(answer.headers["Location"])
    redeemed = redeem(app, code, f"{a['host']}:8081")
    assert redeemed.status_code == 200, redeemed.get_json()
    body = redeemed.get_json()
    assert body["next"] == f"/notebook/{a['project']['name']}/lab/tree/x"
    assert body["cookie"]["name"] == "myapp-notebook" and body["cookie"]["secure"] is False
    assert 0 < body["cookie"]["max_age"] <= 24 * 3600
    again = redeem(app, code, a["host"])  # single use, whoever asks
    assert again.status_code == 409 and "used already" in again.get_json()["message"]
    allowed = authz(app, a["host"], body["cookie"]["value"], f"/notebook/{a['project']['name']}/lab/api/status")
    assert allowed.status_code == 200 and allowed.get_json()["token"] == f"token-of-{a['project']['name']}"
    # The session is this origin's alone: at the other notebook's host it is no session at all.
    assert authz(app, world["b"]["host"], body["cookie"]["value"]).status_code == 401
    # ... and another notebook's path on this origin is not this notebook.
    other = f"/notebook/{world['b']['project']['name']}/other/api/contents"
    assert authz(app, a["host"], body["cookie"]["value"], other).status_code == 404


def test_a_code_is_refused_at_another_origin_after_its_minute_and_when_unknown(app, world, monkeypatch):
    from myapp.notebooks import gate

    owner = signed_in_client(app, world["owner"])
    code = code_from(open_notebook(owner, world["a"]["host"]).headers["Location"])
    assert redeem(app, code, world["b"]["host"]).status_code == 409  # another notebook's origin
    assert redeem(app, code, world["a"]["host"]).status_code == 200  # not burnt by the wrong one
    late = code_from(open_notebook(owner, world["a"]["host"]).headers["Location"])
    later = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=gate.HANDOFF_SECONDS + 1)
    monkeypatch.setattr(gate, "utcnow", lambda: later)
    assert redeem(app, late, world["a"]["host"]).status_code == 409
    monkeypatch.undo()
    assert redeem(app, "never-issued", world["a"]["host"]).status_code == 409
    # Only the proxy may redeem: without its key, nothing happens (and the code stays usable).
    fresh = code_from(open_notebook(owner, world["a"]["host"]).headers["Location"])
    stolen = app.test_client().post("/api/v1/notebook/handoff", json={"code": fresh, "host": world["a"]["host"]})
    assert stolen.status_code == 403
    assert redeem(app, fresh, world["a"]["host"]).status_code == 200


def test_two_web_processes_never_both_redeem_a_code(app, world):
    """The redeem is one UPDATE on the shared database: of concurrent redeems over HTTP, exactly one wins."""
    code = code_from(open_notebook(signed_in_client(app, world["owner"]), world["a"]["host"]).headers["Location"])
    key = proxy_key(app)
    statuses: list[int] = []
    with wsgi_server(app) as web:
        def attempt() -> None:
            answer = requests.post(f"{web}/api/v1/notebook/handoff", json={"code": code, "host": world["a"]["host"]},
                                   headers={KEY_HEADER: key}, timeout=30)
            statuses.append(answer.status_code)

        threads = [threading.Thread(target=attempt) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert sorted(statuses) == [200] + [409] * 7, statuses


def test_no_code_for_strangers_viewers_the_signed_out_or_a_script(app, world):
    a = world["a"]
    stranger = open_notebook(signed_in_client(app, world["stranger"]), a["host"])
    unknown = open_notebook(signed_in_client(app, world["stranger"]), f"nothing.{a['project']['name']}.localhost")
    assert stranger.status_code == unknown.status_code == 404  # existence not revealed to non-members
    assert stranger.mimetype == "text/html" and "Location" not in stranger.headers
    assert stranger.get_data(as_text=True).replace(a["host"], "") == unknown.get_data(as_text=True).replace(
        f"nothing.{a['project']['name']}.localhost", "")
    viewer = open_notebook(signed_in_client(app, world["viewer"]), a["host"])
    assert viewer.status_code == 403 and "developer" in viewer.get_data(as_text=True)
    signed_out = open_notebook(app.test_client(), a["host"])
    assert signed_out.status_code == 401 and "/ui/login" in signed_out.get_data(as_text=True)
    owner = signed_in_client(app, world["owner"])
    fetched = open_notebook(owner, a["host"], headers={"Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"})
    framed = open_notebook(owner, a["host"], headers={"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"})
    bearer = open_notebook(world["owner"].client, a["host"],
                           headers={"Authorization": f"Bearer {world['owner'].token}"})
    assert fetched.status_code == framed.status_code == bearer.status_code == 403
    # An admin may open any project's notebook.
    assert open_notebook(signed_in_client(app, world["admin"]), a["host"]).status_code == 302


def test_a_stopped_notebook_answers_a_page_that_leads_back_to_the_platform(app, world):
    from myapp.extensions import db
    from myapp.models import Notebook, NotebookState

    owner = signed_in_client(app, world["owner"])
    code = code_from(open_notebook(owner, world["a"]["host"]).headers["Location"])
    session = redeem(app, code, world["a"]["host"]).get_json()["cookie"]["value"]
    with app.app_context():
        row = db.session.get(Notebook, world["a"]["notebook"]["id"])
        row.state, row.reason = NotebookState.STOPPED, "stopped by user"
        db.session.commit()
    page = open_notebook(owner, world["a"]["host"])
    text = page.get_data(as_text=True)
    assert page.status_code == 409 and page.mimetype == "text/html"
    assert "notebook lab is stopped" in text and 'href="http://127.0.0.1:8080/ui/notebooks"' in text
    assert "<title>Notebook lab is stopped · myapp</title>" in text and 'data-state="stopped"' in text
    assert "press Start on its row of the Notebooks page" in text and "http-equiv" not in text
    answer = authz(app, world["a"]["host"], session)
    assert answer.status_code == 409 and answer.get_json()["notebooks"].endswith("/ui/notebooks")
    assert answer.get_json()["state"] == "stopped" and answer.get_json()["name"] == "lab"
    # Starting: the page says how far it got and reloads itself, to become the notebook once it runs.
    with app.app_context():
        row = db.session.get(Notebook, world["a"]["notebook"]["id"])
        row.state, row.reason = NotebookState.PULLING, "preparing the environment of x:1"
        db.session.commit()
    text = open_notebook(owner, world["a"]["host"]).get_data(as_text=True)
    assert "Notebook lab is starting" in text and 'data-state="preparing image"' in text
    assert '<meta http-equiv="refresh" content="3">' in text and "preparing the environment of x:1" in text


def test_logout_and_a_lost_membership_end_the_origins_session(app, world, make_user):
    developer = make_user()
    member_id = add_member(world["owner"], world["a"]["project"]["id"], developer.username, "developer")
    client = signed_in_client(app, developer)
    session = redeem(app, code_from(open_notebook(client, world["a"]["host"]).headers["Location"]),
                     world["a"]["host"]).get_json()["cookie"]["value"]
    assert authz(app, world["a"]["host"], session).status_code == 200
    removed = world["owner"].delete(f"/api/v1/project/{world['a']['project']['id']}/members/{member_id}")
    assert removed.status_code in (200, 204), removed.get_json()
    assert authz(app, world["a"]["host"], session).status_code == 404
    owner = signed_in_client(app, world["owner"])
    session = redeem(app, code_from(open_notebook(owner, world["a"]["host"]).headers["Location"]),
                     world["a"]["host"]).get_json()["cookie"]["value"]
    assert authz(app, world["a"]["host"], session).status_code == 200
    csrf = owner.get("/api/v1/session/").get_json()["csrf_token"]
    assert owner.post("/api/v1/session/logout", headers={"X-CSRFToken": csrf}).status_code == 200
    signed_out = authz(app, world["a"]["host"], session)
    assert signed_out.status_code == 401 and "/notebook-open?" in signed_out.get_json()["open"]


def test_the_platforms_cookies_are_host_only(app, world):
    """No Domain attribute: a browser never sends them to another host, notebooks' origins above all."""
    with wsgi_server(app) as web:
        session = platform_session(web, world["owner"].username, world["owner"].password)
        raw = session.get(f"{web}/api/v1/session/", timeout=10)
        assert session.cookies, "signed in without a cookie?"
        for cookie in session.cookies:
            assert not cookie.domain_specified and not cookie.domain_initial_dot, cookie
        assert "domain=" not in raw.headers.get("Set-Cookie", "").lower()
    from myapp.web.notebook_gate import register

    app.config["SESSION_COOKIE_DOMAIN"] = ".localhost"
    try:
        with pytest.raises(RuntimeError, match="SESSION_COOKIE_DOMAIN"):
            register(app)
    finally:
        app.config["SESSION_COOKIE_DOMAIN"] = None


def test_the_api_gives_the_notebooks_own_origin(app, world):
    shown = world["owner"].get(f"/api/v1/notebook/{world['a']['notebook']['id']}").get_json()
    assert shown["url"] == f"http://{world['a']['host']}:8081/notebook/{world['a']['project']['name']}/lab/lab"


def test_a_notebook_made_again_under_the_same_name_is_not_opened_by_an_old_session(app, world):
    """The origin's sessions go with their notebook's row (ON DELETE CASCADE)."""
    from myapp.extensions import db
    from myapp.models import Notebook

    owner, a = signed_in_client(app, world["owner"]), world["a"]
    session = redeem(app, code_from(open_notebook(owner, a["host"]).headers["Location"]),
                     a["host"]).get_json()["cookie"]["value"]
    with app.app_context():
        row = db.session.get(Notebook, a["notebook"]["id"])
        image = row.image
        db.session.delete(row)
        db.session.commit()
    made = created(world["owner"].post("/api/v1/notebook/", json={"project_id": a["project"]["id"], "name": "lab",
                                                                  "image": image}))
    assert made["id"] != a["notebook"]["id"]
    assert authz(app, a["host"], session).status_code == 401
