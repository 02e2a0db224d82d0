"""Sign-in limits that slow attackers without locking owners out (SQL, shared by every web process).

Checked before a password is (`check`, from myapp.auth.logins' before-request hook on every login path) and
counted after (`record`, from FAB's `auth_user_db`). Wrong passwords never end sessions or tokens, and a
refusal (429 with Retry-After) comes before the password is looked at, so it never tells whether the
password was right. Nothing here sleeps: a limited attempt is answered at once.

- per (account, client address): MYAPP_LOGIN_BACKOFF_FREE failures in a streak are free; each further
  one makes the pair wait MYAPP_LOGIN_BACKOFF_SECONDS, doubling up to MYAPP_LOGIN_BACKOFF_MAX_SECONDS.
  A success ends the streak; so does MYAPP_LOGIN_BACKOFF_RESET_SECONDS without a failure;
- per account, across the addresses it never signed in from: MYAPP_LOGIN_NEW_ADDRESS_BURST attempts at
  once, then one every MYAPP_LOGIN_NEW_ADDRESS_SECONDS (a generic cell rate). An attacker spreading over
  many addresses is held to that rate, and the owner at a new address is slowed to it, never refused for
  longer than one interval by it;
- known addresses: an address an account signed in from (the right password) within
  MYAPP_LOGIN_KNOWN_ADDRESS_DAYS is exempt from the per-account ceiling, so however the account is
  attacked from elsewhere, its owner signs in from there at once.

An account is `user:<id>` when the name (username, else email, as FAB signs in) exists, else the name
tried, lowercased: unknown names are limited alike. An address is the client's (myapp/web/proxies.py); IPv6
counts by its /64, which one client holds whole. Admins see and clear an account's limits (`state`,
`clear`: myapp/api/users.py).
"""
from __future__ import annotations

import datetime as dt
import ipaddress
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import sqlalchemy as sa
from flask import current_app
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import OperationalError

from ..extensions import LOCKED_TRIES, appbuilder, database_locked, db, pause_after_lock
from ..models import KnownAddress, LoginLimit

DAY = 86400.0
MAX_DOUBLINGS = 60  # 2**60 seconds is past any cap: keeps the power finite


def now() -> float:
    """Epoch seconds (tests move this clock)."""
    return time.time()


@dataclass(frozen=True)
class Account:
    key: str
    user_id: int | None


@dataclass(frozen=True)
class Refusal:
    message: str
    retry_after: float


def address_key(text: str | None) -> str:
    """The address limits count by: an IPv4 address, an IPv6 /64, else the text as given (bounded)."""
    try:
        address = ipaddress.ip_address((text or "").strip().split("%")[0])
    except ValueError:
        return (text or "-")[:64]
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return str(address)


def account_of(name: str, user: Any | None = None) -> Account:
    if user is None:
        sm = appbuilder.sm
        user = sm.find_user(username=name) or sm.find_user(email=name)
    if user is not None:
        return Account(f"user:{user.id}", user.id)
    return Account(f"name:{name.strip().casefold()}", None)


def _pair_key(account: Account, address: str) -> str:
    return f"pair:{account.key}|{address}"[:400]


def _account_key(account: Account) -> str:
    return f"account:{account.key}"[:400]


def _settings() -> dict[str, float]:
    c = current_app.config
    s = {name: max(0.0, float(c[f"MYAPP_LOGIN_{name}"])) for name in (
        "BACKOFF_FREE", "BACKOFF_SECONDS", "BACKOFF_MAX_SECONDS", "BACKOFF_RESET_SECONDS",
        "NEW_ADDRESS_BURST", "NEW_ADDRESS_SECONDS", "KNOWN_ADDRESS_DAYS")}
    s["NEW_ADDRESS_BURST"] = max(1.0, s["NEW_ADDRESS_BURST"])  # NEW_ADDRESS_SECONDS = 0: no ceiling
    return s


def _insert(model: Any) -> Any:
    """INSERT ... ON CONFLICT for the session's database (both dialects spell it alike)."""
    dialect = db.session.get_bind().dialect.name
    return (postgresql.insert if dialect == "postgresql" else sqlite.insert)(model)


