"""Who may do what.

Two layers, both on the server: FAB role permissions per API (admins alone hold the
admin-only APIs), and project membership per object (see myapp.api.scope).
"""
from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

from flask import Flask, g, request
from flask_appbuilder.security.sqla.manager import SecurityManager
from flask_jwt_extended import JWTManager, get_current_user, get_jwt, verify_jwt_in_request, view_decorators

from .callers import caller, is_kept
from .callers import install as install_callers
from .claims import ISSUED_CLAIM, RUN_CLAIM
from .logins import PostLogoutAuthDBView, install, record_attempt, session_valid

ADMIN_ROLE = "Admin"
USER_ROLE = "User"

# APIs whose objects belong to projects: every signed-in user may call them; the
# project scope then decides per object. Catalog APIs are readable by every user.
PROJECT_RESOURCES = (
    "Project", "Pipeline", "Task", "Edge", "PipelineRun", "TaskRun", "Experiment", "Trial", "Notebook",
    "ModelVersion", "InferenceService", "ImageBuild", "Me",
)
CATALOG_RESOURCES = ("JobTemplate", "Image", "ResourceGroup")


def run_claims() -> dict[str, Any] | None:
    """The claims of this request's JWT when it is a run token (verified: signature, expiry and
    myapp.auth.run_tokens' revocation check), else None (a person's token, a session cookie, no auth)."""
    try:
        claims = get_jwt()
    except RuntimeError:  # no JWT verified in this request
        return None
    return claims if RUN_CLAIM in claims else None


def builtin_roles() -> dict[str, list[list[str]]]:
    """FAB builtin role: regexes of (view, permission) granted to every platform user."""
    project = "^(" + "|".join(PROJECT_RESOURCES) + ")$"
    catalog = "^(" + "|".join(CATALOG_RESOURCES) + ")$"
    return {
        USER_ROLE: [
            [project, "^can_(read|write)$"],
            [catalog, "^can_read$"],
            ["^OpenApi$", "^can_get$"],
        ]
    }


BEARER_VERIFIED = "_myapp_bearer_verified"
REFRESH_PATH = "/api/v1/security/refresh"  # FAB verifies its refresh token itself


def bearer_only() -> None:
    """A request with `Authorization: Bearer ...` is authenticated by that token alone: verified here
    (a bad or dummy one is 401 through flask-jwt-extended's handlers) and its user replaces whatever
    the session cookie says, so a dummy header can never ride on a cookie session (and skip CSRF)."""
    if request.headers.get("Authorization", "")[:7].lower() != "bearer " or request.path == REFRESH_PATH:
        return
    if verify_jwt_in_request() is None:  # OPTIONS (JWT_EXEMPT_METHODS): nothing verified, nothing to load
        return
    g._login_user = get_current_user()  # what flask_login.current_user answers: the cookie is not read
    setattr(g, BEARER_VERIFIED, True)


VERIFIED_TOKENS_KEPT = 4096  # per process; beyond, the kept ones are dropped and verified again


def keep_verified_tokens(manager: JWTManager) -> None:
    """flask-jwt-extended parses a token three times per request (claims, header, then the verified
    decode): a signature and its claims verified once are the same on the next request with the same
    token, so the result is kept and used again while the token has not expired (an expired one goes
    through the verification again, which refuses it). Revocation is not kept: the blocklist check
    (myapp.auth.run_tokens, myapp.auth.logins) runs on every request."""
    verify = manager._decode_jwt_from_config
    kept: dict[tuple[str, Any, bool], dict[str, Any]] = {}

    def decode(encoded_token: str, csrf_value: Any = None, allow_expired: bool = False) -> dict[str, Any]:
        key = (encoded_token, csrf_value, allow_expired)
        claims = kept.get(key)
        if claims is None or (not allow_expired and "exp" in claims and claims["exp"] <= time.time()):
            claims = verify(encoded_token, csrf_value, allow_expired)
            if len(kept) >= VERIFIED_TOKENS_KEPT:
                kept.clear()
            kept[key] = claims
        return dict(claims)

    manager._decode_jwt_from_config = decode  # type: ignore[method-assign]

    # ... and then parses the verified token's header once more, for the blocklist and freshness checks
    # (kept the same way; a module function, replaced once per process however many apps it makes).
    parse_header = view_decorators.get_unverified_jwt_headers
    if getattr(parse_header, "keeps_headers", False):
        return
    headers: dict[str, dict[str, Any]] = {}

    def header(encoded_token: str) -> dict[str, Any]:
        found = headers.get(encoded_token)
        if found is None:
            found = parse_header(encoded_token)
            if len(headers) >= VERIFIED_TOKENS_KEPT:
                headers.clear()
            headers[encoded_token] = found
        return dict(found)

    header.keeps_headers = True  # type: ignore[attr-defined]
    view_decorators.get_unverified_jwt_headers = header


