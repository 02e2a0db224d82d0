"""Per-run platform API credentials: a task that calls the platform acts for its own run only.

A run gets one token (a row of `run_token`, issued when the run starts). The JWT is derived from the
row and the secret key, never stored: identity = the project's bot user, claims `myapp_run` (the run)
and `myapp_project` (its project), `exp` a backstop (MYAPP_RUN_TOKEN_LIFETIME, or the pipeline's
longest task timeout). The run controller hands it to the run's jobs as the Secret
`myapp-run-<run_id>-token` (key `token`) in the project's namespace, through the backend, before it
submits an attempt that mounts it; rendering binds templates' `secret://myapp-api-token/token` to
that name. When the run ends the row is revoked (in the transaction that ends it) and the Secrets are
deleted; `release_candidates` finds what a crash left behind, for the beat tick to finish.

What the token may do (myapp.auth.security, myapp.api.scope): a developer of its run's project and of
nothing else, never an admin, whatever its identity's roles or memberships; refused (401) once the
row is revoked or the run has finished. The bot itself is inactive: it has no password anyone knows,
and any token of its own that is not a live run token is refused.
"""
from __future__ import annotations

import datetime as dt
import secrets
import uuid
from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from flask import current_app, g, jsonify
from flask_jwt_extended import JWTManager, create_access_token
from sqlalchemy.exc import IntegrityError
from werkzeug.security import generate_password_hash

from ..extensions import appbuilder, db
from ..models import PipelineRun, Project, ProjectMember, ProjectRole, RunToken, Task, User
from ..models.states import RUN_TERMINAL
from ..rendering.contract import API_TOKEN_KEY, run_token_secret
from .claims import ISSUED_CLAIM, PROJECT_CLAIM, RUN_CLAIM
from .security import USER_ROLE

BOT_EMAIL_DOMAIN = "bots.myapp.invalid"  # .invalid: never a deliverable address


def bot_name(project: Project) -> str:
    return f"{project.name}-bot"


def ensure_bot(project: Project) -> User:
    """The project's bot: the identity its runs' tokens act as, known by its email (unique, and under
    .invalid: no person's). Created on first use, inactive, in the caller's transaction (a
    run-controller pass must not commit half-way)."""
    email = f"{bot_name(project)}@{BOT_EMAIL_DOMAIN}"
    bot = db.session.scalar(sa.select(User).where(User.email == email)) or _legacy_bot(project)
    if bot is None:
        taken = db.session.scalar(sa.select(User.id).where(User.username == bot_name(project)))
        bot = User(first_name=project.name, last_name="bot", email=email, active=False,
                   username=f"{bot_name(project)}-{project.id}" if taken else bot_name(project),  # a person's name
                   password=generate_password_hash(  # never checked: hashed as FAB hashes (its settings)
                       secrets.token_urlsafe(32), method=current_app.config.get("FAB_PASSWORD_HASH_METHOD", "scrypt")))
        role = appbuilder.sm.find_role(USER_ROLE)
        try:
            with db.session.begin_nested():  # another worker may create it at the same moment
                db.session.add(bot)
                bot.roles = [role] if role else []  # for the admin's user list; run tokens act as a User anyway
        except IntegrityError:
            bot = db.session.scalar(sa.select(User).where(User.email == email))
    bot.email = email
    bot.active = False  # never signs in, even if someone reactivated it: only run tokens act as it
    return bot


def _legacy_bot(project: Project) -> User | None:
    """The bot `myapp init` made before run tokens (the user `create_user(<project>-bot)` makes, a
    developer of the project) with a shared 365-day token: taken over, and its membership removed
    (run tokens need none). Deactivated by the caller, so that token is refused from then on."""
    name = bot_name(project)
    bot = db.session.scalar(sa.select(User).where(User.username == name, User.email == f"{name}@localhost"))
    if bot is None or not db.session.scalar(sa.select(ProjectMember.id).filter_by(
            project_id=project.id, user_id=bot.id, role=ProjectRole.DEVELOPER)):
        return None
    db.session.execute(sa.delete(ProjectMember).where(ProjectMember.user_id == bot.id))
    return bot


def lifetime(run: PipelineRun) -> dt.timedelta:
    """The expiry backstop: the configured lifetime, or the longest task timeout of the run's pipeline."""
    longest = db.session.scalar(sa.select(sa.func.max(Task.timeout)).where(Task.pipeline_id == run.pipeline_id))
    return dt.timedelta(seconds=max(int(current_app.config["MYAPP_RUN_TOKEN_LIFETIME"]), longest or 0))


def issue(run: PipelineRun, now: dt.datetime) -> RunToken:
    """The run's token row, created on first call (idempotent: passes and restarted workers find it)."""
    row = db.session.scalar(sa.select(RunToken).where(RunToken.pipeline_run_id == run.id))
    if row is None:
        bot = ensure_bot(db.session.get(Project, run.project_id))
        row = RunToken(jti=str(uuid.uuid4()), project_id=run.project_id, pipeline_run_id=run.id, user_id=bot.id,
                       created_at=now, expires_at=now + lifetime(run))
        db.session.add(row)
        db.session.flush()
    return row