def backoff(failures: int, s: dict[str, float]) -> float:
    """Seconds a pair waits after its failures-th failure in a streak (0 while they are free)."""
    beyond = failures - int(s["BACKOFF_FREE"])
    if beyond <= 0:
        return 0.0
    return min(s["BACKOFF_MAX_SECONDS"], s["BACKOFF_SECONDS"] * 2.0 ** min(beyond - 1, MAX_DOUBLINGS))


def is_known(user_id: int | None, address: str, at: float) -> bool:
    if user_id is None:
        return False
    return db.session.scalar(sa.select(sa.literal(1)).where(
        KnownAddress.user_id == user_id, KnownAddress.address == address, KnownAddress.expires_at > at)) is not None


# ---- before the password is checked ---------------------------------------------------------------------
T = TypeVar("T")


def again_when_locked(step: Callable[[], T]) -> T:
    """``step`` (its statements and commit) run again from the start after a rollback when SQLite says
    locked, as the API's routes are; OperationalError when it stays locked through every run."""
    for tries in range(1, LOCKED_TRIES + 1):
        try:
            return step()
        except OperationalError as exc:
            db.session.rollback()
            if not database_locked(exc) or tries == LOCKED_TRIES:
                raise
        pause_after_lock(tries)
    raise AssertionError("unreachable")


def check(name: str, client: str | None) -> Refusal | None:
    """Whether this attempt may go on to the password check; takes one attempt of the account's budget
    for new addresses when it goes on from one (committed; run again when SQLite is locked)."""
    return again_when_locked(lambda: _check(name, client))


def _check(name: str, client: str | None) -> Refusal | None:
    s, at, address = _settings(), now(), address_key(client)
    account = account_of(name)
    until = db.session.scalar(sa.select(LoginLimit.until).where(LoginLimit.key == _pair_key(account, address)))
    if until is not None and until > at:
        return Refusal("Too many failed sign-ins for this account from this address", until - at)
    if is_known(account.user_id, address, at):
        return None
    refusal = _take_new_address_attempt(account, at, s)
    db.session.commit()
    return refusal


def _take_new_address_attempt(account: Account, at: float, s: dict[str, float]) -> Refusal | None:
    """One attempt of the budget, in one statement (two processes never both take the last one)."""
    interval, slack = s["NEW_ADDRESS_SECONDS"], (s["NEW_ADDRESS_BURST"] - 1) * s["NEW_ADDRESS_SECONDS"]
    key, table = _account_key(account), LoginLimit.__table__
    whole_at = sa.case((table.c.until > at, table.c.until), else_=at) + interval
    statement = _insert(LoginLimit).values(
        key=key, user_id=account.user_id, address=None, failures=0, until=at + interval, expires_at=at + interval,
    )
    statement = statement.on_conflict_do_update(
        index_elements=[table.c.key], set_={"until": whole_at, "expires_at": whole_at},
        where=table.c.until <= at + slack,
    ).returning(table.c.until)
    if db.session.execute(statement).first() is not None:
        return None
    until = db.session.scalar(sa.select(LoginLimit.until).where(LoginLimit.key == key)) or at
    return Refusal("Too many sign-in attempts for this account from new addresses", until - slack - at)


# ---- after the password was checked ---------------------------------------------------------------------
def record(name: str, client: str | None, user: Any | None) -> None:
    """A success ends the pair's streak and remembers the address; a failure counts in the streak and
    sets how long the pair waits. Never touches sessions or tokens. Committed (run again when SQLite is
    locked)."""
    again_when_locked(lambda: _record(name, client, user))


