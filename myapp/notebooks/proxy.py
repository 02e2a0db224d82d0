"""The notebook proxy: each notebook's own origin (`<notebook>.<project>.<domain>`) to its JupyterLab,
HTTP and websockets, routed by the request's Host (myapp/notebooks/origins.py).

An asyncio server (aiohttp) beside the web app (gunicorn's gthread workers cannot hold websockets
well), as Istio's gateway is on Kubernetes. The platform's session cookie never comes here (it is
host-only on the platform's host); a browser gets in by the platform's hand-off (myapp/notebooks/gate.py):
`/_myapp/handoff?code=...` is redeemed once with the platform (`POST <web>/api/v1/notebook/handoff`) for a
session cookie of this origin alone. Before every other request the proxy asks the platform, like an
ext-authz call: `GET <web>/api/v1/notebook/authz?host=&path=` with that session, proving itself with the
proxy key. 200 gives the notebook's upstream and Jupyter token (cached a few seconds per session and
host); a page load without a session is sent to the platform's hand-off, a refused one gets a page saying
why, an API call the status (401/403/404/409).

What reaches Jupyter: only paths under the Host's notebook's prefix (another notebook's path is 404 here),
never the platform's cookies, this origin's session or the caller's Authorization; the proxy adds
`Authorization: token <token>`, and Jupyter still checks XSRF and origins for these browser requests
(job-templates/notebook/jupyter_server_config.py). Requests from other origins stop here (403).

    python -m myapp.notebooks.proxy --web http://127.0.0.1:8080 --port 8081   (`myapp run` does this)
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import os
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web

from . import derived_proxy_key, notice, origins

PROXY_HEADER = "X-Myapp-Notebook-Proxy"
SESSION_HEADER = "X-Myapp-Notebook-Session"
WORKER_HEADER = "X-Myapp-Worker"  # the worker's own (it calls Jupyter directly): never from a browser
CACHE_SECONDS = 5.0
PLATFORM_COOKIES = frozenset({"session", "remember_token"})
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                        "transfer-encoding", "upgrade", "host", "content-length", "authorization", "cookie",
                        WORKER_HEADER.lower(), SESSION_HEADER.lower(), PROXY_HEADER.lower()})


@dataclass(frozen=True)
class Allowed:
    upstream: str
    token: str
    expires: float
    prefix: str = "/"


def redirect(location: str) -> web.Response:
    return web.Response(status=302, headers={"Location": location})


class NotebookProxy:
    def __init__(self, web_url: str, key: str, cache_seconds: float = CACHE_SECONDS,
                 platform_cookies: frozenset[str] = PLATFORM_COOKIES):
        self.web_url = web_url.rstrip("/")
        self.key = key
        self.cache_seconds = cache_seconds
        self.private_cookies = platform_cookies | frozenset(origins.COOKIES)
        self._cache: dict[str, Allowed] = {}
        self._session: aiohttp.ClientSession | None = None

    def app(self) -> web.Application:
        application = web.Application()
        application.router.add_route("*", "/{tail:.*}", self.handle)
        application.on_cleanup.append(self._close)
        return application

    async def _close(self, _app: web.Application) -> None:
        if self._session is not None:
            await self._session.close()

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            # No cookie jar: every upstream request carries only what this request brought.
            self._session = aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar(), auto_decompress=False,
                                                  timeout=aiohttp.ClientTimeout(total=None, sock_connect=10))
        return self._session

    # -- answers of our own ------------------------------------------------------------------------------
    @staticmethod
    def refuse(request: web.Request, status: int, message: str, link: str | None = None,
               link_text: str = "Go to Notebooks", title: str | None = None,
               stopped: tuple[str, str] | None = None) -> web.Response:
        """A page for a page load (a stopped or starting notebook: `stopped` is its (name, state); a used
        link, ...), JSON for an API call."""
        if not origins.is_navigation(request.method, request.headers):
            return web.json_response({"message": message}, status=status)
        text = notice.not_running(*stopped, message, link) if stopped else \
            notice.page(status, message, link, link_text, title)
        return web.Response(status=status, text=text, content_type="text/html", headers=notice.HEADERS)

    # -- the hand-off and the member check ------------------------------------------------------------------
    async def _platform(self, method: str, path: str, **kwargs: Any) -> tuple[int, dict[str, Any]]:
        headers = {PROXY_HEADER: self.key, **kwargs.pop("headers", {})}
        async with self.session.request(method, self.web_url + path, headers=headers, allow_redirects=False,
                                        **kwargs) as answer:
            try:
                data = await answer.json(content_type=None)
            except ValueError:
                data = {}
            return answer.status, data if isinstance(data, dict) else {}

    async def handoff(self, request: web.Request) -> web.StreamResponse:
        """The browser brings the platform's one-time code: redeemed once, it becomes this origin's cookie."""
        try:
            status, data = await self._platform("POST", "/api/v1/notebook/handoff",
                                                json={"code": request.query.get("code", ""), "host": request.host})
        except aiohttp.ClientError as exc:
            return self.refuse(request, 502, f"the platform cannot be asked: {exc}")
        if status != 200:
            return self.refuse(request, status if status in (400, 403, 404, 409) else 502,
                               str(data.get("message") or "this link cannot be used"), "/", "Open it again",
                               title="This link cannot be used")
        cookie = data["cookie"]
        response = redirect(str(data["next"]))
        response.headers.update({"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})
        # Host-only (no Domain): this origin alone ever sends it back.
        response.set_cookie(str(cookie["name"]), str(cookie["value"]), max_age=int(cookie["max_age"]), path="/",
                            httponly=True, secure=bool(cookie["secure"]), samesite="Lax")
        return response

    @staticmethod
    def _origin_session(request: web.Request) -> str:
        return next((request.cookies[name] for name in origins.COOKIES if name in request.cookies), "")

    def _who(self, request: web.Request) -> str:
        return hashlib.sha256(f"{self._origin_session(request)}\n{origins.hostname(request.host)}".encode()).hexdigest()

    async def authorize(self, request: web.Request) -> Allowed | web.StreamResponse:
        who = self._who(request)
        cached = self._cache.get(who)
        if cached is not None and cached.expires > time.monotonic():
            return cached
        query = urllib.parse.urlencode({"host": request.host, "path": request.path,
                                        "next": request.rel_url.raw_path_qs})
        try:
            status, data = await self._platform("GET", f"/api/v1/notebook/authz?{query}",
                                                headers={SESSION_HEADER: self._origin_session(request)})
        except aiohttp.ClientError as exc:
            return self.refuse(request, 502, f"the platform cannot be asked: {exc}")
        if status != 200:
            if status == 401 and data.get("open") and origins.is_navigation(request.method, request.headers):
                return redirect(str(data["open"]))  # through the platform's hand-off, and back here
            stopped = (str(data["name"]), str(data["state"])) if status == 409 and data.get("state") else None
            return self.refuse(request, status if status in (401, 403, 404, 409) else 502,
                               str(data.get("message") or "refused"), data.get("notebooks"), stopped=stopped)
        allowed = Allowed(str(data["upstream"]).rstrip("/"), str(data["token"]), time.monotonic() + self.cache_seconds,
                          str(data["prefix"]))
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[who] = allowed
        return allowed

    # -- forwarding -------------------------------------------------------------------------------------------
    def _headers(self, request: web.Request, allowed: Allowed) -> dict[str, str]:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP
                   and not k.lower().startswith("sec-websocket-")}
        cookies = [f"{k}={v}" for k, v in request.cookies.items() if k not in self.private_cookies]
        if cookies:
            headers["Cookie"] = "; ".join(cookies)
        headers["Authorization"] = f"token {allowed.token}"
        headers["Host"] = request.host  # Jupyter compares Origin with Host: the browser's, as it sent them
        headers["X-Forwarded-Proto"] = request.scheme
        return headers

    def _kept(self, name: str, value: str) -> bool:
        """An upstream header the browser may get: never a cookie for a wider domain (Jupyter's code is the
        project's: it must not set cookies other notebooks' origins would receive), nor one of ours."""
        if name.lower() in HOP_BY_HOP:
            return False
        if name.lower() != "set-cookie":
            return True
        cookie_name, _, attributes = value.partition(";")
        return cookie_name.split("=", 1)[0].strip() not in self.private_cookies and not any(
            part.strip().lower().startswith("domain") for part in attributes.split(";"))

    async def handle(self, request: web.Request) -> web.StreamResponse:
        if request.path == origins.HANDOFF_PATH:
            return await self.handoff(request)
        refused = origins.cross_origin(request.method, request.headers, request.host)
        if refused is not None:
            return web.json_response({"message": refused}, status=403)
        allowed = await self.authorize(request)
        if not isinstance(allowed, Allowed):
            return allowed
        if request.path == "/":
            return redirect(allowed.prefix + "lab")
        if not request.path.startswith(allowed.prefix):  # another notebook's path on this one's origin
            return self.refuse(request, 404, f"nothing at {request.path} on this notebook's address")
        target = allowed.upstream + request.rel_url.raw_path_qs
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return await self._websocket(request, allowed, target)
        try:
            return await self._http(request, allowed, target)
        except aiohttp.ClientConnectorError as exc:
            # Nothing listens there: the allowance may predate a stop. The platform says why (409
            # "stopped", 404 deleted); only when it still names this upstream is the notebook unreachable.
            self._cache.pop(self._who(request), None)
            again = await self.authorize(request)
            if not isinstance(again, Allowed):
                return again
            return self.refuse(request, 502, f"the notebook does not answer: {exc}")

    async def _http(self, request: web.Request, allowed: Allowed, target: str) -> web.StreamResponse:
        data = request.content if request.body_exists else None
        try:
            async with self.session.request(request.method, target, headers=self._headers(request, allowed),
                                            data=data, allow_redirects=False) as upstream:
                response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
                for name, value in upstream.headers.items():
                    if self._kept(name, value):
                        response.headers.add(name, value)
                await response.prepare(request)
                async for chunk in upstream.content.iter_any():
                    await response.write(chunk)
                await response.write_eof()
                return response
        except aiohttp.ClientConnectorError:
            raise  # not reached at all: handle() asks the platform again
        except aiohttp.ClientError as exc:
            return web.json_response({"message": f"the notebook does not answer: {exc}"}, status=502)

    async def _websocket(self, request: web.Request, allowed: Allowed, target: str) -> web.StreamResponse:
        protocols = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
        try:
            upstream = await self.session.ws_connect(target.replace("http", "ws", 1), protocols=protocols,
                                                     headers=self._headers(request, allowed), max_msg_size=0,
                                                     autoping=True)
        except (aiohttp.ClientError, aiohttp.WSServerHandshakeError) as exc:
            return web.json_response({"message": f"the notebook refused the websocket: {exc}"}, status=502)
        downstream = web.WebSocketResponse(protocols=[upstream.protocol] if upstream.protocol else (),
                                           max_msg_size=0, autoping=True)
        await downstream.prepare(request)

        async def pump(source: Any, sink: Any) -> None:
            async for message in source:
                if message.type == aiohttp.WSMsgType.TEXT:
                    await sink.send_str(message.data)
                elif message.type == aiohttp.WSMsgType.BINARY:
                    await sink.send_bytes(message.data)
                else:
                    break
            await sink.close()

        tasks = [asyncio.create_task(pump(upstream, downstream)), asyncio.create_task(pump(downstream, upstream))]
        _done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        await upstream.close()
        return downstream


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--web", required=True, help="the web app's address, e.g. http://127.0.0.1:8080")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8081)
    args = parser.parse_args(argv)
    key = os.environ.get("MYAPP_NOTEBOOK_PROXY_KEY") or (
        derived_proxy_key(os.environ["SECRET_KEY"]) if os.environ.get("SECRET_KEY") else None)
    if not key:
        raise SystemExit("neither MYAPP_NOTEBOOK_PROXY_KEY nor SECRET_KEY is set (`myapp run` sets the first for "
                         "the web app and the proxy; docker compose gives both the second)")
    web.run_app(NotebookProxy(args.web, key).app(), host=args.host, port=args.port, print=None)


if __name__ == "__main__":
    main()
