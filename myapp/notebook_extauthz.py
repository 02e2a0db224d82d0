"""Istio's ext-authz check of a notebook request on Kubernetes (the `myapp-notebook-authz` provider).

Every request reaching a notebook's pod is first sent here by its Envoy sidecar (the notebook's
AuthorizationPolicy, action CUSTOM; install/istio/mesh-config.yaml): the same method, the path after
`PREFIX`, and the caller's cookies. The answer is the member check of `GET /api/v1/notebook/authz`
(which the local proxy asks), spoken the way Envoy understands:

- 200 with the headers Envoy puts on the request before it reaches Jupyter (`headersToUpstreamOnAllow`):
  `Authorization: token <the notebook's Jupyter token>`, and `Cookie` without the platform's session
  cookies, so JupyterLab (which runs the project's code) never sees them;
- 401 (not signed in), 404 (not a member: the notebook's existence is not revealed), 403 (a viewer:
  running code is a developer's right), 409 (the notebook does not run), which Envoy answers the
  browser with.

The worker (a snapshot build, activity polling) has no session: it sends `worker_auth.HEADER`, a
short-lived HMAC of the notebook only the platform can make, admitted on Jupyter's kernel and terminal
paths alone (`worker_auth.WORKER_PATHS`) with the same token upstream.

It accepts every method (Envoy forwards the original one) and skips the CSRF check: it reads, writes
nothing, and answers only Envoy (a browser calling it directly learns the token of a notebook it may
open anyway, and every request to the notebook is checked again).
"""
from __future__ import annotations

from http.cookies import CookieError, SimpleCookie

import sqlalchemy as sa
from flask import Blueprint, Flask, Response, current_app, request
from flask_login import current_user

from .api.errors import ApiError, NotFound
from .api.notebooks import PATH
from .api.scope import check_project
from .extensions import csrf, db
from .models import Notebook, Project, ProjectRole
from .notebooks import worker_auth
from .notebooks.states import SERVING, jupyter_token, not_serving

PREFIX = "/api/v1/notebook/ext-authz"
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
# Jupyter reads a cookie header it does not know as nothing; an empty header would leave the original.
NO_COOKIE = "myapp-notebook=1"

extauthz = Blueprint("notebook_extauthz", __name__)


def _platform_cookies() -> set[str]:
    config = current_app.config
    return {config.get("SESSION_COOKIE_NAME") or "session", config.get("REMEMBER_COOKIE_NAME") or "remember_token"}


def upstream_cookie(header: str, platform: set[str]) -> str:
    """The request's cookies without the platform's own (a cookie header that does not parse: none)."""
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except CookieError:
        return NO_COOKIE
    kept = [f"{name}={morsel.coded_value}" for name, morsel in jar.items() if name not in platform]
    return "; ".join(kept) or NO_COOKIE


def _denied(error: ApiError) -> Response:
    response = error.response()
    if error.status == 401:
        response.headers["WWW-Authenticate"] = 'Cookie realm="myapp"'
    return response


def _inside(rest: str) -> str:
    """The path inside the notebook's prefix: `notebook/<project>/<name>/<this>`."""
    parts = rest.split("/", 3)
    return parts[3] if len(parts) == 4 else ""


@extauthz.route(f"{PREFIX}/<path:rest>", methods=METHODS)
def check(rest: str) -> Response:
    worker = request.headers.get(worker_auth.HEADER)
    match = PATH.fullmatch("/" + rest)
    if worker is not None:
        if match is None or not worker_auth.WORKER_PATHS.fullmatch(_inside(rest)) \
                or not worker_auth.valid(worker, match["project"], match["name"]):
            return _denied(ApiError("not a valid worker credential for this notebook and path", status=401))
    # Envoy sends the browser's cookies only: a token (a script's, a job's run token) is not a way in.
    elif request.headers.get("Authorization") or not current_user or not current_user.is_authenticated:
        return _denied(ApiError("sign in to open notebooks", status=401))
    if match is None:
        return _denied(NotFound("notebook", "/" + rest))
    missing = NotFound("notebook", f"{match['project']}/{match['name']}")
    try:
        project = db.session.scalar(sa.select(Project).filter_by(name=match["project"]))
        if project is None:
            raise missing
        if worker is None:  # the worker's credential names this notebook: no member to check
            check_project(project.id, ProjectRole.DEVELOPER, missing)
        nb = db.session.scalar(sa.select(Notebook).filter_by(project_id=project.id, name=match["name"]))
        if nb is None:
            raise missing
        token = jupyter_token(nb)
        if nb.state not in SERVING or not token:
            raise ApiError(not_serving(nb), status=409)
    except ApiError as error:
        return _denied(error)
    finally:
        db.session.rollback()  # a read: nothing to commit
    response = Response(status=200)
    response.headers["Authorization"] = f"token {token}"
    response.headers["Cookie"] = upstream_cookie(request.headers.get("Cookie", ""), _platform_cookies())
    return response


def register(app: Flask) -> None:
    csrf.exempt(extauthz)  # a check that writes nothing, asked with whatever method the request had
    app.register_blueprint(extauthz)
