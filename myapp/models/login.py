"""Login security state (myapp.auth.logins, myapp.auth.login_limits): browser sessions, token cut-offs, sign-in
limits and the addresses each account signed in from."""
from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from flask_appbuilder import Model
from sqlalchemy.orm import Mapped, mapped_column

from .base import utcnow


class LoginSession(Model):
    """One signed-in browser session. Flask's session cookie only carries this id: logout deletes the
    row, so a copy of the cookie stops working; a password change deletes all of a user's."""

    __tablename__ = "login_session"

    sid: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(sa.ForeignKey("ab_user.id", ondelete="CASCADE"), nullable=False,
                                         index=True)
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow, nullable=False)
    expires_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), nullable=False, index=True)


class LoginLimit(Model):
    """A sign-in limit in force, shared by every web process. Times are epoch seconds.

    - `pair:<account>|<address>`: the failure streak of one account from one client address, and the
      time that pair may try again (`until`; failures beyond the free ones back off, doubling);
    - `account:<account>`: the budget of attempts from addresses the account never signed in from, as
      the time that budget is next whole (`until`, a generic cell rate: `failures` unused).

    `<account>` is `user:<id>` for an existing account, else the lowercased name tried, so unknown names
    are limited alike and the answers never tell which names exist; `user_id` names the account (admins
    see and clear its rows)."""

    __tablename__ = "login_limit"

    key: Mapped[str] = mapped_column(sa.String(400), primary_key=True)
    user_id: Mapped[int | None] = mapped_column(sa.ForeignKey("ab_user.id", ondelete="CASCADE"), index=True)
    address: Mapped[str | None] = mapped_column(sa.String(64))
    failures: Mapped[int] = mapped_column(sa.Integer, nullable=False, default=0)
    until: Mapped[float] = mapped_column(sa.Float, nullable=False)
    # When the row means nothing any more: swept on a later failure.
    expires_at: Mapped[float] = mapped_column(sa.Float, nullable=False, index=True)


class KnownAddress(Model):
    """A client address an account signed in from (the right password), until `expires_at` (epoch
    seconds, renewed by each sign-in): the per-account ceiling never applies to it."""

    __tablename__ = "login_known_address"

    user_id: Mapped[int] = mapped_column(sa.ForeignKey("ab_user.id", ondelete="CASCADE"), primary_key=True)
    address: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    last_login_at: Mapped[float] = mapped_column(sa.Float, nullable=False)
    expires_at: Mapped[float] = mapped_column(sa.Float, nullable=False, index=True)


class TokenCutoff(Model):
    """JWTs of this user issued before `not_before` are refused (a password change or reset)."""

    __tablename__ = "token_cutoff"

    user_id: Mapped[int] = mapped_column(sa.ForeignKey("ab_user.id", ondelete="CASCADE"), primary_key=True)
    not_before: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), nullable=False)
