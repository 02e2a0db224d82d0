"""Sign-in security: rate limits, lockout after failed passwords, server-side sessions, token cut-offs.

Every login path (the UI's `POST /api/v1/session/login`, FAB's JWT `POST /api/v1/security/login`
and FAB's form `POST /login/`) goes through `limit_login` (a before-request hook) and FAB's
`auth_user_db` (which `PlatformSecurityManager` wraps with `record_attempt`):

- rate limits (`limits`, Flask-Limiter's engine, moving windows in RATELIMIT_STORAGE_URI: Redis when
  REDIS_URL is set, else a SQLite file all web processes share, myapp/shared_limits.py; Flask-Limiter's
  global hook stays off, it would run on every request), per client address (behind proxies the one
  MYAPP_TRUSTED_PROXIES makes it, myapp/proxies.py):
  MYAPP_LOGIN_RATE_PER_IP (generous: scripts and tests sign in often) and MYAPP_LOGIN_RATE_PER_NAME
  attempts -> 429 with Retry-After;
- lockout (SQL, shared by every process): MYAPP_LOCKOUT_FAILURES wrong passwords for one account within
  MYAPP_LOCKOUT_WINDOW seconds lock it for MYAPP_LOCKOUT_SECONDS: every attempt, right password or not,
  answers 429 "locked until ..." (so the answer never tells whether the password was right); the lock
  ends that user's sessions and tokens; admins unlock (`POST /api/v1/user/{id}/unlock`, `lift_lockout`);
- sessions: the cookie carries only a session id (`login_session` row); logout deletes it;
- JWTs issued before a user's `token_cutoff` (password change or reset, lockout) are refused.
"""
from __future__ import annotations

import datetime as dt
import math
import secrets
from typing import Any

import sqlalchemy as sa
from flask import Flask, Response, current_app, jsonify, request, session
from flask_login import user_logged_in, user_logged_out
from limits import parse
from limits.storage import storage_from_string
from limits.strategies import MovingWindowRateLimiter
from sqlalchemy.exc import IntegrityError

from . import shared_limits  # noqa: F401 - registers the `limits` storage myappsqlite:// (no Redis)
from .callers import caller
from .claims import ISSUED_CLAIM
from .extensions import appbuilder, db
from .models import LoginFailure, LoginSession, TokenCutoff, utcnow
from .plain_data import problem

SESSION_KEY = "_myapp_sid"
LOGIN_PATHS = frozenset({"/api/v1/session/login", "/api/v1/security/login", "/login/"})


def aware(value: dt.datetime) -> dt.datetime:
    """SQLite hands back naive datetimes; everything stored is UTC."""
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


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
    password change or reset, a lockout."""
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
    found = caller(user_id)  # the cut-off kept with the user (myapp.callers), current on every commit
    cutoff = found.cutoff if found is not None else None
    if cutoff is not None and issued < cutoff:
        return "token revoked: the password was changed or the account locked after it was issued"
    return None


# ---- lockout ------------------------------------------------------------------------------------------
def lock_key(name: str) -> str:
    """`user:<id>` for an existing account (by username or email, as FAB signs in), else the name tried."""
    sm = appbuilder.sm
    user = sm.find_user(username=name) or sm.find_user(email=name)
    return f"user:{user.id}" if user is not None else f"name:{name.strip().casefold()}"[:400]


def locked_until(key: str) -> dt.datetime | None:
    until = db.session.scalar(sa.select(LoginFailure.locked_until).where(LoginFailure.key == key))
    return aware(until) if until is not None and aware(until) > utcnow() else None


def record_attempt(name: str, user: Any | None) -> None:
    """After FAB checked a password: a success clears the account's failures; a failure counts, and
    the one that reaches MYAPP_LOCKOUT_FAILURES locks the account (and ends its sessions)."""
    config, now = current_app.config, utcnow()
    key = f"user:{user.id}" if user is not None else lock_key(name)
    if user is not None:
        db.session.execute(sa.delete(LoginFailure).where(LoginFailure.key == key))
        db.session.commit()
        return
    window = dt.timedelta(seconds=float(config["MYAPP_LOCKOUT_WINDOW"]))
    db.session.execute(sa.delete(LoginFailure).where(LoginFailure.expires_at <= now))  # the sweep
    counted = db.session.execute(sa.update(LoginFailure).where(LoginFailure.key == key).values(
        failures=LoginFailure.failures + 1)).rowcount
    if not counted:
        try:
            with db.session.begin_nested():  # another process may count the same name at this moment
                db.session.add(LoginFailure(key=key, failures=1, window_ends_at=now + window,
                                            expires_at=now + window))
        except IntegrityError:
            db.session.execute(sa.update(LoginFailure).where(LoginFailure.key == key).values(
                failures=LoginFailure.failures + 1))
    row = db.session.get(LoginFailure, key, populate_existing=True)
    if row is not None and row.failures >= int(config["MYAPP_LOCKOUT_FAILURES"]) and row.locked_until is None:
        row.locked_until = now + dt.timedelta(seconds=float(config["MYAPP_LOCKOUT_SECONDS"]))
        row.expires_at = max(aware(row.expires_at), row.locked_until)
        if key.startswith("user:"):
            end_all_sessions(int(key.removeprefix("user:")))
    db.session.commit()


def lift_lockout(user_id: int) -> bool:
    """An admin lifts a lockout (in the caller's transaction); True if the account was locked."""
    key = f"user:{user_id}"
    was_locked = locked_until(key) is not None
    db.session.execute(sa.delete(LoginFailure).where(LoginFailure.key == key))
    return was_locked


# ---- rate limits --------------------------------------------------------------------------------------
def _too_many(message: str, retry_after: float) -> Response:
    seconds = max(1, math.ceil(retry_after))
    response = jsonify(message=message, retry_after=seconds)
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
    """Before any login path: 429 when this address or this name tried too often, or the account is locked."""
    if request.method != "POST" or request.path not in LOGIN_PATHS:
        return None
    unreadable = _unreadable_body()
    if unreadable is not None:
        return unreadable
    config, strategy = current_app.config, current_app.extensions["myapp-login-limits"]
    name = _login_name()
    checks = [(config["MYAPP_LOGIN_RATE_PER_IP"], "ip", request.remote_addr or "-",
               "Too many sign-in attempts from this address")]
    if name:
        checks.append((config["MYAPP_LOGIN_RATE_PER_NAME"], "name", name.casefold(),
                       "Too many sign-in attempts for this account"))
    for rate, kind, ident, message in checks:
        item = parse(rate)
        if not strategy.hit(item, "myapp-login", kind, ident):
            retry = strategy.get_window_stats(item, "myapp-login", kind, ident).reset_time - utcnow().timestamp()
            return _too_many(f"{message}: try again in {max(1, math.ceil(retry))} s", retry)
    if name:
        until = locked_until(lock_key(name))
        db.session.rollback()
        if until is not None:
            return _too_many(f"This account is locked after too many failed sign-ins, until "
                             f"{until.isoformat(timespec='seconds')}; an admin can unlock it",
                             (until - utcnow()).total_seconds())
    return None


def install(app: Flask) -> None:
    """The login hook (first, before FAB's) and the session signals."""
    app.extensions["myapp-login-limits"] = MovingWindowRateLimiter(
        storage_from_string(app.config["RATELIMIT_STORAGE_URI"]))
    app.before_request_funcs.setdefault(None, []).insert(0, limit_login)
    user_logged_in.connect(lambda _app, user, **_: start_session(user), app, weak=False)
    user_logged_out.connect(lambda _app, user=None, **_: end_session(), app, weak=False)
