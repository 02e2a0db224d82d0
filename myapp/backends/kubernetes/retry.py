"""Retries with bounded exponential backoff and jitter, and API errors turned into reasons.

Retried: 429 (at least Retry-After), 5xx, timeouts and connection errors. Everything else
fails at once. When the budget is spent the last error is raised as KubeApiError, a
BackendError that keeps the HTTP status so callers can still tell 404 / 409 apart.
"""
from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import pydantic
import urllib3
from kubernetes.client.exceptions import ApiException

from ..base import BackendError

T = TypeVar("T")


class KubeApiError(BackendError):
    """An API call failed: ``status`` is the HTTP code (None for transport errors)."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class RetryPolicy:
    attempts: int = 6  # tries per call, the first one included
    base_delay: float = 0.5  # seconds before the 2nd try; doubles each time
    max_delay: float = 10.0  # cap of one backoff step
    jitter: float = 0.2  # +-20% randomisation of each step
    max_retry_after: float = 60.0  # cap on a server's Retry-After
    connect_timeout: float = 5.0
    read_timeout: float = 30.0

    @property
    def request_timeout(self) -> tuple[float, float]:
        return self.connect_timeout, self.read_timeout

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("RetryPolicy.attempts must be >= 1")

    def delay(self, retry: int, retry_after: float | None = None,
              rand: Callable[[], float] = random.random) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        step = min(self.max_delay, self.base_delay * (2 ** retry))
        step *= 1 + self.jitter * (2 * rand() - 1)
        if retry_after is not None:
            step = max(step, min(retry_after, self.max_retry_after))
        return max(0.0, step)


def _status_body(exc: ApiException) -> dict[str, Any]:
    try:
        body = json.loads(exc.body) if exc.body else {}
    except (TypeError, ValueError):
        return {}
    return body if isinstance(body, dict) else {}


def describe(exc: BaseException) -> str:
    """A one-line reason: the Status message (with its field causes) or the transport error."""
    if isinstance(exc, ApiException):
        body = _status_body(exc)
        message = body.get("message") or (exc.body or "").strip()[:500] or str(exc.reason or "")
        causes = (body.get("details") or {}).get("causes") or []
        extra = [f"{c.get('field')}: {c.get('message')}" for c in causes
                 if c.get("field") and c.get("field") not in message]
        reason = body.get("reason") or exc.reason or ""
        text = f"{exc.status} {reason}: {message}".strip()
        return "; ".join([text, *extra])
    if isinstance(exc, pydantic.ValidationError):
        errors = [f"{'.'.join(str(p) for p in e['loc'] if p != 'body')}: {e['msg']}" for e in exc.errors()]
        return "invalid manifest (client-side schema): " + "; ".join(errors[:5])
    if isinstance(exc, BackendError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def retry_after(exc: BaseException) -> float | None:
    """Seconds from a Retry-After header (or an error's own ``retry_after``), else None."""
    own = getattr(exc, "retry_after", None)
    if isinstance(own, (int, float)):
        return float(own)
    headers = getattr(exc, "headers", None) or {}
    value = headers.get("Retry-After") if hasattr(headers, "get") else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, ApiException):
        return exc.status == 429 or (isinstance(exc.status, int) and exc.status >= 500)
    return isinstance(exc, (urllib3.exceptions.HTTPError, ConnectionError, TimeoutError))


API_ERRORS = (ApiException, urllib3.exceptions.HTTPError, ConnectionError, TimeoutError, pydantic.ValidationError)


def call(what: str, fn: Callable[[], T], policy: RetryPolicy, sleep: Callable[[float], None], *,
         errors: tuple[type[BaseException], ...] = API_ERRORS,
         retryable: Callable[[BaseException], bool] = is_retryable) -> T:
    """Run ``fn`` under ``policy``; raise KubeApiError("<what>: <reason>") when it fails for good."""
    for attempt in range(policy.attempts):
        try:
            return fn()
        except errors as exc:
            status = getattr(exc, "status", None)
            status = status if isinstance(status, int) else None
            if not retryable(exc):
                raise KubeApiError(f"{what}: {describe(exc)}", status) from exc
            if attempt + 1 >= policy.attempts:
                raise KubeApiError(f"{what}: {describe(exc)} (gave up after {policy.attempts} attempts)",
                                   status) from exc
            sleep(policy.delay(attempt, retry_after(exc)))
    raise AssertionError("unreachable")  # pragma: no cover
