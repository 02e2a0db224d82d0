"""Istio's ext-authz check of notebook requests (myapp/web/notebook_extauthz.py): Envoy asks with the original
method, path, Host and cookies. Each notebook is its own origin: a browser enters by the platform's one-time
code, redeemed here once for that origin's cookie; members who may run code then get 200 with the Jupyter
token and the cookies minus the platform's and the origin's session for upstream, everyone else an answer
that never carries the token (a page for a page load, the status for an API call)."""
from __future__ import annotations

import urllib.parse

import pytest

from tests.notebooks.origin_client import NAVIGATE, code_from, signed_in_client
from tests.support import unique
from tests.world import created

PREFIX = "/api/v1/notebook/ext-authz"


def entered(app, someone, host: str):
    """A client holding the notebook origin's cookie, got as a browser gets it: the platform's code, then the
    origin's /_myapp/handoff (which Envoy sends here), whose answer sets the cookie."""
    query = urllib.parse.urlencode({"host": host, "next": ""})
    handed = signed_in_client(app, someone).get(f"/notebook-open?{query}", headers=NAVIGATE)
    assert handed.status_code == 302, handed.get_data(as_text=True)
    origin = app.test_client()
    landed = origin.get(f"{PREFIX}/_myapp/handoff?code={code_from(handed.headers['Location'])}",
                        base_url=f"http://{host}", headers=NAVIGATE)
    assert landed.status_code == 302, landed.get_data(as_text=True)
    cookie = landed.headers["Set-Cookie"]
    assert cookie.startswith("myapp-notebook=") and "HttpOnly" in cookie and "SameSite=Lax" in cookie
    assert "Path=/" in cookie and "domain" not in cookie.lower()  # host-only: this origin alone
    origin.set_cookie("_xsrf", "2|abc|def", domain=host)
    return origin


@pytest.fixture()
def world(app, admin, make_user, catalog):
    from myapp.extensions import db
    from myapp.models import Notebook, NotebookState

    owner, viewer, stranger = make_user(), make_user(), make_user()
    image = created(admin.post("/api/v1/image/", json={"repository": "registry.local/nb/lab", "tag": unique("v")}))
    project = created(owner.post("/api/v1/project/", json={"name": unique("nbx")}))
    created(owner.post(f"/api/v1/project/{project['id']}/members",
                       json={"username": viewer.username, "role": "viewer"}))
    notebook = created(owner.post("/api/v1/notebook/", json={
        "project_id": project["id"], "name": "lab", "image": f"{image['repository']}:{image['tag']}"}))
    with app.app_context():
        row = db.session.get(Notebook, notebook["id"])
        row.state = NotebookState.RUNNING
        row.reason = None
        row.job = {"ref": None, "token": "jupyter-secret-token"}
        row.upstream = "http://lab.ns.svc.cluster.local"
        db.session.commit()
    path = f"{PREFIX}/notebook/{project['name']}/lab/api/kernels"
    return {"owner": owner, "viewer": viewer, "stranger": stranger, "project": project, "notebook": notebook,
            "path": path, "host": f"lab.{project['name']}.localhost"}


def test_a_member_is_allowed_with_the_token_and_without_the_platform_session(app, world):
    browser = entered(app, world["owner"], world["host"])
    browser.set_cookie("session", "platform-session-copy", domain=world["host"])  # never upstream, were it here
    for method in ("GET", "POST", "DELETE"):  # Envoy forwards the request's own method; no CSRF token
        answer = browser.open(world["path"], method=method, base_url=f"http://{world['host']}")
        assert answer.status_code == 200, (method, answer.get_data(as_text=True))
        assert answer.headers["Authorization"] == "token jupyter-secret-token"
        assert answer.headers["Cookie"] == "_xsrf=2|abc|def"  # neither the platform's nor the origin's session
    assert "jupyter-secret-token" not in answer.get_data(as_text=True)
    # The same check for any path under the notebook: JupyterLab's page, a websocket's upgrade request.
    lab = browser.get(f"{PREFIX}/notebook/{world['project']['name']}/lab/lab/tree/x.ipynb",
                      base_url=f"http://{world['host']}")
    assert lab.status_code == 200
    root = browser.get(f"{PREFIX}/", base_url=f"http://{world['host']}")
    assert root.status_code == 302
    assert root.headers["Location"].endswith(f"/notebook/{world['project']['name']}/lab/lab")


