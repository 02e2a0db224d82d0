"""Sign-in security: rate limits and backoff, server-side sessions, logout by POST, token cut-offs.

Every login path (the UI's `POST /api/v1/session/login`, FAB's JWT `POST /api/v1/security/login`
and FAB's form `POST /login/`) goes through `limit_login` (a before-request hook) and FAB's
`auth_user_db` (which `PlatformSecurityManager` wraps with `record_attempt`):

- attempts per client address (behind proxies the one MYAPP_TRUSTED_PROXIES makes it, myapp/web/proxies.py),
  whatever the account: MYAPP_LOGIN_RATE_PER_IP (generous: scripts and tests sign in often), a moving
  window of `limits` (Flask-Limiter's engine) in RATELIMIT_STORAGE_URI: Redis when REDIS_URL is set,
  else a SQLite file all web processes share (myapp/shared/limits.py; Flask-Limiter's global hook stays
  off, it would run on every request) -> 429 with Retry-After;
- per (account, address) backoff and a per-account ceiling on new addresses (myapp/auth/login_limits.py, SQL)
  -> 429 with Retry-After, decided before the password is checked; wrong passwords never end sessions;
  their writes run again when SQLite is locked, and a lock that lasts is 503 with Retry-After, never a 500;
- sessions: the cookie carries only a session id (`login_session` row); logout (POST, CSRF-checked, on
  both the UI's and FAB's path) deletes it;
- JWTs issued before a user's `token_cutoff` (password change or reset) are refused.
"""
from __future__ import annotations

import datetime as dt
import math
import secrets
from typing import Any

import sqlalchemy as sa
from flask import Flask, Response, current_app, g, has_request_context, jsonify, redirect, request, session
from flask_appbuilder import expose
from flask_appbuilder.security.views import AuthDBView
from flask_login import logout_user, user_logged_in, user_logged_out
from limits import parse
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter
from sqlalchemy.exc import OperationalError

from ..extensions import database_locked, db
from ..inputs.plain_data import problem
from ..models import LoginSession, TokenCutoff, utcnow
from ..shared import (
    limits as shared_limits,  # noqa: F401 - registers the `limits` storage myappsqlite:// (no Redis)
)
from . import login_limits
from .callers import caller
from .claims import ISSUED_CLAIM

SESSION_KEY = "_myapp_sid"
BUSY_RETRY_AFTER = 2  # seconds a sign-in is told to wait when SQLite stayed locked through every run
LOGIN_PATHS = frozenset({"/api/v1/session/login", "/api/v1/security/login", "/login/"})


# ---- sessions -----------------------------------------------------------------------------------------
def start_session(user: Any) -> None:
    """A new server-side session for this browser (Flask-Login's user_logged_in, every login path)."""
    now = utcnow()
    db.session.execute(sa.delete(LoginSession).where(LoginSession.user_id == user.id,
                                                     LoginSession.expires_at <= now))
    sid = secrets.token_urlsafe(32)
    hours = float(current_app.config["MYAPP_SESSION_HOURS"])
    db.session.add(LoginSession(sid=sid, user_id=user.id, created_at=now, expires_at=now + dt.timedelta(hours=hours)))
    db.session.commit()
    session[SESSION_KEY] = sid


def end_session() -> None:
    """Logout: this browser's session row goes, so a copy of its cookie is refused from now on."""
    sid = session.pop(SESSION_KEY, None)
    if sid:
        db.session.execute(sa.delete(LoginSession).where(LoginSession.sid == sid))
        db.session.commit()


def session_valid(user_id: int) -> bool:
    """Does this request's cookie name a live session of user_id? (the cookie-session user loader)"""
    sid = session.get(SESSION_KEY)
    if not isinstance(sid, str):
        return False
    return db.session.scalar(sa.select(sa.literal(1)).where(
        LoginSession.sid == sid, LoginSession.user_id == user_id, LoginSession.expires_at > utcnow())) is not None


def end_all_sessions(user_id: int, keep: str | None = None) -> None:
    """Every session (but `keep`) and JWT of the user stops working (in the caller's transaction): a
    password change or reset."""
    db.session.execute(sa.delete(LoginSession).where(LoginSession.user_id == user_id, LoginSession.sid != (keep or "")))
    cutoff = utcnow()
    row = db.session.get(TokenCutoff, user_id)
    if row is None:
        db.session.add(TokenCutoff(user_id=user_id, not_before=cutoff))
    else:
        row.not_before = cutoff


