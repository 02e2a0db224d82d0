"""Fixtures of the browser tests: the real platform (`myapp run`, on the pass's database and broker)
driven through Debian's chromium (helpers in tests/e2e/support.py).

One platform per test process (per xdist worker), shared by the modules: each platform costs ~30 s of
`myapp init` and start-up. The modules' tests make their own users, projects and pipelines under fresh
names; a module whose assertions need a platform nobody else touched says so with OWN_PLATFORM (why, as
text) and gets one of its own. A module that changes something platform-wide puts it back when done.
What a module's tests left running (services, notebooks, local jobs) is stopped after it: put_to_rest.
Environment builds install from a package index of the platform's own on 127.0.0.1 (PIP_INDEX_URL), never
from the network: a test puts the wheels it builds there (support.publish_wheel)."""
from __future__ import annotations

import contextlib
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.support import CHROMIUM, CHROMIUM_ARGS, ROOT, Page, Platform
from tests.support import (
    MYAPP,
    free_port,
    healthy,
    package_index,
    platform_environment,
    stop_local_jobs,
    wait_until,
)


@contextlib.contextmanager
def running_platform(home: Path) -> Iterator[Platform]:
    """`myapp init` then `myapp run` in home, until the platform answers; stopped with its local jobs."""
    assert (ROOT / "frontend" / "dist" / "index.html").is_file(), "build the UI first: make ui"
    assert Path(CHROMIUM).is_file(), f"{CHROMIUM} missing: apt-get install chromium (.ci/run does)"
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    password = uuid.uuid4().hex
    with platform_environment(home) as services, package_index(home / "index") as index:
        env = services | {"MYAPP_BASE_URL": base, "MYAPP_TICK_SECONDS": "1", "MYAPP_ADMIN_PASSWORD": password,
                          "PIP_INDEX_URL": index}
        init = subprocess.run([*MYAPP, "init"], env=env, capture_output=True, text=True, timeout=180)
        assert init.returncode == 0, init.stderr
        with open(home / "platform.log", "w") as log:
            proc = subprocess.Popen([*MYAPP, "run", "--port", str(port), "--notebook-port", str(free_port()),
                                     "--web-workers", "1"], env=env,
                                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
            try:
                wait_until(lambda: healthy(base), timeout=90, interval=0.5,
                           what=f"the platform to answer {base}/health")
                yield Platform(base, password, home, env)
            finally:
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                stop_local_jobs(home)  # model servers and notebooks the tests left: they outlive the platform


@pytest.fixture(scope="session")
def shared_platform(tmp_path_factory) -> Iterator[Platform]:
    with running_platform(tmp_path_factory.mktemp("e2e-home")) as platform:
        yield platform


@pytest.fixture(scope="module")
def platform(request, tmp_path_factory) -> Iterator[Platform]:
    if getattr(request.module, "OWN_PLATFORM", None):
        with running_platform(tmp_path_factory.mktemp("e2e-home")) as platform:
            yield platform
        return
    platform = request.getfixturevalue("shared_platform")
    yield platform
    put_to_rest(platform)


def put_to_rest(platform: Platform) -> None:
    """What a module's tests left running on the shared platform, stopped as a platform of the module's
    own was: services deleted and notebooks stopped first (the platform would start their servers again),
    then any local job still there."""
    def services() -> list[dict]:
        return platform.api("GET", "/api/v1/inference_service/", params={"page_size": 100})["items"]

    def wanted_notebooks() -> list[dict]:  # meant to run, or not yet stopped
        return [n for n in platform.api("GET", "/api/v1/notebook/", params={"page_size": 100})["items"]
                if n["desired"] == "running" or n["state"] not in ("stopped", "failed")]

    for service in services():
        platform.api("DELETE", f"/api/v1/inference_service/{service['id']}")
    for notebook in wanted_notebooks():
        if notebook["desired"] == "running":
            platform.api("POST", f"/api/v1/notebook/{notebook['id']}/stop")
    wait_until(lambda: not services() and not wanted_notebooks(), timeout=90, interval=0.5,
               what="the services and notebooks the module left to stop")
    stop_local_jobs(platform.home)


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture()
def tab(browser, request) -> Iterator[Page]:
    page = Page(browser, request.node.name)
    yield page
    page.context.close()
