"""Fixtures of the notebook tests: the web app served over HTTP (the proxy asks it), a local backend,
the proxy itself, and a project with a catalog image."""
from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from werkzeug.serving import make_server

from myapp.backends.local import LocalBackend
from tests.support import free_port, unique
from tests.world import created


@pytest.fixture()
def web(app) -> Iterator[str]:
    """The test app over real HTTP (threads), as the proxy reaches the web app."""
    server = make_server("127.0.0.1", free_port(), app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()


@pytest.fixture()
def proxy(app, web: str) -> Iterator[str]:
    """The notebook proxy on its own event loop thread, asking `web`."""
    from aiohttp import web as aioweb

    from myapp.api.notebooks import proxy_key
    from myapp.notebooks.proxy import NotebookProxy

    with app.app_context():
        key = proxy_key()
    port = free_port()
    loop = asyncio.new_event_loop()
    runner = aioweb.AppRunner(NotebookProxy(web, key, cache_seconds=0.5).app())

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(runner.setup())
        loop.run_until_complete(aioweb.TCPSite(runner, "127.0.0.1", port).start())
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    import socket

    from tests.support import wait_until

    def listening() -> bool:
        with socket.socket() as sock:
            return sock.connect_ex(("127.0.0.1", port)) == 0

    wait_until(listening, what="the notebook proxy listening")
    yield f"http://127.0.0.1:{port}"
    asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


@pytest.fixture()
def local_backend(app, tmp_path: Path) -> Iterator[LocalBackend]:
    """A local backend of the test's own, which the web app's reads (logs) use too, as workers' would."""
    from myapp.backends import registry

    backend = LocalBackend(tmp_path / "jobs", gpus=[], grace_period=3)
    key = ("default", app.config["MYAPP_BACKEND"])
    saved = registry._backends.get(key)
    registry._backends[key] = backend
    yield backend
    registry._backends.pop(key)
    if saved is not None:
        registry._backends[key] = saved
    for spec in (tmp_path / "jobs").glob("*/*/.myapp/spec.json"):  # nothing left running by a failed test
        import json

        from myapp.backends.base import JobRef

        ref = JobRef.from_dict(json.loads(spec.read_text())["ref"])
        backend.cancel(ref)


@pytest.fixture()
def notebook_world(app, admin, user, catalog) -> dict[str, Any]:
    """A project of `user` and a catalog image to name."""
    image = created(admin.post("/api/v1/image/", json={"repository": "registry.local/nb/lab", "tag": unique("v")}))
    project = created(user.post("/api/v1/project/", json={"name": unique("nbp")}))
    return {"project": project, "image": f"{image['repository']}:{image['tag']}"}