def install_request_auth(app: Flask) -> None:
    """First before-request hooks: the Bearer rule, then login limits (myapp.auth.logins)."""
    install(app)
    install_callers()  # the signed-in user and their cut-off, kept per process while unchanged (myapp.auth.callers)
    app.before_request_funcs.setdefault(None, []).insert(0, bearer_only)
    manager = app.extensions["flask-jwt-extended"]
    manager.additional_claims_loader(lambda _identity: {ISSUED_CLAIM: time.time()})
    keep_verified_tokens(manager)


class PlatformSecurityManager(SecurityManager):
    authdbview = PostLogoutAuthDBView  # FAB's form login; its logout only by POST with the CSRF token
    _builtin_answers: dict[tuple[str, str, str], bool]

    def __init__(self, appbuilder) -> None:
        self._builtin_answers = {}
        super().__init__(appbuilder)

    def register_views(self) -> None:
        """Only the token login API (scripts) and the form login with its POST logout. Users, roles, passwords
        and profiles are the users API's and the UI's, where the password policy holds and a reset ends every
        session and token; FAB's own pages for them (/users/, /roles/, /resetmypassword/, ...) were a second way
        around both, rendered with a navbar whose logout link is a GET."""
        self.appbuilder.add_api(self.security_api)
        self.auth_view = self.authdbview()
        self.appbuilder.add_view_no_menu(self.auth_view)
        if self.is_auth_limited:  # after add_view: the blueprint exists only then
            self.limiter.limit(self.auth_rate_limit, methods=["POST"])(self.auth_view.blueprint)

    def is_admin(self, user) -> bool:
        return bool(user) and any(role.name == ADMIN_ROLE for role in user.roles)

    def has_access(self, permission_name: str, view_name: str) -> bool:
        """A run token acts as a plain platform user, whatever roles its identity has: never an
        admin API (its project scope is myapp.api.scope's)."""
        if run_claims() is not None:
            return self._has_access_builtin_roles(SimpleNamespace(name=USER_ROLE), permission_name, view_name)
        return super().has_access(permission_name, view_name)

    def _has_access_builtin_roles(self, role, permission_name: str, view_name: str) -> bool:
        """FAB matches the built-in role's regexes on every call; they come from the app's config, fixed
        for the process, so each answer is kept (a few hundred (role, permission, view) triples at most)."""
        key = (role.name, permission_name, view_name)
        found = self._builtin_answers.get(key)
        if found is None:
            found = self._builtin_answers[key] = super()._has_access_builtin_roles(role, permission_name, view_name)
        return found

    def load_user(self, pk):
        """The cookie session's user (Flask-Login's loader): an active user, only while the session id
        the cookie carries is live (myapp.auth.logins), so a cookie copied before logout is refused."""
        found = caller(int(pk))
        user = found.user if found is not None and found.user.is_active else None
        return user if user is not None and session_valid(user.id) else None

    def load_user_jwt(self, _jwt_header, jwt_data):
        """A person's token: an active user (revocation is myapp.auth.run_tokens' blocklist check). A
        project's bot is inactive (it signs in with nothing, and tokens of its own are refused): only
        its runs' tokens act as it, once checked not revoked."""
        found = caller(int(jwt_data["sub"]))
        user = found.user if found is not None else None
        if user is None or (RUN_CLAIM not in jwt_data and not user.is_active):
            return None
        g.user = user
        return user

    def auth_user_db(self, username, password):
        """FAB's password check, counted for the sign-in limits (myapp.auth.login_limits; the before-request
        hook has already refused an attempt beyond them)."""
        user = super().auth_user_db(username, password)
        if isinstance(username, str) and username.strip() and not record_attempt(username.strip(), user):
            return None  # not counted (SQLite locked throughout): no sign-in, answered 503 (busy_login)
        return user

    def is_item_public(self, permission_name: str, view_name: str) -> bool:
        """Nothing protected is public here: anonymous callers get 401, never a Public-role grant.

        FAB would look up the Public role's permissions (2 queries) twice on every API call.
        """
        return False

    def _get_safe_user(self, user):
        """FAB loads a detached user again before checking its permissions; the caller's snapshot is
        detached on purpose and complete (myapp.auth.callers)."""
        return user if is_kept(user) else super()._get_safe_user(user)

    def get_user_by_id(self, pk):
        """The user with roles and groups in one query: every request checks them."""
        from sqlalchemy.orm import joinedload

        return self.session.get(self.user_model, pk,
                                options=[joinedload(self.user_model.roles), joinedload(self.user_model.groups)])
