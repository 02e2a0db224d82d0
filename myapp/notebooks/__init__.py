"""Notebooks: JupyterLab per notebook, its lifecycle, the member-only proxy and idle culling.

`states.py` (the states and the intent the API records; no backend), `lifecycle.py` (what a worker
does: render, token Secret, submit, poll, stop, delete), `activity.py` (what a start waits for: its
image's build, its project's quota; idle culling from Jupyter's own activity), `origins.py` (each
notebook's own origin, `<notebook>.<project>.<domain>`), `gate.py` (who may open one, and the one-time
hand-off into it), `proxy.py` (the asyncio reverse proxy `myapp run` starts beside the web app, routed by
Host), `notice.py` (the page an origin answers when it cannot serve). See docs/notebooks.md.
"""
from __future__ import annotations

import hashlib
import hmac


def derived_proxy_key(secret_key: str) -> str:
    """The key the notebook proxy proves itself with when none is given (MYAPP_NOTEBOOK_PROXY_KEY):
    derived from the platform's SECRET_KEY, so a proxy started apart from `myapp run` (docker compose)
    and the web agree without another secret."""
    return hmac.new(secret_key.encode(), b"myapp-notebook-proxy", hashlib.sha256).hexdigest()
