"""What the notebook proxy forwards to Jupyter: never the platform's cookies nor the caller's credentials."""
from __future__ import annotations

import asyncio

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer, make_mocked_request

from myapp.notebooks.proxy import Allowed, NotebookProxy


def test_forwarded_headers_carry_the_notebook_token_only():
    proxy = NotebookProxy("http://127.0.0.1:1", "key")
    request = make_mocked_request("GET", "/notebook/p/lab/api/kernels", headers={
        "Host": "127.0.0.1:8081", "Cookie": "session=platform; remember_token=r; _xsrf=j",
        "Authorization": "Bearer users-jwt", "Connection": "keep-alive", "Origin": "http://127.0.0.1:8081"})
    headers = proxy._headers(request, Allowed("http://127.0.0.1:9", "jupyter-token", 0))
    assert headers["Authorization"] == "token jupyter-token"
    assert headers["Cookie"] == "_xsrf=j"  # Jupyter's own cookie passes, the platform's do not
    assert headers["Host"] == "127.0.0.1:8081" and headers["Origin"] == "http://127.0.0.1:8081"
    assert "Connection" not in headers and "users-jwt" not in str(headers)


def test_a_stopped_notebook_answers_the_platforms_reason_not_502():
    """The proxy keeps an allowance a few seconds; when its upstream stops listening within them, the
    caller gets what the platform says now (409 stopped), as the browser's 'start it again' needs."""
    asyncio.run(_stopped_within_the_cache())


async def _stopped_within_the_cache() -> None:
    async def status(_request: web.Request) -> web.Response:
        return web.json_response({"ok": True})

    jupyter = web.Application()
    jupyter.router.add_get("/{tail:.*}", status)
    jupyter_server = TestServer(jupyter)
    await jupyter_server.start_server()
    state = {"running": True}

    async def authz(_request: web.Request) -> web.Response:
        if state["running"]:
            return web.json_response({"upstream": str(jupyter_server.make_url("/")), "token": "t"})
        return web.json_response({"message": "notebook lab is stopped"}, status=409)

    platform = web.Application()
    platform.router.add_get("/api/v1/notebook/authz", authz)
    async with TestServer(platform) as platform_server:
        proxy = NotebookProxy(str(platform_server.make_url("")), "key", cache_seconds=60)
        async with TestClient(TestServer(proxy.app())) as client:
            assert (await client.get("/notebook/p/lab/api/status")).status == 200
            await jupyter_server.close()
            state["running"] = False
            answer = await client.get("/notebook/p/lab/api/status")
            assert answer.status == 409 and "stopped" in (await answer.json())["message"]
            state["running"] = True  # the platform still names the dead upstream: then it is 502
            assert (await client.get("/notebook/p/lab/api/status")).status == 502
