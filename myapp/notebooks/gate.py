"""Who may open a notebook's origin, and how a browser gets in: the one decision the local proxy
(`GET /api/v1/notebook/authz`) and Istio's ext-authz check (myapp/web/notebook_extauthz.py) ask.

The platform's session cookie stays on the platform's host. A browser gets into a notebook's origin
(myapp/notebooks/origins.py) by a hand-off:

1. the platform (`GET /notebook-open`, with its session, after the member check) issues a one-time code
   bound to the notebook's host, valid `HANDOFF_SECONDS`, and redirects the browser to
   `<origin>/_myapp/handoff?code=...`;
2. the notebook's origin (the proxy, or the ext-authz check) redeems it, once, and sets a cookie for
   that origin alone, naming a session of its own (`NotebookAccess`);
3. every later request is checked by `decide()`: that session, for this host, of a user still active,
   signed in on the platform (logout ends it), developer of the project (or an admin), and the notebook
   running. Codes and sessions are kept as SHA-256 digests only.

Domain code: outcomes and DomainErrors, no HTTP (the routes in myapp/web/notebook_gate.py map them).
"""
from __future__ import annotations

import datetime as dt
import enum
import hashlib
import os
import secrets
from dataclasses import dataclass

import sqlalchemy as sa
from flask import current_app

from ..errors import DomainError, Kind
from ..extensions import appbuilder, db
from ..models import LoginSession, Notebook, Project, ProjectMember, ProjectRole, utcnow
from ..models.notebook_access import NotebookAccess
from ..rendering.kinds.notebook import url_prefix
from .origins import HANDOFF_PATH, Origins, hostname, safe_next
from .states import SERVING, jupyter_token, not_serving

HANDOFF_SECONDS = 60


class Outcome(enum.Enum):
    ALLOWED = "allowed"
    SIGN_IN = "sign in"  # no live session for this origin: the browser goes through the platform
    NOT_FOUND = "not found"  # no such notebook, or not a member: the same answer, as the API gives
    VIEWER = "viewer"  # a member who may not run code
    NOT_RUNNING = "not running"


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    message: str
    project: str = ""
    name: str = ""
    notebook_id: int | None = None
    upstream: str = ""
    token: str = ""
    state: str = ""  # a notebook that does not run: its state (the page shows it)

    @property
    def prefix(self) -> str:
        return url_prefix(self.project, self.name) if self.name else ""


def origins() -> Origins:
    config = current_app.config
    domain = config.get("MYAPP_NOTEBOOK_DOMAIN") or os.environ.get("MYAPP_NOTEBOOK_DOMAIN")
    return Origins.of(domain, str(config["MYAPP_NOTEBOOK_URL"]))


def digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def _aware(value: dt.datetime) -> dt.datetime:
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)  # SQLite hands back naive UTC


# ---- the member check ----------------------------------------------------------------------------------
def _find(host: str) -> tuple[Project, Notebook] | None:
    names = origins().parse(host)
    if names is None:
        return None
    project = db.session.scalar(sa.select(Project).filter_by(name=names[0]))
    nb = db.session.scalar(sa.select(Notebook).filter_by(project_id=project.id, name=names[1])) if project else None
    return (project, nb) if project is not None and nb is not None else None


def check_member(user_id: int, host: str) -> Verdict:
    """May this user run code in the notebook served at `host`? (Admins may, anywhere.)"""
    found = _find(host)
    missing = Verdict(Outcome.NOT_FOUND, f"no notebook at {hostname(host)} that you can open")
    if found is None:
        return missing
    project, nb = found
    user = appbuilder.sm.get_user_by_id(user_id)
    if user is None or not user.is_active:
        return Verdict(Outcome.SIGN_IN, "sign in to the platform to open notebooks")
    if not appbuilder.sm.is_admin(user):
        role = db.session.scalar(sa.select(ProjectMember.role).filter_by(project_id=project.id, user_id=user_id))
        if role is None:
            return missing
        if not role.allows(ProjectRole.DEVELOPER):  # running code in it is a developer's right
            return Verdict(Outcome.VIEWER, f"your role in project {project.name} is {role.value}; opening its "
                                           "notebooks needs developer", project.name, nb.name, nb.id)
    token = jupyter_token(nb)
    if nb.state not in SERVING or not nb.upstream or not token:
        return Verdict(Outcome.NOT_RUNNING, not_serving(nb), project.name, nb.name, nb.id, state=nb.state.value)
    return Verdict(Outcome.ALLOWED, "", project.name, nb.name, nb.id, nb.upstream.rstrip("/"), token)