def _seconds(value: dt.datetime) -> int:
    return int((value if value.tzinfo else value.replace(tzinfo=dt.UTC)).timestamp())


KEPT_TOKENS = 4096  # signed tokens a process keeps (per app), emptied when full


def token_of(row: RunToken) -> str:
    """The row's JWT. Every claim comes from the row, so the same row always gives the same token:
    a re-put after a crash or by another worker hands the job the very token it may already hold.

    Being a function of the claims and the app's signing settings alone, it is signed once per process:
    the worker puts the run's Secret in every pass that submits an attempt mounting it, and signing
    (claims to JSON, HMAC, base64, through flask-jwt-extended) was a fifth of that step. The same bytes
    as signing again: nothing weaker, nothing longer-lived (the expiry is in the token; revocation is
    checked per request against the row)."""
    config = current_app.config
    key = (row.jti, row.user_id, row.created_at, row.expires_at, row.pipeline_run_id, row.project_id,
           config.get("JWT_SECRET_KEY"), config.get("SECRET_KEY"), config.get("JWT_ALGORITHM"))
    kept: dict[tuple[Any, ...], str] = current_app.extensions.setdefault("myapp_run_tokens", {})
    token = kept.get(key)
    if token is None:
        issued = _seconds(row.created_at)
        token = create_access_token(identity=str(row.user_id), expires_delta=False, additional_claims={
            "jti": row.jti, "iat": issued, "nbf": issued, "exp": _seconds(row.expires_at),
            "csrf": str(uuid.uuid5(uuid.UUID(row.jti), "csrf")),  # else random (cookie double-submit, unused here)
            ISSUED_CLAIM: issued, RUN_CLAIM: row.pipeline_run_id, PROJECT_CLAIM: row.project_id})
        if len(kept) >= KEPT_TOKENS:
            kept.clear()
        kept[key] = token
    return token


def secret_data(row: RunToken) -> dict[str, str]:
    """What the run's Secret holds (the key templates mount)."""
    return {API_TOKEN_KEY: token_of(row)}


def mounts_token(manifests: Iterable[dict[str, Any]], run_id: int) -> bool:
    """Does an attempt refer to its run's token Secret (rendering put the name there)?"""
    name = run_token_secret(run_id)

    def walk(node: Any) -> bool:
        if isinstance(node, dict):
            return any(walk(value) for value in node.values())
        if isinstance(node, list):
            return any(walk(value) for value in node)
        return node == name

    return walk(list(manifests))


def revoke(run_id: int, now: dt.datetime) -> bool:
    """Revoke the run's token (in the caller's transaction); True if there was one still valid."""
    result = db.session.execute(sa.update(RunToken).where(RunToken.pipeline_run_id == run_id,
                                                          RunToken.revoked_at.is_(None)).values(revoked_at=now))
    return bool(result.rowcount)


def release_candidates() -> list[int]:
    """Runs whose token Secrets may still exist though the run has ended (revoked, or finished by a
    path that did not revoke, e.g. a worker that died right after the commit)."""
    return list(db.session.scalars(
        sa.select(RunToken.pipeline_run_id).join(PipelineRun, PipelineRun.id == RunToken.pipeline_run_id)
        .where(RunToken.released_at.is_(None),
               sa.or_(RunToken.revoked_at.is_not(None), PipelineRun.state.in_(list(RUN_TERMINAL))))
        .order_by(RunToken.pipeline_run_id)))


def revocation(payload: dict[str, Any]) -> str | None:
    """Why a run token is no longer accepted, or None while its run is active."""
    run_id = payload[RUN_CLAIM]
    row = db.session.execute(
        sa.select(RunToken.revoked_at, RunToken.pipeline_run_id, RunToken.project_id, RunToken.user_id,
                  PipelineRun.state)
        .join(PipelineRun, PipelineRun.id == RunToken.pipeline_run_id).where(RunToken.jti == payload.get("jti"))
    ).first()
    if row is None:  # the run (or its project) was deleted
        return f"token revoked: run {run_id} no longer exists"
    if row.revoked_at is not None or row.state in RUN_TERMINAL:
        return f"token revoked: run {run_id} has finished"
    if (row.pipeline_run_id, row.project_id, str(row.user_id)) != (run_id, payload.get(PROJECT_CLAIM),
                                                                   payload.get("sub")):
        return "token revoked: it does not match its run"  # only a forged token could get here
    return None


def install(jwt: JWTManager) -> None:
    """Check every run token against its row on every request (one indexed query); other JWTs against
    their user's cut-off (myapp.auth.logins.token_revoked)."""

    @jwt.token_in_blocklist_loader
    def _revoked(_header: dict, payload: dict) -> bool:
        if RUN_CLAIM not in payload:  # a person's token: refused if issued before a password change
            from .logins import token_revoked

            g._myapp_token_revoked = token_revoked(payload)
            return g._myapp_token_revoked is not None
        g._myapp_token_revoked = revocation(payload)
        return g._myapp_token_revoked is not None

    @jwt.revoked_token_loader
    def _answer(_header: dict, _payload: dict):
        response = jsonify(message=f"Not authenticated: {g.pop('_myapp_token_revoked', None) or 'token revoked'}")
        response.status_code = 401
        return response
