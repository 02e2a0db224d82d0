"""Istio's ext-authz check of notebook requests (myapp/notebook_extauthz.py): Envoy asks with the original
method, path and cookies; members who may run code get 200 with the Jupyter token and the cookies minus the
platform's session for upstream, everyone else an answer that never carries the token."""
from __future__ import annotations

import pytest

from tests.support import unique
from tests.world import created

PREFIX = "/api/v1/notebook/ext-authz"


def signed_in(app, someone):
    """A browser-like client with the platform's session cookie (and a Jupyter cookie of its own)."""
    browser = app.test_client()
    token = browser.get("/api/v1/session/").get_json()["csrf_token"]
    answer = browser.post("/api/v1/session/login", json={"username": someone.username, "password": someone.password},
                          headers={"X-CSRFToken": token})
    assert answer.status_code == 200, answer.get_json()
    browser.set_cookie("_xsrf", "2|abc|def", domain="localhost")
    return browser


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
            "path": path}


def test_a_member_is_allowed_with_the_token_and_without_the_platform_session(app, world):
    browser = signed_in(app, world["owner"])
    for method in ("GET", "POST", "DELETE"):  # Envoy forwards the request's own method; no CSRF token
        answer = browser.open(world["path"], method=method)
        assert answer.status_code == 200, (method, answer.get_data(as_text=True))
        assert answer.headers["Authorization"] == "token jupyter-secret-token"
        assert answer.headers["Cookie"] == "_xsrf=2|abc|def"  # the session cookie stays with the platform
    assert "jupyter-secret-token" not in answer.get_data(as_text=True)
    # The same check for any path under the notebook: JupyterLab's page, a websocket's upgrade request.
    lab = browser.get(f"{PREFIX}/notebook/{world['project']['name']}/lab/lab/tree/x.ipynb")
    assert lab.status_code == 200


def test_everyone_else_is_refused_without_the_token(app, world):
    cases = [
        (app.test_client(), 401),  # not signed in
        (signed_in(app, world["stranger"]), 404),  # not a member: the notebook is not revealed
        (signed_in(app, world["viewer"]), 403),  # a viewer may not run code
    ]
    for client, status in cases:
        answer = client.open(world["path"], method="POST")
        assert answer.status_code == status, answer.get_data(as_text=True)
        assert "Authorization" not in answer.headers and "jupyter-secret-token" not in answer.get_data(as_text=True)
    # A bearer token (a script's, a job's run token) is not a way in, even the owner's.
    bearer = world["owner"].get(world["path"])
    assert bearer.status_code == 401 and "Authorization" not in bearer.headers
    owner = signed_in(app, world["owner"])
    assert owner.get(f"{PREFIX}/notebook/{world['project']['name']}/other/lab").status_code == 404
    assert owner.get(f"{PREFIX}/elsewhere/x").status_code == 404
    assert owner.get(f"{PREFIX}/notebook/no-such-project/lab/lab").status_code == 404


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


def test_a_notebook_that_does_not_run_is_409(app, world):
    from myapp.extensions import db
    from myapp.models import Notebook, NotebookState

    with app.app_context():
        row = db.session.get(Notebook, world["notebook"]["id"])
        row.state = NotebookState.STOPPED
        row.reason = "stopped by user"
        db.session.commit()
    answer = signed_in(app, world["owner"]).get(world["path"])
    assert answer.status_code == 409 and answer.get_json()["message"] == "notebook lab is stopped: stopped by user"
    assert "Authorization" not in answer.headers


def test_a_sealed_token_is_opened_for_upstream_and_another_keys_is_not(app, world):
    """The row keeps the token sealed (what the worker writes); the check hands Envoy the plain value."""
    from myapp import sealed
    from myapp.extensions import db
    from myapp.models import Notebook
    from myapp.notebooks.states import TOKEN_PURPOSE

    def store(value):
        with app.app_context():
            db.session.get(Notebook, world["notebook"]["id"]).job = {"ref": None, "token": value}
            db.session.commit()

    store(sealed.seal(app.config["SECRET_KEY"], TOKEN_PURPOSE, "sealed-jupyter-token"))
    answer = signed_in(app, world["owner"]).get(world["path"])
    assert answer.status_code == 200 and answer.headers["Authorization"] == "token sealed-jupyter-token"
    # Sealed under another SECRET_KEY (rotated): no token to give, the notebook must be started again.
    store(sealed.seal("another secret key of the platform", TOKEN_PURPOSE, "sealed-jupyter-token"))
    answer = signed_in(app, world["owner"]).get(world["path"])
    assert answer.status_code == 409 and "Authorization" not in answer.headers
    assert answer.get_json()["message"] == ("notebook lab must be started again: its token cannot be read "
                                            "(SECRET_KEY changed?)")


def test_upstream_cookie_drops_only_the_platforms():
    from myapp.notebook_extauthz import NO_COOKIE, upstream_cookie

    platform = {"session", "remember_token"}
    assert upstream_cookie("session=abc; _xsrf=1; remember_token=x; username-h=u", platform) == "_xsrf=1; username-h=u"
    assert upstream_cookie("session=abc", platform) == NO_COOKIE
    assert upstream_cookie("", platform) == NO_COOKIE
    assert upstream_cookie('bad"cookie', platform) == NO_COOKIE


def test_the_mesh_config_sends_notebook_requests_to_this_check():
    """install/istio's provider is the one rendered policies name, and it asks this endpoint the way it answers."""
    from pathlib import Path

    import yaml

    from myapp.notebook_extauthz import PREFIX as ROUTE
    from myapp.rendering.kinds.notebook import DEFAULTS

    install = Path(__file__).resolve().parent.parent / "install"
    config = yaml.safe_load((install / "istio" / "mesh-config.yaml").read_text())
    (provider,) = yaml.safe_load(config["data"]["mesh"])["extensionProviders"]
    assert provider["name"] == DEFAULTS["MYAPP_NOTEBOOK_AUTHZ_PROVIDER"]
    http = provider["envoyExtAuthzHttp"]
    assert http["pathPrefix"] == ROUTE and http["failOpen"] is False
    from myapp.notebooks.worker_auth import HEADER

    assert http["includeRequestHeadersInCheck"] == ["cookie", HEADER.lower()]
    assert set(http["headersToUpstreamOnAllow"]) == {"authorization", "cookie"}
    web = [d for d in yaml.safe_load_all((install / "base" / "web.yaml").read_text()) if d and d["kind"] == "Service"]
    namespace = yaml.safe_load((install / "base" / "kustomization.yaml").read_text())["namespace"]
    assert http["service"] == f"{web[0]['metadata']['name']}.{namespace}.svc.cluster.local"
    assert http["port"] == web[0]["spec"]["ports"][0]["port"]
