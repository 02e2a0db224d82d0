"""The platform's side of notebook origins (myapp/notebooks/gate.py), as HTTP:

- `GET /notebook-open?host=<notebook host>&next=<path>`: the browser, signed in on the platform, asks to
  enter a notebook; after the member check it is sent to `<origin>/_myapp/handoff?code=<one-time code>`,
  else it gets a page saying why (the notebook's existence shown only to its members, as in the API);
- `POST /api/v1/notebook/handoff {code, host}`: the notebook proxy redeems a code (once) for the session
  cookie it sets on the notebook's origin;
- `GET /api/v1/notebook/authz?host=&path=`: the proxy's member check of each request, with the origin's
  session in `X-Myapp-Notebook-Session`.

The proxy proves itself with the proxy key (myapp.api.notebooks.proxy_key); neither of its routes takes a
platform session or a CSRF token (it has neither; the key is its credential).
"""
from __future__ import annotations

import hmac
import urllib.parse

from flask import Blueprint, Flask, current_app, jsonify, redirect, request, session
from flask_login import current_user
from werkzeug.wrappers import Response

from ..api.errors import ApiError, domain_error
from ..api.notebooks import PROXY_HEADER, proxy_key
from ..auth.logins import SESSION_KEY
from ..errors import DomainError
from ..extensions import csrf, db
from ..notebooks import gate, notice
from ..notebooks.gate import Outcome, Verdict

SESSION_HEADER = "X-Myapp-Notebook-Session"
OPEN_PATH = "/notebook-open"
STATUS = {Outcome.SIGN_IN: 401, Outcome.NOT_FOUND: 404, Outcome.VIEWER: 403, Outcome.NOT_RUNNING: 409}

notebook_gate = Blueprint("notebook_gate", __name__)


def platform_url(path: str) -> str:
    return str(current_app.config["MYAPP_BASE_URL"]).rstrip("/") + path


def open_url(host: str, next_path: str) -> str:
    """Where a notebook's origin sends a browser without a session: the platform's hand-off."""
    return platform_url(OPEN_PATH) + "?" + urllib.parse.urlencode({"host": host, "next": next_path})


def notebooks_page() -> str:
    return platform_url("/ui/notebooks")


def html(status: int, text: str) -> Response:
    response = Response(text, status=status, mimetype="text/html")
    response.headers.update(notice.HEADERS)
    return response


def page(status: int, message: str, link: str | None, link_text: str, title: str | None = None) -> Response:
    return html(status, notice.page(status, message, link, link_text, title))


def refused_page(verdict: Verdict) -> Response:
    status = STATUS[verdict.outcome]
    if verdict.outcome is Outcome.NOT_RUNNING:  # its state, and how it gets to run
        return html(status, notice.not_running(verdict.name, verdict.state, verdict.message, notebooks_page()))
    return page(status, verdict.message, notebooks_page(), "Go to Notebooks")


@notebook_gate.get(OPEN_PATH)
def open_notebook() -> Response:
    """The browser enters a notebook: a page that can only be followed, never fetched by a script."""
    try:
        mode, dest = request.headers.get("Sec-Fetch-Mode"), request.headers.get("Sec-Fetch-Dest")
        if (mode and mode != "navigate") or (dest and dest != "document") or request.headers.get("Authorization"):
            return page(403, "Notebooks are opened by following a link in the browser.", notebooks_page(),
                         "Go to Notebooks")
        sid = session.get(SESSION_KEY)  # the platform session the notebook's session will hang on
        if not current_user or not current_user.is_authenticated or not isinstance(sid, str):
            return page(401, "Sign in to the platform, then open the notebook again from its Notebooks page.",
                         platform_url("/ui/login?next=/notebooks"), "Sign in")
        host = request.args.get("host", "")
        verdict = gate.check_member(current_user.id, host)
        if verdict.outcome is not Outcome.ALLOWED:
            return refused_page(verdict)
        code = gate.issue(verdict, current_user.id, sid, request.args.get("next"))
        db.session.commit()
    finally:
        db.session.rollback()  # nothing else to keep (after a commit, a no-op)
    response = redirect(gate.handoff_url(verdict, code), code=302)
    response.headers["Cache-Control"] = "no-store"
    response.headers["Referrer-Policy"] = "no-referrer"
    return response


def _from_proxy() -> None:
    if not hmac.compare_digest(request.headers.get(PROXY_HEADER, "").encode(), proxy_key().encode()):
        raise ApiError("only the notebook proxy may ask", status=403)


@notebook_gate.post("/api/v1/notebook/handoff")
def handoff() -> Response:
    """{code, host} -> {cookie: {name, value, max_age, secure}, next}: the session the proxy sets."""
    try:
        _from_proxy()
        data = request.get_json(silent=True) or {}
        code, host = data.get("code"), data.get("host")
        if not isinstance(code, str) or not isinstance(host, str) or not code or len(code) > 128:
            raise ApiError("Invalid input: code and host are required", [{"field": "code", "reason": "is required"}])
        origins = gate.origins()
        redeemed = gate.redeem(code, host)
        db.session.commit()
        return jsonify(next=redeemed.next_path, notebooks=notebooks_page(),
                       cookie={"name": origins.cookie, "value": redeemed.session, "max_age": redeemed.max_age,
                               "secure": origins.secure})
    except DomainError as exc:
        refused = jsonify(message=exc.message, errors=exc.errors, notebooks=notebooks_page())
        refused.status_code = domain_error(exc).status
        return refused
    except ApiError as exc:
        return exc.response()
    finally:
        db.session.rollback()


@notebook_gate.get("/api/v1/notebook/authz")
def authz() -> Response:
    """200 {upstream, token, prefix, notebook_id} or 401 {message, open} / 403 / 404 / 409 {message,
    notebooks, name, state}: `open` is where to send a browser without a session, `notebooks` the platform's
    page, `state` a notebook's that does not run (the proxy's page shows it)."""
    try:
        _from_proxy()
        host, path = request.args.get("host", ""), request.args.get("path", "/")
        verdict = gate.decide(host, path, request.headers.get(SESSION_HEADER))
    except ApiError as exc:
        return exc.response()
    finally:
        db.session.rollback()  # a read
    if verdict.outcome is Outcome.ALLOWED:
        return jsonify(upstream=verdict.upstream, token=verdict.token, prefix=verdict.prefix,
                       notebook_id=verdict.notebook_id)
    answer = jsonify(message=verdict.message, notebooks=notebooks_page(),
                     open=open_url(host, request.args.get("next") or path) if verdict.outcome is Outcome.SIGN_IN
                     else None, name=verdict.name or None, state=verdict.state or None)
    answer.status_code = STATUS[verdict.outcome]
    return answer


def register(app: Flask) -> None:
    # A notebook's origin must never receive the platform's session: its cookies are host-only.
    for name in ("SESSION_COOKIE_DOMAIN", "REMEMBER_COOKIE_DOMAIN"):
        if app.config.get(name):
            raise RuntimeError(f"{name} is set: the platform's cookies would reach notebooks' origins; unset it")
    csrf.exempt(notebook_gate)  # the proxy's routes take its key; the open route writes nothing a page can use
    app.register_blueprint(notebook_gate)
