"""A stand-in for a notebook pod's Envoy sidecar with the `myapp-notebook-authz` provider, as
install/istio/mesh-config.yaml configures it: every request (HTTP or a websocket's upgrade) is first asked of
the platform's ext-authz check with its path and query, its Host and only the headers
`includeRequestHeadersInCheck` names, then either refused with the check's status, body and the headers
`headersToDownstreamOnDeny` names, or passed to Jupyter with `headersToUpstreamOnAllow` set from it."""
from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import aiohttp
import yaml
from aiohttp import web

from tests.support import aiohttp_server

MESH = Path(__file__).resolve().parents[2] / "install" / "istio" / "mesh-config.yaml"


def _provider() -> dict:
    config = yaml.safe_load(MESH.read_text())
    (provider,) = yaml.safe_load(config["data"]["mesh"])["extensionProviders"]
    return provider["envoyExtAuthzHttp"]


def sidecar(platform: str, jupyter: str) -> web.Application:
    http = _provider()
    check_headers = {h.lower() for h in http["includeRequestHeadersInCheck"]}
    upstream_headers = {h.lower() for h in http["headersToUpstreamOnAllow"]}
    deny_headers = {h.lower() for h in http["headersToDownstreamOnDeny"]}

    async def handle(request: web.Request) -> web.StreamResponse:
        async with aiohttp.ClientSession() as session:
            asked = {k: v for k, v in request.headers.items() if k.lower() in check_headers}
            asked["Host"] = request.host  # Envoy always sends the request's Host (the notebook's origin)
            async with session.request(request.method, f"{platform}{http['pathPrefix']}{request.path_qs}",
                                       headers=asked, allow_redirects=False) as answer:
                if answer.status != 200:
                    denied = [(k, v) for k, v in answer.headers.items() if k.lower() in deny_headers]
                    return web.Response(status=answer.status, body=await answer.read(), headers=denied)
                added = {k: v for k, v in answer.headers.items() if k.lower() in upstream_headers}
            headers = {k: v for k, v in request.headers.items()
                       if k.lower() not in upstream_headers and k.lower() not in ("host", "content-length")}
            headers.update(added)
            headers["Host"] = request.host  # Envoy keeps the request's authority: Jupyter compares Origin with it
            target = f"{jupyter}{request.path_qs}"
            if request.headers.get("Upgrade", "").lower() == "websocket":
                return await _websocket(request, session, target.replace("http", "ws", 1), headers)
            async with session.request(request.method, target, headers=headers, data=await request.read()) as up:
                return web.Response(status=up.status, body=await up.read(),
                                    content_type=up.content_type)

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


async def _websocket(request: web.Request, session: aiohttp.ClientSession, target: str,
                     headers: dict[str, str]) -> web.WebSocketResponse:
    drop = ("upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions")
    async with session.ws_connect(target, headers={k: v for k, v in headers.items() if k.lower() not in drop},
                                  max_msg_size=0) as upstream:
        downstream = web.WebSocketResponse(max_msg_size=0)
        await downstream.prepare(request)

        async def pump(source, sink) -> None:
            async for message in source:
                if message.type == aiohttp.WSMsgType.TEXT:
                    await sink.send_str(message.data)
                elif message.type == aiohttp.WSMsgType.BINARY:
                    await sink.send_bytes(message.data)
            await sink.close()

        await asyncio.gather(pump(upstream, downstream), pump(downstream, upstream), return_exceptions=True)
        return downstream


@contextmanager
def serving(platform: str, jupyter: str) -> Iterator[str]:
    """The sidecar on its own event loop thread; yields its base URL."""
    with aiohttp_server(sidecar(platform, jupyter), "the sidecar stand-in") as url:
        yield url
