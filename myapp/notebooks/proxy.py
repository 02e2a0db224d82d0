"""The notebook proxy: `/notebook/<project>/<name>/...` to the notebook's JupyterLab, HTTP and websockets.

An asyncio server (aiohttp) beside the web app (gunicorn's gthread workers cannot hold websockets
well), as Istio's gateway is on Kubernetes. Before every request it asks the platform, like an
ext-authz call: `GET <web>/api/v1/notebook/authz?path=...` with the caller's cookies and
Authorization header, proving itself with the proxy key. The platform answers 200 with the
notebook's upstream address and Jupyter token (the caller is a developer of its project and it
runs) or 401/403/404/409, which the proxy passes on: a non-member never reaches Jupyter. Allowed
answers are cached for a few seconds per caller and notebook. The platform's own cookies and the
caller's Authorization never reach Jupyter; the proxy adds `Authorization: token <token>`.

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

from . import derived_proxy_key

PROXY_HEADER = "X-Myapp-Notebook-Proxy"
CACHE_SECONDS = 5.0
PLATFORM_COOKIES = frozenset({"session", "remember_token"})
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                        "transfer-encoding", "upgrade", "host", "content-length", "authorization", "cookie"})


@dataclass(frozen=True)
class Allowed:
    upstream: str
    token: str
    expires: float


class NotebookProxy:
    def __init__(self, web_url: str, key: str, cache_seconds: float = CACHE_SECONDS,
                 platform_cookies: frozenset[str] = PLATFORM_COOKIES):
        self.web_url = web_url.rstrip("/")
        self.key = key
        self.cache_seconds = cache_seconds
        self.platform_cookies = platform_cookies
        self._cache: dict[str, Allowed] = {}
        self._session: aiohttp.ClientSession | None = None

    def app(self) -> web.Application:
        application = web.Application()
        application.router.add_route("*", "/notebook/{tail:.*}", self.handle)
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

    # -- the member check -------------------------------------------------------------------------------
    @staticmethod
    def _who(request: web.Request) -> str:
        parts = request.path.split("/", 4)  # "", "notebook", project, name, rest
        prefix = "/".join(parts[:4]) + "/"
        return hashlib.sha256("\n".join((request.headers.get("Cookie", ""), request.headers.get("Authorization", ""),
                                         prefix)).encode()).hexdigest()

    async def authorize(self, request: web.Request) -> Allowed | web.Response:
        path = request.path
        who = self._who(request)
        cached = self._cache.get(who)
        if cached is not None and cached.expires > time.monotonic():
            return cached
        headers = {PROXY_HEADER: self.key}
        for name in ("Cookie", "Authorization"):
            if name in request.headers:
                headers[name] = request.headers[name]
        url = f"{self.web_url}/api/v1/notebook/authz?" + urllib.parse.urlencode({"path": path})
        try:
            async with self.session.get(url, headers=headers, allow_redirects=False) as answer:
                body = await answer.read()
                if answer.status != 200:
                    return web.Response(status=answer.status if answer.status in (401, 403, 404, 409) else 502,
                                        body=body, content_type="application/json")
                data = await answer.json(content_type=None)
        except aiohttp.ClientError as exc:
            return web.json_response({"message": f"the platform cannot be asked: {exc}"}, status=502)
        allowed = Allowed(str(data["upstream"]).rstrip("/"), str(data["token"]), time.monotonic() + self.cache_seconds)
        if len(self._cache) > 10_000:
            self._cache.clear()
        self._cache[who] = allowed
        return allowed

    # -- forwarding -------------------------------------------------------------------------------------------
    def _headers(self, request: web.Request, allowed: Allowed) -> dict[str, str]:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP
                   and not k.lower().startswith("sec-websocket-")}
        cookies = [f"{k}={v}" for k, v in request.cookies.items() if k not in self.platform_cookies]
        if cookies:
            headers["Cookie"] = "; ".join(cookies)
        headers["Authorization"] = f"token {allowed.token}"
        headers["Host"] = request.host  # Jupyter compares Origin with Host: the browser's, as it sent them
        headers["X-Forwarded-Proto"] = request.scheme
        return headers

    async def handle(self, request: web.Request) -> web.StreamResponse:
        allowed = await self.authorize(request)
        if isinstance(allowed, web.Response):
            return allowed
        origin = request.headers.get("Origin")
        if origin and urllib.parse.urlsplit(origin).netloc != request.host:
            return web.json_response({"message": "cross-origin requests are refused"}, status=403)
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
            if isinstance(again, web.Response):
                return again
            return web.json_response({"message": f"the notebook does not answer: {exc}"}, status=502)

    async def _http(self, request: web.Request, allowed: Allowed, target: str) -> web.StreamResponse:
        data = request.content if request.body_exists else None
        try:
            async with self.session.request(request.method, target, headers=self._headers(request, allowed),
                                            data=data, allow_redirects=False) as upstream:
                response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
                for name, value in upstream.headers.items():
                    if name.lower() not in HOP_BY_HOP:
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
