"""The notebook proxy on its own (a stand-in platform and Jupyter): routed by Host, entered by the hand-off's
cookie (host-only, HttpOnly, SameSite=Lax, Secure on https), forwarding neither the platform's cookies, the
origin's session, the worker's header nor the caller's credentials, refusing other origins' requests and
other notebooks' paths, and answering pages (not JSON) to page loads it cannot serve."""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer, make_mocked_request

from myapp.notebooks.proxy import Allowed, NotebookProxy

HOST = "lab.team.localhost"
PREFIX = "/notebook/team/lab/"
NAVIGATE = {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document", "Accept": "text/html"}


def test_forwarded_headers_carry_the_notebook_token_only():
    proxy = NotebookProxy("http://127.0.0.1:1", "key")
    request = make_mocked_request("GET", f"{PREFIX}api/kernels", headers={
        "Host": f"{HOST}:8081", "Cookie": "session=platform; remember_token=r; _xsrf=j; myapp-notebook=s",
        "Authorization": "Bearer users-jwt", "Connection": "keep-alive", "Origin": f"http://{HOST}:8081",
        "X-Myapp-Worker": "1.forged", "X-Myapp-Notebook-Session": "s"})
    headers = proxy._headers(request, Allowed("http://127.0.0.1:9", "jupyter-token", 0, PREFIX))
    assert headers["Authorization"] == "token jupyter-token"
    assert headers["Cookie"] == "_xsrf=j"  # Jupyter's own cookie passes; the platform's and the session's do not
    assert headers["Host"] == f"{HOST}:8081" and headers["Origin"] == f"http://{HOST}:8081"
    assert not {"Connection", "X-Myapp-Worker", "X-Myapp-Notebook-Session"} & set(headers)
    assert "users-jwt" not in str(headers)


def test_jupyter_cannot_set_cookies_for_other_origins_or_ours():
    proxy = NotebookProxy("http://127.0.0.1:1", "key")
    assert proxy._kept("Set-Cookie", "_xsrf=2|a; Path=/notebook/team/lab/")
    assert not proxy._kept("Set-Cookie", "_xsrf=x; Domain=localhost; Path=/")  # tossed to every notebook
    assert not proxy._kept("Set-Cookie", "myapp-notebook=forged; Path=/")
    assert not proxy._kept("Set-Cookie", "session=forged; Path=/")
    assert proxy._kept("Content-Type", "application/json") and not proxy._kept("Transfer-Encoding", "chunked")


@asynccontextmanager
async def stand_ins(authz: Callable[[web.Request, str], Awaitable[web.Response]],
                    handoff: Callable[[web.Request], Awaitable[web.Response]] | None = None,
                    cache_seconds: float = 0) -> AsyncIterator[tuple[TestClient, list[dict[str, Any]]]]:
    """The proxy between a stand-in platform and a stand-in Jupyter that records what reaches it."""
    seen: list[dict[str, Any]] = []

    async def jupyter_answer(request: web.Request) -> web.Response:
        seen.append({"path": request.path, "headers": dict(request.headers)})
        return web.json_response({"ok": True}, headers={"Set-Cookie": "_xsrf=2|x; Path=/notebook/team/lab/"})

    jupyter = web.Application()
    jupyter.router.add_route("*", "/{tail:.*}", jupyter_answer)
    async with TestServer(jupyter) as jupyter_server:
        upstream = str(jupyter_server.make_url("")).rstrip("/")

        async def platform_authz(request: web.Request) -> web.Response:
            return await authz(request, upstream)

        platform = web.Application()
        platform.router.add_get("/api/v1/notebook/authz", platform_authz)
        if handoff is not None:
            platform.router.add_post("/api/v1/notebook/handoff", handoff)
        async with TestServer(platform) as platform_server:
            proxy = NotebookProxy(str(platform_server.make_url("")), "key", cache_seconds=cache_seconds)
            async with TestClient(TestServer(proxy.app())) as client:
                yield client, seen


def allow_session(value: str) -> Callable[[web.Request, str], Awaitable[web.Response]]:
    async def authz(request: web.Request, upstream: str) -> web.Response:
        assert request.headers["X-Myapp-Notebook-Proxy"] == "key"
        if request.headers.get("X-Myapp-Notebook-Session") != value:
            return web.json_response({"message": "open it from the platform", "notebooks": "http://p/ui/notebooks",
                                      "open": f"http://p/notebook-open?host={request.query['host']}"}, status=401)
        return web.json_response({"upstream": upstream, "token": "t", "prefix": PREFIX, "notebook_id": 1})
    return authz


def test_the_handoff_sets_a_cookie_for_this_origin_alone():
    asyncio.run(_handoff())


async def _handoff() -> None:
    asked: list[dict] = []

    async def handoff(request: web.Request) -> web.Response:
        asked.append(await request.json())
        if len(asked) > 1:
            return web.json_response({"message": "used already"}, status=409)
        return web.json_response({"next": f"{PREFIX}lab", "cookie": {"name": "myapp-notebook", "value": "sess",
                                                                      "max_age": 600, "secure": False}})

    async with stand_ins(allow_session("sess"), handoff) as (client, seen):
        landed = await client.get("/_myapp/handoff?code=c0de", headers={"Host": f"{HOST}:8081", **NAVIGATE},
                                  allow_redirects=False)
        assert landed.status == 302 and landed.headers["Location"] == f"{PREFIX}lab"
        assert asked == [{"code": "c0de", "host": f"{HOST}:8081"}]
        cookie = landed.headers["Set-Cookie"]
        assert cookie.startswith("myapp-notebook=sess") and "HttpOnly" in cookie and "SameSite=Lax" in cookie
        assert "Path=/" in cookie and "Max-Age=600" in cookie
        assert "domain" not in cookie.lower() and "secure" not in cookie.lower()  # host-only; http here
        assert landed.headers["Referrer-Policy"] == "no-referrer" and not seen  # Jupyter never sees the code
        used = await client.get("/_myapp/handoff?code=c0de", headers={"Host": HOST, **NAVIGATE})
        assert used.status == 409 and used.content_type == "text/html" and "Set-Cookie" not in used.headers
        assert "used already" in await used.text()


def test_a_secure_platform_makes_the_cookie_secure():
    asyncio.run(_secure())


async def _secure() -> None:
    async def handoff(_request: web.Request) -> web.Response:
        return web.json_response({"next": f"{PREFIX}lab", "cookie": {"name": "__Host-myapp-notebook", "value": "s",
                                                                      "max_age": 60, "secure": True}})

    async with stand_ins(allow_session("s"), handoff) as (client, _seen):
        landed = await client.get("/_myapp/handoff?code=x", headers={"Host": HOST}, allow_redirects=False)
        cookie = landed.headers["Set-Cookie"]
        assert cookie.startswith("__Host-myapp-notebook=s") and "Secure" in cookie and "domain" not in cookie.lower()


def test_requests_are_routed_by_host_and_refused_across_origins():
    asyncio.run(_routing())


async def _routing() -> None:
    async with stand_ins(allow_session("sess")) as (client, seen):
        own = {"Host": HOST, "Cookie": "myapp-notebook=sess; session=platform; _xsrf=j"}
        ok = await client.get(f"{PREFIX}api/status", headers=own)
        assert ok.status == 200 and seen[-1]["path"] == f"{PREFIX}api/status"
        assert seen[-1]["headers"]["Cookie"] == "_xsrf=j" and seen[-1]["headers"]["Authorization"] == "token t"
        count = len(seen)
        # Another notebook's path on this origin (the old one-origin form): nothing reaches any Jupyter.
        other = await client.get("/notebook/other-team/lab/api/contents", headers=own)
        assert other.status == 404 and len(seen) == count
        root = await client.get("/", headers=own, allow_redirects=False)
        assert root.status == 302 and root.headers["Location"] == f"{PREFIX}lab"
        # Requests another origin's script sends stop here, whatever cookies the browser attached.
        for extra in ({"Origin": "http://evil.team.localhost:8081"},
                      {"Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "empty"},
                      {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"}):
            refused = await client.post(f"{PREFIX}api/contents", headers={**own, **extra}, data="{}")
            assert refused.status == 403, extra
        assert len(seen) == count
        # Without this origin's session: a page load goes to the platform's hand-off, an API call is 401.
        bare = {"Host": HOST, "Cookie": "session=platform"}
        page = await client.get(f"{PREFIX}lab", headers={**bare, **NAVIGATE}, allow_redirects=False)
        assert page.status == 302 and page.headers["Location"].startswith("http://p/notebook-open?")
        api = await client.get(f"{PREFIX}api/contents", headers=bare)
        assert api.status == 401 and (await api.json())["message"] == "open it from the platform"
        assert len(seen) == count


def test_a_stopped_notebook_answers_the_platforms_reason_not_502():
    """The proxy keeps an allowance a few seconds; when its upstream stops listening within them, the
    caller gets what the platform says now (409 stopped): a page that leads back to the platform for a page
    load, the status and message for an API call."""
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
            return web.json_response({"upstream": str(jupyter_server.make_url("/")), "token": "t", "prefix": PREFIX})
        return web.json_response({"message": "notebook lab is stopped <b>now</b>", "name": "lab", "state": "stopped",
                                  "notebooks": "http://p/ui/notebooks"}, status=409)

    platform = web.Application()
    platform.router.add_get("/api/v1/notebook/authz", authz)
    async with TestServer(platform) as platform_server:
        proxy = NotebookProxy(str(platform_server.make_url("")), "key", cache_seconds=60)
        async with TestClient(TestServer(proxy.app())) as client:
            own = {"Host": HOST, "Cookie": "myapp-notebook=s"}
            assert (await client.get(f"{PREFIX}api/status", headers=own)).status == 200
            await jupyter_server.close()
            state["running"] = False
            answer = await client.get(f"{PREFIX}api/status", headers=own)
            assert answer.status == 409 and "stopped" in (await answer.json())["message"]
            page = await client.get(f"{PREFIX}lab", headers={**own, **NAVIGATE})
            text = await page.text()
            assert page.status == 409 and page.content_type == "text/html"
            assert 'href="http://p/ui/notebooks"' in text and "&lt;b&gt;now&lt;/b&gt;" in text  # escaped
            assert 'data-state="stopped"' in text and "Notebook lab is stopped" in text
            assert page.headers["Content-Security-Policy"].startswith("default-src 'none'")
            state["running"] = True  # the platform still names the dead upstream: then it is 502
            assert (await client.get(f"{PREFIX}api/status", headers=own)).status == 502
