"""The one way an API route is declared: auth, CSRF, one transaction, JSON errors, OpenAPI data.

SQLite lets one writer at a time; a write that waited its busy_timeout out fails with "database is
locked". Such a request is run again from the start, a few times with a growing pause: it has sent
nothing yet, its transaction is rolled back, and what a route does outside the transaction waits for the
commit (``on_commit``) or is undone with it (``on_rollback``). Still locked after that: 503 with
Retry-After, never a 500.
"""
from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

from flask import g, request
from flask_appbuilder.api import expose
from flask_appbuilder.security.decorators import protect
from flask_wtf.csrf import CSRFError
from marshmallow import ValidationError
from sqlalchemy.exc import IntegrityError, OperationalError

from ..auth.security import BEARER_VERIFIED
from ..errors import DomainError
from ..extensions import LOCKED_TRIES, csrf, database_locked, db, pause_after_lock
from ..inputs.plain_data import MAX_DEPTH, NonFinite, problem
from .errors import ApiError, domain_error, validation_error

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def on_commit(callback: Callable[[], None]) -> None:
    """Run callback after this request's transaction commits (e.g. drop a cache entry):
    dropping it before commit would let a concurrent request cache the old rows again."""
    g.setdefault("_myapp_on_commit", []).append(callback)


def on_rollback(callback: Callable[[], None]) -> None:
    """Run callback if this request's transaction does not commit (an error, or a run again while the
    database is locked): undo what the route did outside it, e.g. a file it wrote."""
    g.setdefault("_myapp_on_rollback", []).append(callback)


LOCKED_RETRY_AFTER = 2  # seconds a client is told to wait when every run found it locked


def _rolled_back() -> None:
    db.session.rollback()
    g.pop("_myapp_on_commit", None)
    for callback in reversed(g.pop("_myapp_on_rollback", [])):
        callback()


def busy_response() -> Any:
    response = ApiError("The database is busy with other writes: try again", status=503).response()
    response.headers["Retry-After"] = str(LOCKED_RETRY_AFTER)
    return response


def check_csrf() -> None:
    """Browser sessions must send the CSRF token; bearer-token clients cannot be forged cross-site.
    Only a Bearer token verified for this request (myapp.auth.security.bearer_only, which then ignores the
    cookie) skips the check: a dummy header next to a session cookie is a 401, never a bypass."""
    if request.method in SAFE_METHODS or g.get(BEARER_VERIFIED):
        return
    csrf.protect()


def _invalid(field: str, reason: str) -> ApiError:
    return ApiError(f"Invalid input: {field}: {reason}", [{"field": field, "reason": reason}])


def json_body() -> dict[str, Any]:
    """The request's JSON object, or a 400 naming the field: NaN/Infinity, integers beyond 64 bits,
    lone surrogates and nesting deeper than plain_data.MAX_DEPTH are refused here, before any schema
    or database sees them. A body over MAX_CONTENT_LENGTH is 413 (request.get_data raises it)."""
    raw = request.get_data(cache=True)
    if not raw:
        raise _invalid("body", "a JSON object is required")
    try:
        data = json.loads(raw, parse_constant=NonFinite)
    except RecursionError:
        raise _invalid("body", f"is nested deeper than {MAX_DEPTH} levels") from None
    except ValueError:  # JSONDecodeError, bad UTF-8, an integer of more than 4300 digits
        raise _invalid("body", "is not valid JSON") from None
    if not isinstance(data, dict):
        raise _invalid("body", "must be a JSON object")
    found = problem(data)
    if found is not None:
        raise _invalid(*found)
    return data


def route(
    url: str,
    methods: tuple[str, ...] = ("GET",),
    permission: str = "read",
    summary: str = "",
    body: Any = None,
    status: int = 200,
    query: dict[str, str] | None = None,
    response: Any = None,
    media_type: str = "application/json",
    answers: dict[str, Any] | None = None,
) -> Callable:
    """Declare an API route.

    permission: the FAB permission ("read" or "write") checked against the caller's roles;
    body: "schema" / "schema-partial" (the API's own schema) or a Schema class, for OpenAPI;
    response: what a success answers, for OpenAPI (and the UI's generated types): "model" (the API's
    object), "page" (a page of them), a Schema class or a JSON-schema dict (myapp/api/responses.py);
    media_type: of that answer ("text/event-stream" for server-sent events);
    answers: other successful answers, by status, as OpenAPI response objects (e.g. a 202).
    """

    def wrap(f: Callable) -> Callable:
        def run(self: Any, kwargs: dict[str, Any]) -> Any:
            try:
                check_csrf()
                response = f(self, **kwargs)
                if request.method in SAFE_METHODS:
                    db.session.rollback()  # reads wrote nothing; ending them is cheaper than a commit
                else:
                    db.session.commit()
                    g.pop("_myapp_on_rollback", None)
                    for callback in g.pop("_myapp_on_commit", []):
                        callback()
                return response
            except ApiError as exc:
                _rolled_back()
                return exc.response()
            except DomainError as exc:
                _rolled_back()
                return domain_error(exc).response()
            except ValidationError as exc:
                _rolled_back()
                return validation_error(exc).response()
            except CSRFError as exc:
                _rolled_back()
                return ApiError(f"CSRF check failed: {exc.description}", status=400).response()
            except IntegrityError as exc:
                _rolled_back()
                detail = str(exc.orig).splitlines()[0] if exc.orig else "constraint violated"
                return ApiError(f"Conflicts with stored data: {detail}", status=409).response()
            except BaseException:
                _rolled_back()
                raise

        @functools.wraps(f)
        def handler(self, **kwargs: Any):
            for tries in range(1, LOCKED_TRIES + 1):
                try:
                    return run(self, kwargs)
                except OperationalError as exc:
                    if not database_locked(exc):
                        raise
                if tries < LOCKED_TRIES:
                    pause_after_lock(tries)
            return busy_response()

        # FAB reads _permission_name; add_api_spec reads _spec (attributes on the view function).
        setattr(handler, "_permission_name", permission)  # noqa: B010
        setattr(handler, "_spec", {"summary": summary or f.__doc__ or f.__name__, "body": body,  # noqa: B010
                                   "status": status, "query": query or {}, "permission": permission,
                                   "response": response, "media_type": media_type,
                                   "answers": answers or {}})
        return expose(url, methods)(protect(allow_browser_login=True)(handler))

    return wrap
