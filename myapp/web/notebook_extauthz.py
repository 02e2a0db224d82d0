"""Istio's ext-authz check of a notebook request on Kubernetes (the `myapp-notebook-authz` provider).

Every request reaching a notebook's pod is first sent here by its Envoy sidecar (the notebook's
AuthorizationPolicy, action CUSTOM; install/istio/mesh-config.yaml): the same method, the path after
`PREFIX`, its Host (the notebook's own origin, `<notebook>.<project>.<domain>`: myapp/notebooks/origins.py),
its cookies and the headers that tell a page load from a script's request. The answer is the decision of
myapp/notebooks/gate.py (which the local proxy asks through `GET /api/v1/notebook/authz`), spoken the way
Envoy understands:

- `/_myapp/handoff?code=...`: the one-time code from the platform's `/notebook-open`, redeemed here once;
  the answer (a "denial" Envoy passes to the browser) sets the origin's cookie and redirects into
  JupyterLab. Jupyter never sees it;
- 200 with the headers Envoy puts on the request before it reaches Jupyter (`headersToUpstreamOnAllow`):
  `Authorization: token <the notebook's Jupyter token>`, and `Cookie` without the platform's and the
  origin's session cookies, so JupyterLab (which runs the project's code) never sees them. Jupyter still
  checks XSRF and origins for these (job-templates/notebook/jupyter_server_config.py);
- a page load without a session: a redirect to the platform's hand-off; a stopped, unknown or forbidden
  notebook: a page saying so (the notebook's existence shown only to members); an API call: 401/403/404/409.
  Requests from another origin (a sibling notebook's script above all) are refused (403).

The worker (a snapshot build, activity polling) has no session: it sends `worker_auth.HEADER`, a
short-lived HMAC of the notebook only the platform can make, admitted on Jupyter's kernel and terminal
paths alone (`worker_auth.WORKER_PATHS`, by the path's notebook: it calls the in-cluster Service) with the
same token upstream.

It accepts every method (Envoy forwards the original one) and skips the CSRF check: it answers only Envoy,
and the redeem it does is the hand-off's own single use.
"""
from __future__ import annotations

from http.cookies import CookieError, SimpleCookie

import sqlalchemy as sa
from flask import Blueprint, Flask, current_app, jsonify, redirect, request
from werkzeug.wrappers import Response

from ..api.errors import ApiError, NotFound, domain_error
from ..api.notebooks import PATH
from ..errors import DomainError
from ..extensions import csrf, db
from ..models import Notebook, Project
from ..notebooks import gate, origins, worker_auth
from ..notebooks.gate import Outcome
from ..notebooks.states import SERVING, jupyter_token, not_serving
from .notebook_gate import STATUS, open_url, page, refused_page
from .notebook_gate import register as register_gate

PREFIX = "/api/v1/notebook/ext-authz"
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
# Jupyter reads a cookie header it does not know as nothing; an empty header would leave the original.
NO_COOKIE = "myapp-notebook-none=1"

extauthz = Blueprint("notebook_extauthz", __name__)


def _platform_cookies() -> set[str]:
    config = current_app.config
    return {config.get("SESSION_COOKIE_NAME") or "session", config.get("REMEMBER_COOKIE_NAME") or "remember_token",
            *origins.COOKIES}


def _jar(header: str) -> SimpleCookie | None:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except CookieError:
        return None
    return jar


def upstream_cookie(header: str, platform: set[str]) -> str:
    """The request's cookies without the platform's own (a cookie header that does not parse: none)."""
    jar = _jar(header)
    if jar is None:
        return NO_COOKIE
    kept = [f"{name}={morsel.coded_value}" for name, morsel in jar.items() if name not in platform]
    return "; ".join(kept) or NO_COOKIE


def origin_session(header: str) -> str | None:
    jar = _jar(header)
    found = [jar[name].value for name in origins.COOKIES if jar is not None and name in jar]
    return found[0] if found else None


def _denied(error: ApiError) -> Response:
    response = error.response()
    if error.status == 401:
        response.headers["WWW-Authenticate"] = 'Cookie realm="myapp"'
    return response


