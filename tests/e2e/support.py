"""Helpers of the browser tests: the platform they drive, and a browser tab that keeps screenshots.
Their fixtures (`platform`, `browser`, `tab`) are in tests/e2e/conftest.py.

Playwright only drives the browser installed by the system (/usr/bin/chromium); it never downloads
one. Screenshots of each step are kept for people to look at in test-artifacts/e2e/, or the folder
MYAPP_TEST_ARTIFACTS names.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import requests

from tests.support import publish

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("MYAPP_TEST_ARTIFACTS") or ROOT / "test-artifacts" / "e2e")
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


def publish_wheel(platform: Platform, name: str, value: int) -> str:
    """A pure-Python wheel of module `name` (`name.VALUE == value`) in the platform's package index, where
    its environment builds find it; the requirement that installs it."""
    return publish(platform.home / "index", name, value)


def sign_in(page, base: str, username: str, password: str) -> None:
    page.goto(f"{base}/ui/login")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*/ui/pipelines$"))


def check_chart(page, label: str, legend: list[str]) -> str:
    """The chart named `label` (components/charts/Chart.tsx) is drawn as SVG with a legend entry per name,
    and hovering its middle shows its tooltip; returns the tooltip's text."""
    from playwright.sync_api import expect

    box = page.get_by_role("img", name=label)
    box.scroll_into_view_if_needed()
    expect(box.locator("svg").first).to_be_visible()
    for name in legend:
        expect(box.locator("svg text").filter(has_text=re.compile(rf"^{re.escape(name)}$")).first).to_be_visible()
    tooltip = box.locator(".chart-tooltip")
    bounds = box.bounding_box()
    assert bounds is not None, label
    # A live chart redrawn with new figures hides its tooltip until the pointer moves again: move it a pixel
    # at a time (each move is an event ECharts answers), up to 5 s in all.
    for step in range(20):
        page.mouse.move(bounds["x"] + bounds["width"] / 2 + step % 2, bounds["y"] + bounds["height"] / 2)
        try:
            expect(tooltip).to_be_visible(timeout=250)
            break
        except AssertionError:
            continue
    expect(tooltip).to_be_visible()
    return tooltip.inner_text()
