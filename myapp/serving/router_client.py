"""Talking to a service's local router: its token (derived from the secret key, never stored) and
HTTP calls with kept-alive connections (the web's proxy and figures, the worker's config pushes)."""
from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

import urllib3

TOKEN_HEADER = "X-Router-Token"
_pool = urllib3.PoolManager(num_pools=64, maxsize=32, retries=False)


class RouterUnavailable(RuntimeError):
    """The router did not answer (not started yet, stopped, restarting)."""


def router_token(secret_key: str | bytes, service_id: int) -> str:
    key = secret_key.encode() if isinstance(secret_key, str) else secret_key
    return hmac.new(key, f"serving-router:{service_id}".encode(), hashlib.sha256).hexdigest()


def forward(url: str, token: str, method: str, path: str, body: bytes, headers: dict[str, str],
            timeout: float = 60.0) -> urllib3.BaseHTTPResponse:
    try:
        return _pool.request(method, url.rstrip("/") + path, body=body or None,
                             headers={**headers, TOKEN_HEADER: token}, timeout=timeout, redirect=False)
    except urllib3.exceptions.HTTPError as exc:
        raise RouterUnavailable(f"the service's router at {url} did not answer: {exc}") from exc


def control(url: str, token: str, method: str, path: str, data: Any = None, timeout: float = 5.0) -> Any:
    """A JSON call to the router's /_router/ endpoints."""
    body = json.dumps(data).encode() if data is not None else b""
    response = forward(url, token, method, path, body, {"Content-Type": "application/json"}, timeout)
    if response.status != 200:
        raise RouterUnavailable(f"the router answered {response.status}: {response.data[:200]!r}")
    return json.loads(response.data)
