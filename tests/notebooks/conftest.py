"""Fixtures of the notebook tests: the web app served over HTTP (the proxy asks it), a local backend,
the proxy itself, and a project with a catalog image."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from myapp.backends.local import LocalBackend
from tests.support import aiohttp_server, default_backend, unique, wsgi_server
from tests.world import created


@pytest.fixture()
def web(app) -> Iterator[str]:
    """The test app over real HTTP (threads), as the proxy reaches the web app."""
    with wsgi_server(app) as url:
        yield url


@pytest.fixture()
def proxy(app, web: str) -> Iterator[str]:
    """The notebook proxy on its own event loop thread, asking `web`."""
    from myapp.api.notebooks import proxy_key
    from myapp.notebooks.proxy import NotebookProxy

    with app.app_context():
        key = proxy_key()
    with aiohttp_server(NotebookProxy(web, key, cache_seconds=0.5).app(), "the notebook proxy") as url:
        yield url


@pytest.fixture()
def local_backend(app, tmp_path: Path) -> Iterator[LocalBackend]:
    """A local backend of the test's own, which the web app's reads (logs) use too, as workers' would."""
    with default_backend(app, LocalBackend(tmp_path / "jobs", gpus=[], grace_period=3)) as backend:
        yield backend
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
