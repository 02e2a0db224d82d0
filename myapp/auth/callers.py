"""Who is asking, resolved once per web process and kept while it holds: a user with their roles and
groups, and their token cut-off (myapp.auth.logins). Every authenticated request needs both; reading them
from SQL cost two queries and a few ORM objects per request.

A kept snapshot is used only while its generation is the current one: a value per user (and one for
everyone) in `myapp.shared.generations` (Redis, or a file mapped into every process when embedded), which every
process reads on each request. A commit that changed a user row (roles, groups,
active, password, login stats), a token cut-off (password change or reset) or any role or group
sets a new generation right after it commits (`_publish`), so no process uses the old snapshot for its
next request. A snapshot is loaded only after its generation was read, so one loaded before a change is
always filed under the older generation. MAX_AGE bounds a snapshot's life even if a generation were lost.
Logout is not cached: the cookie's session row is checked on every request (`logins.session_valid`);
memberships are kept the same way, under generations of their own (`api.scope.memberships`).

The snapshot's user is detached from any session with everything the request path reads loaded; it is
shared by the requests of a process and must not be modified or added to a session (code that changes a
user loads it: `db.session.get(User, id)`). Changes are seen through the ORM's flushes: a Core statement
on `ab_user` or `ab_user_role` would not be (there is none).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from flask import g, has_app_context
from flask_appbuilder.security.sqla.models import Group, Role, User
from sqlalchemy.orm import Session, joinedload, selectinload

from ..extensions import db, generations
from ..models import TokenCutoff
from ..shared.generations import Kept

MAX_AGE = 60.0  # seconds a snapshot is kept at most
EVERYONE = "*"
_CHANGED = "myapp_callers_changed"


@dataclass(frozen=True)
class Caller:
    user: Any  # the detached User, roles and groups (with their roles) loaded
    cutoff: float | None  # tokens issued before this (epoch seconds) are refused


_kept: Kept[Caller | None] = Kept(MAX_AGE)  # user id -> snapshot


def _key(who: int | str) -> str:
    return f"caller:{who}"


def _generation(user_id: int) -> tuple[Any, ...]:
    """The current generations of this user and of everyone."""
    return generations.read(_key(user_id), _key(EVERYONE))


def _load(user_id: int) -> Caller | None:
    """From SQL, in a session of its own, closed without expiring what it loaded (close() detaches; the
    request's session would expire its objects on commit and rollback)."""
    with Session(db.engine, expire_on_commit=False) as session:
        user = session.get(User, user_id, options=[joinedload(User.roles),
                                                   selectinload(User.groups).selectinload(Group.roles)])
        cutoff = session.scalar(sa.select(TokenCutoff.not_before).where(TokenCutoff.user_id == user_id))
    if user is None:
        return None
    if cutoff is not None and cutoff.tzinfo is None:  # SQLite hands back naive datetimes; all is stored in UTC
        cutoff = cutoff.replace(tzinfo=dt.UTC)
    return Caller(user, cutoff.timestamp() if cutoff is not None else None)


def caller(user_id: int) -> Caller | None:
    """The user and their cut-off (None: no such user); once per request, from the process's snapshot
    while its generation is current."""
    memo = g.setdefault("_myapp_callers", {})
    if user_id in memo:
        return memo[user_id]
    found = _kept.get(user_id, _generation(user_id), lambda: _load(user_id))
    memo[user_id] = found
    return found


def is_kept(user: Any) -> bool:
    """Is this a snapshot's user (detached on purpose, complete: FAB must not load it again)?"""
    memo: dict[int, Caller | None] = (g.get("_myapp_callers") if has_app_context() else None) or {}
    target = user._get_current_object() if hasattr(user, "_get_current_object") else user  # flask_login's proxy
    return any(c is not None and c.user is target for c in memo.values())


# ---- invalidation -------------------------------------------------------------------------------------
def _collect(session: Session, _flush_context: Any) -> None:
    """After a flush (the pre-flush lists are still there): whose snapshots this transaction changes."""
    changed = session.info.setdefault(_CHANGED, set())
    for obj in (*session.new, *session.dirty, *session.deleted):
        if isinstance(obj, User):
            changed.add(obj.id)
        elif isinstance(obj, TokenCutoff):
            changed.add(obj.user_id)
        elif isinstance(obj, Role | Group):
            changed.add(EVERYONE)


def _publish(session: Session) -> None:
    """After the commit: new generations, so every process loads those users again."""
    changed = session.info.pop(_CHANGED, None)
    if changed and has_app_context():
        generations.bump(*[_key(who) for who in changed if who is not None])
        if EVERYONE in changed:
            _kept.clear()
        _kept.forget(*changed)


def install() -> None:
    """Once per process: every session's commits publish what they changed."""
    if not sa.event.contains(Session, "after_flush", _collect):
        sa.event.listen(Session, "after_flush", _collect)
        sa.event.listen(Session, "after_commit", _publish)
