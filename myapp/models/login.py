"""Login security state (myapp.logins): browser sessions, failed-login counts and lockouts, token cut-offs."""
from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from flask_appbuilder import Model
from sqlalchemy.orm import Mapped, mapped_column

from .base import utcnow


class LoginSession(Model):
    """One signed-in browser session. Flask's session cookie only carries this id: logout deletes the
    row, so a copy of the cookie stops working; a password change or a lockout deletes all of a user's."""

    __tablename__ = "login_session"

    sid: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    user_id: Mapped[int] = mapped_column(sa.ForeignKey("ab_user.id", ondelete="CASCADE"), nullable=False,
                                         index=True)
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow, nullable=False)
    expires_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), nullable=False, index=True)


class LoginFailure(Model):
    """Failed sign-ins of one account in the current window, and its lockout. Keyed by `user:<id>` for an
    existing account, else by the lowercased name tried (so an unknown name locks the same way and the
    answers never tell which names exist)."""

    __tablename__ = "login_failure"

    key: Mapped[str] = mapped_column(sa.String(400), primary_key=True)
    failures: Mapped[int] = mapped_column(sa.Integer, nullable=False, default=0)
    window_ends_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), nullable=False)
    locked_until: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    # When the row means nothing any more (window over, lock over): swept on the next failure.
    expires_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), nullable=False, index=True)


class TokenCutoff(Model):
    """JWTs of this user issued before `not_before` are refused (a password change, reset or lockout)."""

    __tablename__ = "token_cutoff"

    user_id: Mapped[int] = mapped_column(sa.ForeignKey("ab_user.id", ondelete="CASCADE"), primary_key=True)
    not_before: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), nullable=False)
