"""Fixtures of the browser tests: the real platform (`myapp run`, on the pass's database and broker)
driven through Debian's chromium.

Playwright only drives the browser installed by the system (/usr/bin/chromium); it never downloads
one. Screenshots of each step are kept in test-artifacts/e2e/ for people to look at.
"""
from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path
from typing import Iterator

import pytest
import requests

from conftest import platform_environment
from test_cli import MYAPP, free_port, wait_healthy

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "e2e"
CHROMIUM = os.environ.get("MYAPP_CHROMIUM", "/usr/bin/chromium")
# Without the background-networking flags chromium keeps calling Google hosts this sandbox refuses.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync",
                 "--disable-background-networking", "--disable-component-update"]


class Platform:
    def __init__(self, base: str, admin_password: str, home: Path, env: dict[str, str]):
        self.base, self.home, self.admin_password = base, home, admin_password
        self.env = env  # for `myapp` commands against this platform
        self.admin = requests.Session()
        token = requests.post(f"{base}/api/v1/security/login", timeout=10, json={
            "username": "admin", "password": admin_password, "provider": "db"}).json()["access_token"]
        self.admin.headers["Authorization"] = f"Bearer {token}"

    def api(self, method: str, path: str, **kwargs) -> dict:
        resp = self.admin.request(method, self.base + path, timeout=30, **kwargs)
        assert resp.status_code < 300, (path, resp.status_code, resp.text)
        return resp.json()


@pytest.fixture(scope="module")
def platform(tmp_path_factory) -> Iterator[Platform]:
    assert (ROOT / "frontend" / "dist" / "index.html").is_file(), "build the UI first: make ui"
    assert Path(CHROMIUM).is_file(), f"{CHROMIUM} missing: apt-get install chromium (.ci/run does)"
    home = tmp_path_factory.mktemp("e2e-home")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    password = uuid.uuid4().hex
    with platform_environment(home) as services:
        env = services | {"MYAPP_BASE_URL": base, "MYAPP_TICK_SECONDS": "1", "MYAPP_ADMIN_PASSWORD": password}
        init = subprocess.run([*MYAPP, "init"], env=env, capture_output=True, text=True, timeout=180)
        assert init.returncode == 0, init.stderr
        log = open(home / "platform.log", "w")
        proc = subprocess.Popen([*MYAPP, "run", "--port", str(port), "--web-workers", "1"], env=env,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_healthy(base)
            yield Platform(base, password, home, env)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
            log.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class Page:
    """A browser tab at 1280x800 that records console errors and saves numbered screenshots."""

    def __init__(self, browser, name: str):
        self.context = browser.new_context(viewport={"width": 1280, "height": 800})
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.folder = ARTIFACTS / name
        self.folder.mkdir(parents=True, exist_ok=True)
        self.step = 0

    def shot(self, label: str) -> None:
        self.step += 1
        self.page.screenshot(path=str(self.folder / f"{self.step:02d}-{label}.png"))


@pytest.fixture()
def tab(browser, request) -> Iterator[Page]:
    page = Page(browser, request.node.name)
    yield page
    page.context.close()
