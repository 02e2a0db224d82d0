"""A new user's first pipeline, through the browser only: sign in, build three tasks by drag and drop,
connect them, fill a form, hit a validation error and fix it, save, run on the local backend, watch it
succeed live, read a task's logs. Screenshots: test-artifacts/e2e/test_new_user_builds_and_runs_a_pipeline/."""
from __future__ import annotations

import re
import subprocess
import uuid

import pytest

from tests.support import MYAPP, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # chromium, and the platform as processes

RUN_TIMEOUT_MS = 180_000


def new_member(platform) -> tuple[str, str]:
    """A user who has never signed in, developer in a fresh project (an owner added them)."""
    username, password = f"ada-{uuid.uuid4().hex[:6]}", uuid.uuid4().hex
    made = subprocess.run([*MYAPP, "create-user", username, "--password", password], env=platform.env,
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    project = platform.api("POST", "/api/v1/project/", json={"name": f"team-{uuid.uuid4().hex[:6]}"})
    platform.api("POST", f"/api/v1/project/{project['id']}/members", json={"username": username, "role": "developer"})
    return username, password


def node(page, name: str):
    return page.locator(f".react-flow__node:has([data-task='{name}'])")


def settled_box(locator) -> dict:
    """The element's box once it has stopped moving (the canvas animates fit-view after a layout): the
    same box twice, 0.1 s apart."""
    previous: list[dict | None] = [None]

    def settled() -> dict | None:
        box = locator.bounding_box()
        same, previous[0] = box == previous[0], box
        return box if same else None

    return wait_until(settled, timeout=5, interval=0.1, what=f"{locator} to stop moving")


def connect(page, upstream: str, downstream: str) -> None:
    source = settled_box(node(page, upstream).locator(".react-flow__handle.source"))
    target = settled_box(node(page, downstream).locator(".react-flow__handle.target"))
    page.mouse.move(source["x"] + source["width"] / 2, source["y"] + source["height"] / 2)
    page.mouse.down()
    page.mouse.move(target["x"] + target["width"] / 2, target["y"] + target["height"] / 2, steps=12)
    page.mouse.up()


def test_new_user_builds_and_runs_a_pipeline(platform, tab):
    username, password = new_member(platform)
    page = tab.page

    # Sign in.
    page.goto(f"{platform.base}/")
    page.wait_for_url(re.compile(r".*/ui/login.*"))
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    tab.shot("login")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*/ui/pipelines$"))
    page.get_by_role("button", name="New pipeline").wait_for()
    tab.shot("pipelines")

    # A new pipeline.
    page.get_by_role("button", name="New pipeline").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Name").fill("Hello World")
    assert dialog.locator(".field-error").is_visible()  # not a DNS label: says so while typing
    dialog.get_by_label("Name").fill("hello-world")
    dialog.get_by_role("button", name="Create").click()
    page.wait_for_url(re.compile(r".*/ui/pipelines/\d+$"))
    pane = page.locator(".react-flow__pane")
    pane.wait_for()
    tab.shot("empty-editor")

    # Three tasks by drag and drop from the palette.
    box = pane.bounding_box()
    for i, (x, y) in enumerate(((0.15, 0.3), (0.45, 0.3), (0.75, 0.3))):
        page.locator('[data-template="python"]').drag_to(
            pane, target_position={"x": box["width"] * x, "y": box["height"] * y})
        page.locator("[data-task]").nth(i).wait_for()
    names = page.locator("[data-task]").evaluate_all("els => els.map(e => e.dataset.task)")
    assert sorted(names) == ["python", "python-2", "python-3"], names
    tab.shot("three-tasks")
    page.get_by_role("button", name="Auto-layout").click()
    connect(page, "python", "python-2")
    connect(page, "python-2", "python-3")
    page.locator(".react-flow__edge").nth(1).wait_for()
    assert page.locator(".react-flow__edge").count() == 2
    tab.shot("three-tasks-connected")

    # The form: a bad value is refused with the reason, then fixed.
    node(page, "python-3").click()
    form = page.locator("form.task-form")
    form.get_by_label("timeout_seconds").fill("-5")
    error = form.locator(".field-error")
    error.first.wait_for()
    assert ">= 0" in error.first.inner_text() or "0" in error.first.inner_text()
    assert form.get_by_label("timeout_seconds").get_attribute("aria-invalid") == "true"
    tab.shot("validation-error")
    form.get_by_label("timeout_seconds").fill("120")
    form.get_by_label("script").fill("print('hello from the e2e test')")
    assert form.locator(".field-error").count() == 0
    tab.shot("form-fixed")

    # Save, then run on the local backend.
    page.get_by_role("button", name="Save").click()
    page.get_by_text("Saved").first.wait_for()
    page.get_by_role("button", name="Run").click()
    page.wait_for_url(re.compile(r".*/ui/runs/\d+$"))
    # Attached, not visible: on a loaded machine React Flow may not have measured the nodes yet.
    page.locator(".run-node[data-task='python']").wait_for(state="attached")
    tab.shot("run-started")

    # Live states over server-sent events, without reloading the page.
    # (a locator, not wait_for_function: the page's Content-Security-Policy forbids evaluating strings)
    succeeded = page.locator('[data-task][data-state="succeeded"]')
    succeeded.nth(2).wait_for(state="attached", timeout=RUN_TIMEOUT_MS)
    assert succeeded.count() == 3
    tab.shot("run-succeeded")

    # A task's aggregated logs.
    page.locator(".run-node[data-task='python-3']").dispatch_event("click")
    logs = page.get_by_role("log", name="Task logs")
    logs.get_by_text("hello from the e2e test").wait_for(timeout=30_000)
    tab.shot("task-logs")

    assert tab.errors == [], tab.errors
