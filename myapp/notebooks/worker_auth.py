"""The worker's credential for reaching a notebook on Kubernetes past its AuthorizationPolicy.

Istio's ext-authz check (`myapp/web/notebook_extauthz.py`) admits browsers by their session cookie; the
worker (a snapshot build reading a notebook's packages, activity polling) has no session. It sends
`HEADER: <expiry>.<hmac>` instead: an HMAC of the notebook's project, name and expiry under a key derived
from SECRET_KEY (HKDF, its own purpose), so it opens this notebook only, for minutes only, and only the
platform can make one. The check adds the Jupyter token upstream, as it does for members, and admits it
only on the kernel and terminal paths of Jupyter's API (`WORKER_PATHS`).
"""
from __future__ import annotations

import hashlib
import hmac
import re
import time

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from flask import current_app

HEADER = "X-Myapp-Worker"
LIFETIME = 300  # seconds; a credential claiming to live longer is refused
# Under the notebook's prefix: the kernels (start one, its websocket, stop it) and the terminals list.
WORKER_PATHS = re.compile(r"api/kernels(/[0-9a-f-]{1,64}(/channels)?)?|api/terminals")


def _key() -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=b"myapp/notebook-worker").derive(
        current_app.config["SECRET_KEY"].encode())


def _mac(project: str, name: str, expires: int) -> str:
    return hmac.new(_key(), f"{project}/{name}/{expires}".encode(), hashlib.sha256).hexdigest()


def credential(project: str, name: str, now: float | None = None) -> str:
    expires = int(now if now is not None else time.time()) + LIFETIME
    return f"{expires}.{_mac(project, name, expires)}"


def valid(value: str, project: str, name: str, now: float | None = None) -> bool:
    """Whether `value` is a live credential of notebook `project/name`."""
    expires, _, mac = value.partition(".")
    if not expires.isdigit() or len(expires) > 12:
        return False
    now = now if now is not None else time.time()
    if not now <= int(expires) <= now + LIFETIME:
        return False
    return hmac.compare_digest(mac, _mac(project, name, int(expires)))