def _record(name: str, client: str | None, user: Any | None) -> None:
    s, at, address = _settings(), now(), address_key(client)
    if user is not None:
        account = account_of(name, user)
        db.session.execute(sa.delete(LoginLimit).where(LoginLimit.key == _pair_key(account, address)))
        keep_until = at + s["KNOWN_ADDRESS_DAYS"] * DAY
        known = _insert(KnownAddress).values(user_id=user.id, address=address, last_login_at=at,
                                             expires_at=keep_until)
        db.session.execute(known.on_conflict_do_update(
            index_elements=[KnownAddress.user_id, KnownAddress.address],
            set_={"last_login_at": at, "expires_at": keep_until}))
        db.session.execute(sa.delete(KnownAddress).where(KnownAddress.expires_at <= at))  # the sweep
        db.session.commit()
        return
    account = account_of(name)
    table, key = LoginLimit.__table__, _pair_key(account, address)
    forget_at = at + s["BACKOFF_RESET_SECONDS"]
    counted = _insert(LoginLimit).values(key=key, user_id=account.user_id, address=address, failures=1,
                                         until=at, expires_at=forget_at)
    counted = counted.on_conflict_do_update(index_elements=[table.c.key], set_={
        "failures": sa.case((table.c.expires_at <= at, 1), else_=table.c.failures + 1),
        "expires_at": forget_at,
    }).returning(table.c.failures)
    failures = int(db.session.execute(counted).scalar_one())
    wait = backoff(failures, s)
    if wait:
        db.session.execute(sa.update(LoginLimit).where(LoginLimit.key == key).values(
            until=at + wait, expires_at=max(forget_at, at + wait)))
    db.session.execute(sa.delete(LoginLimit).where(LoginLimit.expires_at <= at))  # the sweep
    db.session.commit()


# ---- admins ---------------------------------------------------------------------------------------------
def limited_users() -> set[int]:
    """Accounts refused somewhere right now: a pair waiting, or no attempt left from new addresses."""
    s, at = _settings(), now()
    slack = (s["NEW_ADDRESS_BURST"] - 1) * s["NEW_ADDRESS_SECONDS"]
    rows = db.session.scalars(sa.select(LoginLimit.user_id).distinct().where(
        LoginLimit.user_id.is_not(None),
        sa.or_(sa.and_(LoginLimit.address.is_not(None), LoginLimit.until > at),
               sa.and_(LoginLimit.address.is_(None), LoginLimit.until > at + slack))))
    return {int(user_id) for user_id in rows}


def state(user_id: int) -> dict[str, Any]:
    """What limits the account now (in whole seconds to wait), and the addresses it is known at."""
    s, at = _settings(), now()
    interval, burst = s["NEW_ADDRESS_SECONDS"], s["NEW_ADDRESS_BURST"]
    rows = db.session.scalars(sa.select(LoginLimit).where(LoginLimit.user_id == user_id,
                                                          LoginLimit.expires_at > at)).all()
    pairs = sorted((r for r in rows if r.address is not None), key=lambda r: -r.failures)
    budget = next((r.until for r in rows if r.address is None), at)
    known = db.session.scalars(sa.select(KnownAddress).where(KnownAddress.user_id == user_id,
                                                            KnownAddress.expires_at > at)
                               .order_by(KnownAddress.last_login_at.desc())).all()
    in_use = max(0.0, budget - at) / interval if interval else 0.0
    left = math.floor(burst - in_use)  # attempts of the burst not in use
    return {
        "addresses": [{"address": r.address, "failures": r.failures, "retry_after": _seconds(r.until - at)}
                      for r in pairs],
        "new_addresses": {"attempts_left": max(0, left),
                          "retry_after": _seconds(budget - (burst - 1) * interval - at)},
        "known_addresses": [{"address": k.address, "last_login_at": _iso(k.last_login_at),
                             "expires_at": _iso(k.expires_at)} for k in known],
    }


def clear(user_id: int) -> None:
    """An admin clears the account's limits (every address's streak, the new-address budget), in the
    caller's transaction; known addresses stay."""
    db.session.execute(sa.delete(LoginLimit).where(LoginLimit.user_id == user_id))


def _seconds(value: float) -> int:
    """Whole seconds to wait (0: may try now), rounded up as Retry-After is."""
    return max(0, math.ceil(value))


def _iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).isoformat(timespec="seconds")