def test_everyone_else_is_refused_without_the_token(app, world):
    host, base = world["host"], f"http://{world['host']}"
    nobody = app.test_client().open(world["path"], method="POST", base_url=base)
    assert nobody.status_code == 401 and nobody.headers["WWW-Authenticate"].startswith("Cookie")
    page_load = app.test_client().get(f"{PREFIX}/notebook/{world['project']['name']}/lab/lab", base_url=base,
                                      headers=NAVIGATE)
    assert page_load.status_code == 302 and "/notebook-open?" in page_load.headers["Location"]
    assert urllib.parse.parse_qs(urllib.parse.urlsplit(page_load.headers["Location"]).query)["host"] == [host]
    # Non-members get no code (the notebook is not revealed), viewers may not run code.
    for someone, status in ((world["stranger"], 404), (world["viewer"], 403)):
        handed = signed_in_client(app, someone).get(f"/notebook-open?host={host}", headers=NAVIGATE)
        assert handed.status_code == status and "Location" not in handed.headers
    # The platform's session cookie on a notebook's origin is nothing (and a bearer token never a way in).
    platform_cookie = signed_in_client(app, world["owner"]).get_cookie("session")
    borrowed = app.test_client()
    borrowed.set_cookie("session", platform_cookie.value, domain=host)
    assert borrowed.open(world["path"], method="POST", base_url=base).status_code == 401
    bearer = world["owner"].get(world["path"], base_url=base)
    assert bearer.status_code == 401 and "Authorization" not in bearer.headers
    # An origin's cookie opens that notebook only, at its own address only.
    owner = entered(app, world["owner"], host)
    assert owner.get(f"{PREFIX}/notebook/{world['project']['name']}/other/lab", base_url=base).status_code == 404
    assert owner.get(f"{PREFIX}/elsewhere/x", base_url=base).status_code == 404
    assert owner.get(world["path"], base_url=f"http://other.{world['project']['name']}.localhost").status_code == 401
    assert owner.get(world["path"], base_url="http://127.0.0.1").status_code == 404
    # A script of another origin (a sibling notebook) is refused whatever cookies its request carries.
    sibling = {"Origin": f"http://other.{world['project']['name']}.localhost"}
    assert owner.open(world["path"], method="POST", base_url=base, headers=sibling).status_code == 403
    fetched = owner.get(world["path"], base_url=base, headers={"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "cors"})
    assert fetched.status_code == 403


def test_the_handoff_answers_once(app, world):
    host = world["host"]
    handed = signed_in_client(app, world["owner"]).get(f"/notebook-open?host={host}", headers=NAVIGATE)
    code = code_from(handed.headers["Location"])
    first = app.test_client().get(f"{PREFIX}/_myapp/handoff?code={code}", base_url=f"http://{host}")
    assert first.status_code == 302 and first.headers["Location"] == f"/notebook/{world['project']['name']}/lab/lab"
    again = app.test_client().get(f"{PREFIX}/_myapp/handoff?code={code}", base_url=f"http://{host}",
                                  headers=NAVIGATE)
    assert again.status_code == 409 and again.mimetype == "text/html" and "Set-Cookie" not in again.headers


def test_the_workers_credential_opens_this_notebooks_kernels_alone_for_minutes(app, world):
    """The worker (a snapshot build, activity polling) has no session: a short-lived HMAC of the notebook,
    only the platform can make, admits it to Jupyter's kernel and terminal paths, with the token upstream."""
    import time

    from myapp.notebooks.worker_auth import HEADER, LIFETIME, credential

    name = world["project"]["name"]
    base = f"{PREFIX}/notebook/{name}/lab/"
    client = app.test_client()  # no session cookie, no member
    with app.app_context():
        good = credential(name, "lab")
        other = credential(name, "other")
        expired = credential(name, "lab", now=time.time() - LIFETIME - 5)
        too_long = credential(name, "lab", now=time.time() + LIFETIME)
    for method, path in (("POST", "api/kernels"), ("GET", "api/kernels/0f3a-9b/channels"),
                         ("DELETE", "api/kernels/0f3a-9b"), ("GET", "api/terminals")):
        answer = client.open(base + path, method=method, headers={HEADER: good})
        assert answer.status_code == 200, (path, answer.get_data(as_text=True))
        assert answer.headers["Authorization"] == "token jupyter-secret-token"
    refused = [
        ("api/contents/notes.ipynb", good),  # not a kernel path: files stay the members'
        ("lab", good), ("api/kernels/../contents", good), ("api/terminals/1", good),
        ("api/kernels", other),  # another notebook's credential
        ("api/kernels", expired), ("api/kernels", too_long),
        ("api/kernels", good[:-1] + ("0" if good[-1] != "0" else "1")),  # altered
        ("api/kernels", "9999999999.abc"), ("api/kernels", ""),
    ]
    for path, value in refused:
        answer = client.get(base + path, headers={HEADER: value})
        assert answer.status_code == 401, (path, value, answer.get_data(as_text=True))
        assert "Authorization" not in answer.headers
    # Under another SECRET_KEY (another platform) the same notebook's credential is worthless.
    saved = app.config["SECRET_KEY"]
    app.config["SECRET_KEY"] = "another secret key of the platform"
    try:
        with app.app_context():
            foreign = credential(name, "lab")
    finally:
        app.config["SECRET_KEY"] = saved
    assert client.get(base + "api/kernels", headers={HEADER: foreign}).status_code == 401


def test_a_notebook_that_does_not_run_is_409_and_a_page_that_leads_back(app, world):
    from myapp.extensions import db
    from myapp.models import Notebook, NotebookState

    browser = entered(app, world["owner"], world["host"])
    with app.app_context():
        row = db.session.get(Notebook, world["notebook"]["id"])
        row.state = NotebookState.STOPPED
        row.reason = "stopped by user"
        db.session.commit()
    answer = browser.get(world["path"], base_url=f"http://{world['host']}")
    assert answer.status_code == 409 and answer.get_json()["message"] == "notebook lab is stopped: stopped by user"
    assert "Authorization" not in answer.headers
    page = browser.get(f"{PREFIX}/notebook/{world['project']['name']}/lab/lab", base_url=f"http://{world['host']}",
                       headers=NAVIGATE)
    assert page.status_code == 409 and page.mimetype == "text/html" and "Authorization" not in page.headers
    assert "stopped by user" in page.get_data(as_text=True) and "/ui/notebooks" in page.get_data(as_text=True)


def test_a_sealed_token_is_opened_for_upstream_and_another_keys_is_not(app, world):
    """The row keeps the token sealed (what the worker writes); the check hands Envoy the plain value."""
    from myapp.auth import sealed
    from myapp.extensions import db
    from myapp.models import Notebook
    from myapp.notebooks.states import TOKEN_PURPOSE

    def store(value):
        with app.app_context():
            db.session.get(Notebook, world["notebook"]["id"]).job = {"ref": None, "token": value}
            db.session.commit()

    store(sealed.seal(app.config["SECRET_KEY"], TOKEN_PURPOSE, "sealed-jupyter-token"))
    browser = entered(app, world["owner"], world["host"])
    answer = browser.get(world["path"], base_url=f"http://{world['host']}")
    assert answer.status_code == 200 and answer.headers["Authorization"] == "token sealed-jupyter-token"
    # Sealed under another SECRET_KEY (rotated): no token to give, the notebook must be started again.
    store(sealed.seal("another secret key of the platform", TOKEN_PURPOSE, "sealed-jupyter-token"))
    answer = browser.get(world["path"], base_url=f"http://{world['host']}")
    assert answer.status_code == 409 and "Authorization" not in answer.headers
    assert answer.get_json()["message"] == ("notebook lab must be started again: its token cannot be read "
                                            "(SECRET_KEY changed?)")


def test_upstream_cookie_drops_only_the_platforms_and_the_origins_session():
    from myapp.web.notebook_extauthz import NO_COOKIE, upstream_cookie

    platform = {"session", "remember_token", "myapp-notebook", "__Host-myapp-notebook"}
    assert upstream_cookie("session=abc; _xsrf=1; remember_token=x; username-h=u; myapp-notebook=s; "
                           "__Host-myapp-notebook=t", platform) == "_xsrf=1; username-h=u"
    assert upstream_cookie("session=abc", platform) == NO_COOKIE
    assert upstream_cookie("", platform) == NO_COOKIE
    assert upstream_cookie('bad"cookie', platform) == NO_COOKIE


def test_the_mesh_config_sends_notebook_requests_to_this_check():
    """install/istio's provider is the one rendered policies name, and it asks this endpoint the way it answers."""
    from pathlib import Path

    import yaml

    from myapp.rendering.kinds.notebook import DEFAULTS
    from myapp.web.notebook_extauthz import PREFIX as ROUTE

    install = Path(__file__).resolve().parents[2] / "install"
    config = yaml.safe_load((install / "istio" / "mesh-config.yaml").read_text())
    (provider,) = yaml.safe_load(config["data"]["mesh"])["extensionProviders"]
    assert provider["name"] == DEFAULTS["MYAPP_NOTEBOOK_AUTHZ_PROVIDER"]
    http = provider["envoyExtAuthzHttp"]
    assert http["pathPrefix"] == ROUTE and http["failOpen"] is False
    from myapp.notebooks.worker_auth import HEADER

    assert http["includeRequestHeadersInCheck"][:2] == ["cookie", HEADER.lower()]
    # What tells a page load from a script's request, which the check reads (Host: Envoy always sends it).
    assert {"origin", "sec-fetch-site", "sec-fetch-mode", "sec-fetch-dest", "accept"} <= set(
        http["includeRequestHeadersInCheck"])
    assert set(http["headersToUpstreamOnAllow"]) == {"authorization", "cookie"}
    # The hand-off's answer (a denial to Envoy) sets the origin's cookie and redirects: both reach the browser.
    assert {"set-cookie", "location", "content-type", "cache-control"} <= set(http["headersToDownstreamOnDeny"])
    web = [d for d in yaml.safe_load_all((install / "base" / "web.yaml").read_text()) if d and d["kind"] == "Service"]
    namespace = yaml.safe_load((install / "base" / "kustomization.yaml").read_text())["namespace"]
    assert http["service"] == f"{web[0]['metadata']['name']}.{namespace}.svc.cluster.local"
    assert http["port"] == web[0]["spec"]["ports"][0]["port"]