def _allowed(token: str) -> Response:
    response = Response(status=200)
    response.headers["Authorization"] = f"token {token}"
    response.headers["Cookie"] = upstream_cookie(request.headers.get("Cookie", ""), _platform_cookies())
    return response


def _inside(rest: str) -> str:
    """The path inside the notebook's prefix: `notebook/<project>/<name>/<this>`."""
    parts = rest.split("/", 3)
    return parts[3] if len(parts) == 4 else ""


def _worker(rest: str, credential: str) -> Response:
    match = PATH.fullmatch("/" + rest)
    if match is None or not worker_auth.WORKER_PATHS.fullmatch(_inside(rest)) \
            or not worker_auth.valid(credential, match["project"], match["name"]):
        return _denied(ApiError("not a valid worker credential for this notebook and path", status=401))
    missing = NotFound("notebook", f"{match['project']}/{match['name']}")
    try:  # the credential names this notebook: no member to check
        project = db.session.scalar(sa.select(Project).filter_by(name=match["project"]))
        nb = db.session.scalar(sa.select(Notebook).filter_by(project_id=project.id, name=match["name"])) \
            if project is not None else None
        if nb is None:
            raise missing
        token = jupyter_token(nb)
        if nb.state not in SERVING or not token:
            raise ApiError(not_serving(nb), status=409)
    except ApiError as error:
        return _denied(error)
    finally:
        db.session.rollback()  # a read: nothing to commit
    return _allowed(token)


def _handoff(host: str) -> Response:
    """Redeem the code; the answer (Envoy passes a denial's status and headers to the browser) sets the
    origin's cookie, host-only, and sends the browser into JupyterLab."""
    try:
        redeemed = gate.redeem(request.args.get("code", ""), host)
        db.session.commit()
    except DomainError as exc:
        return page(domain_error(exc).status, exc.message, open_url(host, "/"), "Open it again",
                     title="This link cannot be used")
    finally:
        db.session.rollback()
    settings = gate.origins()
    response = redirect(redeemed.next_path, code=302)
    response.set_cookie(settings.cookie, redeemed.session, max_age=redeemed.max_age, path="/", httponly=True,
                        secure=settings.secure, samesite="Lax")
    response.headers["Cache-Control"] = "no-store"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


@extauthz.route(f"{PREFIX}/", defaults={"rest": ""}, methods=METHODS)  # the origin's root
@extauthz.route(f"{PREFIX}/<path:rest>", methods=METHODS)
def check(rest: str) -> Response:
    credential = request.headers.get(worker_auth.HEADER)
    if credential is not None:
        return _worker(rest, credential)
    host, path = request.headers.get("Host", ""), "/" + rest
    if path == origins.HANDOFF_PATH:
        return _handoff(host)
    # Envoy sends the browser's cookies only: a token (a script's, a job's run token) is not a way in.
    if request.headers.get("Authorization"):
        return _denied(ApiError("sign in to open notebooks", status=401))
    refused = origins.cross_origin(request.method, request.headers, host)
    if refused is not None:
        return _denied(ApiError(refused, status=403))
    try:
        verdict = gate.decide(host, path, origin_session(request.headers.get("Cookie", "")))
    finally:
        db.session.rollback()  # a read: nothing to commit
    navigation = origins.is_navigation(request.method, request.headers)
    if verdict.outcome is Outcome.ALLOWED:
        return redirect(verdict.prefix + "lab") if path == "/" else _allowed(verdict.token)
    if verdict.outcome is Outcome.SIGN_IN and navigation:
        query = request.query_string.decode()
        return redirect(open_url(host, f"{path}?{query}" if query else path))
    if navigation:
        return refused_page(verdict)
    answer = jsonify(message=verdict.message)
    answer.status_code = STATUS[verdict.outcome]
    if verdict.outcome is Outcome.SIGN_IN:
        answer.headers["WWW-Authenticate"] = 'Cookie realm="myapp"'
    return answer


def register(app: Flask) -> None:
    csrf.exempt(extauthz)  # a check asked with whatever method the request had, by Envoy only
    app.register_blueprint(extauthz)
    register_gate(app)  # the platform's side of the hand-off and the local proxy's member check
