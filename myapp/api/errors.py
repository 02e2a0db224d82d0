"""API errors: JSON bodies that name the field and the reason."""
from __future__ import annotations

from typing import Any

from flask import Flask, Response, jsonify, request
from marshmallow import ValidationError
from werkzeug.exceptions import HTTPException

from ..errors import DomainError, Kind, flatten_messages


class ApiError(Exception):
    status = 400

    def __init__(self, message: str, errors: list[dict[str, str]] | None = None, status: int | None = None):
        super().__init__(message)
        self.message = message
        self.errors = errors or []
        if status is not None:
            self.status = status

    def response(self) -> Response:
        body: dict[str, Any] = {"message": self.message}
        if self.errors:
            body["errors"] = self.errors
        resp = jsonify(body)
        resp.status_code = self.status
        return resp


class FieldError(ApiError):
    """One bad field: 400 with {"field", "reason"}."""

    def __init__(self, field: str, reason: str, status: int = 400):
        super().__init__(f"{field}: {reason}", [{"field": field, "reason": reason}], status)


class NotFound(ApiError):
    status = 404

    def __init__(self, resource: str, ident: Any):
        super().__init__(f"{resource} {ident} not found")


class Forbidden(ApiError):
    status = 403


def validation_error(err: ValidationError) -> ApiError:
    errors = flatten_messages(err.messages)
    message = "; ".join(f"{e['field']}: {e['reason']}" for e in errors)
    return ApiError(f"Invalid input: {message}", errors)


# How each kind of domain error answers over HTTP: the one place the two meet.
STATUS_OF_KIND: dict[Kind, int] = {Kind.INVALID: 400, Kind.NOT_FOUND: 404, Kind.CONFLICT: 409, Kind.TOO_LARGE: 413,
                                   Kind.UNPROCESSABLE: 422, Kind.UNAVAILABLE: 503}


def domain_error(exc: DomainError) -> ApiError:
    return ApiError(exc.message, exc.errors, STATUS_OF_KIND[exc.kind])


def register_error_handlers(app: Flask) -> None:
    """Outside the API routes (unknown URL, wrong method, bad JWT) still answer JSON under /api/."""

    @app.errorhandler(ApiError)
    def _api_error(exc: ApiError):
        return exc.response()

    @app.errorhandler(DomainError)
    def _domain_error(exc: DomainError):
        return domain_error(exc).response()

    @app.errorhandler(HTTPException)
    def _http_error(exc: HTTPException):
        if not request.path.startswith("/api/"):
            return exc
        return ApiError(exc.description or exc.name, status=exc.code).response()

    jwt = app.extensions.get("flask-jwt-extended")
    if jwt is not None:
        def _jwt_error(reason: str) -> Response:
            return ApiError(f"Not authenticated: {reason}", status=401).response()

        jwt.unauthorized_loader(_jwt_error)
        jwt.invalid_token_loader(_jwt_error)
        jwt.expired_token_loader(lambda _h, _p: _jwt_error("token expired"))
        # FAB's user loader refuses deactivated (and deleted) users: their tokens stop working at once.
        jwt.user_lookup_error_loader(lambda _h, _p: _jwt_error("the token's user is deactivated or gone"))