def token_revoked(payload: dict[str, Any]) -> str | None:
    """Why a person's JWT is refused (issued before their cut-off), or None."""
    try:
        user_id, issued = int(payload["sub"]), float(payload.get(ISSUED_CLAIM, payload["iat"]))
    except (KeyError, TypeError, ValueError):
        return None  # FAB's loader refuses what names no user
    found = caller(user_id)  # the cut-off kept with the user (myapp.auth.callers), current on every commit
    cutoff = found.cutoff if found is not None else None
    if cutoff is not None and issued < cutoff:
        return "token revoked: the password was changed after it was issued"
    return None


# ---- logout -------------------------------------------------------------------------------------------
class PostLogoutAuthDBView(AuthDBView):
    """FAB's form login with a logout that only a POST carrying the CSRF token does (CSRFProtect checks
    every POST to it): a GET /logout/ from another site's link or image no longer signs anyone out."""

    @expose("/logout/", methods=["POST"])
    def logout(self):
        user = self._get_authenticated_user()
        logout_user()
        if user is not None:
            self.appbuilder.sm.on_user_logout(user)
        return redirect(current_app.config.get("LOGOUT_REDIRECT_URL", self.appbuilder.get_url_for_index))


def record_attempt(name: str, user: Any | None) -> bool:
    """After FAB checked a password: counted for this client address (myapp.auth.login_limits). False when
    SQLite stayed locked through every run: the attempt then fails, and `busy_login` answers 503 for it
    (FAB's login views turn any exception into a 500)."""
    try:
        login_limits.record(name, request.remote_addr if has_request_context() else None, user)
    except OperationalError as exc:
        if not database_locked(exc) or not has_request_context():
            raise
        g.myapp_login_busy = True
        return False
    return True


# ---- rate limits --------------------------------------------------------------------------------------
def _busy() -> Response:
    response = jsonify(message="The database is busy with other writes: try again")
    response.status_code = 503
    response.headers["Retry-After"] = str(BUSY_RETRY_AFTER)
    return response


def busy_login(response: Response) -> Response:
    """A sign-in whose attempt could not be counted (SQLite locked throughout) answers 503, whatever FAB made
    of it (a 401, a redirect to the form)."""
    return _busy() if g.pop("myapp_login_busy", False) else response


def _too_many(message: str, retry_after: float) -> Response:
    seconds = max(1, math.ceil(retry_after))
    response = jsonify(message=f"{message}: try again in {seconds} s", retry_after=seconds)
    response.status_code = 429
    response.headers["Retry-After"] = str(seconds)
    return response


def _unreadable_body() -> Response | None:
    """400 naming the field for a login body no lookup can take (a NUL character, a lone surrogate:
    PostgreSQL refuses them in a query), as the API answers such input everywhere (plain_data)."""
    data: Any = request.get_json(silent=True) if request.is_json else request.form.to_dict()
    found = problem(data) if isinstance(data, dict) else None
    if found is None:
        return None
    field, reason = found
    response = jsonify(message=f"Invalid input: {field}: {reason}", errors=[{"field": field, "reason": reason}])
    response.status_code = 400
    return response


def _login_name() -> str:
    data: Any = request.get_json(silent=True) if request.is_json else request.form
    name = data.get("username") if hasattr(data, "get") else None
    return name.strip() if isinstance(name, str) else ""


def limit_login() -> Response | None:
    """Before any login path: 429 when this address tried too often, or the account is limited for it
    (myapp.auth.login_limits); decided before the password is looked at."""
    if request.method != "POST" or request.path not in LOGIN_PATHS:
        return None
    unreadable = _unreadable_body()
    if unreadable is not None:
        return unreadable
    strategy = current_app.extensions["myapp-login-limits"]
    item, address = parse(current_app.config["MYAPP_LOGIN_RATE_PER_IP"]), login_limits.address_key(request.remote_addr)
    if not strategy.hit(item, "myapp-login", "ip", address):
        retry = strategy.get_window_stats(item, "myapp-login", "ip", address).reset_time - utcnow().timestamp()
        return _too_many("Too many sign-in attempts from this address", retry)
    name = _login_name()
    if not name:
        return None
    try:
        refusal = login_limits.check(name, request.remote_addr)
    except OperationalError as exc:
        if not database_locked(exc):
            raise
        return _busy()  # locked through every run: no password is checked uncounted
    db.session.rollback()
    return None if refusal is None else _too_many(refusal.message, refusal.retry_after)


def install(app: Flask) -> None:
    """The login hook (first, before FAB's) and the session signals."""
    app.extensions["myapp-login-limits"] = MovingWindowRateLimiter(
        storage_from_string(app.config["RATELIMIT_STORAGE_URI"]))
    app.before_request_funcs.setdefault(None, []).insert(0, limit_login)
    app.after_request(busy_login)
    user_logged_in.connect(lambda _app, user, **_: start_session(user), app, weak=False)
    user_logged_out.connect(lambda _app, user=None, **_: end_session(), app, weak=False)