def decide(host: str, path: str, session: str | None) -> Verdict:
    """A request at `host` + `path` carrying this origin's session cookie (or none)."""
    if origins().parse(host) is None:
        return Verdict(Outcome.NOT_FOUND, f"{hostname(host)} is no notebook's address")
    if not session:
        return Verdict(Outcome.SIGN_IN, "open this notebook from the platform")
    now = utcnow()
    row = db.session.execute(
        sa.select(NotebookAccess.user_id, NotebookAccess.host)
        .join(LoginSession, LoginSession.sid == NotebookAccess.login_sid)
        .where(NotebookAccess.session_hash == digest(session), NotebookAccess.expires_at > now,
               LoginSession.expires_at > now)).first()
    if row is None or row.host != hostname(host):  # another origin's cookie is no cookie here
        return Verdict(Outcome.SIGN_IN, "your session for this notebook ended: open it from the platform again")
    verdict = check_member(row.user_id, host)
    if verdict.outcome is Outcome.ALLOWED and path != "/" and not path.startswith(verdict.prefix):
        return Verdict(Outcome.NOT_FOUND, f"nothing at {path} on this notebook's address")
    return verdict


# ---- the hand-off --------------------------------------------------------------------------------------
def issue(verdict: Verdict, user_id: int, login_sid: str, wanted: str | None) -> str:
    """A one-time code for an ALLOWED verdict's notebook, bound to its host, for the browser session
    `login_sid` of `user_id`; the caller commits and sends the browser to `handoff_url(...)`."""
    assert verdict.outcome is Outcome.ALLOWED and verdict.notebook_id is not None
    now = utcnow()
    db.session.execute(sa.delete(NotebookAccess).where(NotebookAccess.expires_at <= now))  # what lapsed
    code = secrets.token_urlsafe(32)
    db.session.add(NotebookAccess(
        code_hash=digest(code), notebook_id=verdict.notebook_id, user_id=user_id, login_sid=login_sid,
        host=origins().host(verdict.project, verdict.name), next_path=safe_next(verdict.prefix, wanted),
        created_at=now, expires_at=now + dt.timedelta(seconds=HANDOFF_SECONDS)))
    return code


def handoff_url(verdict: Verdict, code: str) -> str:
    return f"{origins().origin(verdict.project, verdict.name)}{HANDOFF_PATH}?code={code}"


@dataclass(frozen=True)
class Redeemed:
    session: str  # the cookie's value
    next_path: str
    max_age: int


def redeem(code: str, host: str) -> Redeemed:
    """The code, once, at the host it was issued for, within its minute: a session of that origin lasting
    as long as the platform session it came from. One UPDATE consumes it, so a second redeem (another web
    process, a replayed link) changes no row and is refused. DomainError (conflict) otherwise: used,
    expired, another origin's or never issued all read the same."""
    now = utcnow()
    session = secrets.token_urlsafe(32)
    claimed = db.session.execute(
        sa.update(NotebookAccess)
        .where(NotebookAccess.code_hash == digest(code), NotebookAccess.expires_at > now,
               NotebookAccess.host == hostname(host))
        .values(code_hash=None, session_hash=digest(session)))
    refused = DomainError("this link into the notebook was used already, has expired or is for another "
                          "notebook: open the notebook from the platform again", [{"field": "code",
                          "reason": "used, expired or another notebook's"}], Kind.CONFLICT)
    if claimed.rowcount != 1:
        raise refused
    row = db.session.execute(
        sa.select(NotebookAccess.id, NotebookAccess.next_path, LoginSession.expires_at)
        .join(LoginSession, LoginSession.sid == NotebookAccess.login_sid)
        .where(NotebookAccess.session_hash == digest(session))).first()
    if row is None or _aware(row.expires_at) <= now:  # signed out of the platform since
        raise refused
    db.session.execute(sa.update(NotebookAccess).where(NotebookAccess.id == row.id)
                       .values(expires_at=_aware(row.expires_at)))
    return Redeemed(session, row.next_path, max(1, int((_aware(row.expires_at) - now).total_seconds())))
