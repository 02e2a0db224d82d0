"""What Python packages a running notebook has installed, asked of its own kernel (a snapshot build on
Kubernetes, `myapp/images/drive.py`).

The worker starts a kernel through the notebook's Service (past its AuthorizationPolicy with
`worker_auth.credential`), runs `SNIPPET` (fixed platform code, never user input) that prints the
kernel's `importlib.metadata` distributions as JSON between markers, then stops the kernel. That is what
the notebook's Python really has (the image's packages and whatever was pip-installed since, in the
environment or under ~/.local), which no file or API of Jupyter lists. The answer is the notebook's own
(its user's code could print anything): it is bounded in time and size and parsed strictly, and what it
names only becomes a package list the build pins; it never runs here.
"""
from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

import aiohttp

MARK = "--myapp-packages--"
SNIPPET = (
    "import importlib.metadata as _m, json as _j\n"
    f"print({MARK!r} + _j.dumps(sorted({{(d.metadata['Name'] or '', d.version or '') "
    f"for d in _m.distributions()}})) + {MARK!r})\n"
)
MAX_BYTES = 4 * 1024 * 1024  # what the kernel may print; a larger answer is refused


class SnapshotError(Exception):
    """The notebook's packages could not be read; the message says why."""


def installed(base: str, headers: dict[str, str], timeout: float = 120.0) -> list[tuple[str, str]]:
    """(name, version) of every distribution the notebook's kernel sees. `base` is the notebook's URL
    prefix (ending in /), `headers` what admits the worker. SnapshotError when it does not answer in time."""
    try:
        return asyncio.run(asyncio.wait_for(_installed(base, headers), timeout))
    except TimeoutError as exc:
        raise SnapshotError(f"the notebook did not answer within {timeout:g} s") from exc
    except aiohttp.ClientError as exc:
        raise SnapshotError(f"the notebook did not answer: {type(exc).__name__}: {exc}") from exc


async def _installed(base: str, headers: dict[str, str]) -> list[tuple[str, str]]:
    async with aiohttp.ClientSession(headers=headers) as session:
        async with session.post(f"{base}api/kernels", json={}) as answer:
            if answer.status != 201:
                raise SnapshotError(f"the notebook refused to start a kernel: HTTP {answer.status} "
                                    f"{(await answer.text())[:200]}")
            kernel = (await answer.json()).get("id")
            if not isinstance(kernel, str) or not kernel:
                raise SnapshotError("the notebook started no kernel (its answer names none)")
        try:
            return _parse(await _run(session, f"{base.replace('http', 'ws', 1)}api/kernels/{kernel}/channels"))
        finally:  # the kernel is the platform's, for this question only
            async with session.delete(f"{base}api/kernels/{kernel}"):
                pass


async def _run(session: aiohttp.ClientSession, url: str) -> str:
    """SNIPPET's standard output, from an execute request on the kernel's websocket."""
    msg_id = uuid.uuid4().hex
    out: list[str] = []
    size = 0
    async with session.ws_connect(url, max_msg_size=MAX_BYTES) as ws:
        await ws.send_str(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": "myapp", "session": msg_id,
                       "version": "5.3", "date": ""},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": SNIPPET, "silent": False, "store_history": False, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True}}))
        async for message in ws:
            if message.type != aiohttp.WSMsgType.TEXT:
                continue
            data: dict[str, Any] = json.loads(message.data)
            if (data.get("parent_header") or {}).get("msg_id") != msg_id:
                continue
            kind, content = data.get("msg_type"), data.get("content") or {}
            if kind == "stream" and content.get("name") == "stdout":
                size += len(content.get("text", ""))
                if size > MAX_BYTES:
                    raise SnapshotError(f"the notebook's package list is larger than {MAX_BYTES} bytes")
                out.append(content.get("text", ""))
            elif kind == "error":
                raise SnapshotError(f"listing the packages failed in the notebook: {content.get('ename')}: "
                                    f"{content.get('evalue')}")
            elif kind == "status" and content.get("execution_state") == "idle":
                break
    return "".join(out)


def _parse(text: str) -> list[tuple[str, str]]:
    _, found, rest = text.partition(MARK)
    body, closed, _ = rest.partition(MARK)
    try:
        pairs = json.loads(body) if found and closed else None
    except ValueError:
        pairs = None
    if not isinstance(pairs, list) or not all(
            isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in pairs):
        raise SnapshotError("the notebook's kernel did not print a package list")
    return [(name, version) for name, version in pairs]
