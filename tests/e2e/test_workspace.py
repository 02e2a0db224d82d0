"""A new user's first pipeline, through the browser only: sign in, build three tasks by drag and drop
(each lands where it was dropped; the palette offers pipeline steps only), connect them (arrowheads),
fill a form, hit a validation error and fix it, pass a file downstream by reference and rename its
task (the reference follows, the form stays on it), reach every control of the task panel and the
settings dialog by keyboard, save, run on the local backend, watch it succeed live, read a task's logs.
Screenshots: test-artifacts/e2e/test_new_user_builds_and_runs_a_pipeline/."""
from __future__ import annotations

import re
import subprocess
import uuid

import pytest
from playwright.sync_api import expect

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


# A control as the keyboard tests name it: its tag and accessible label.
NAME_OF = """el => el.tagName.toLowerCase() + ':' + (el.getAttribute('aria-label')
    || (el.labels && el.labels[0] && el.labels[0].textContent) || el.textContent || '').trim().slice(0, 40)"""


def tab_stops(page, start, panel: str, limit: int = 80) -> list[str]:
    """Focus start, then press Tab until focus leaves the panel (a CSS selector) or comes back round:
    the controls focus met, in order."""
    start.focus()
    stops: list[str] = []
    for _ in range(limit):
        now = page.evaluate(f"() => document.activeElement.closest({panel!r}) ? ({NAME_OF})(document.activeElement)"
                            " : null")
        if now is None or now in stops:
            break
        stops.append(now)
        page.keyboard.press("Tab")
    return stops


def controls(panel) -> list[str]:
    """The panel's enabled, visible controls, named as tab_stops names them."""
    return panel.locator("input:enabled, select:enabled, textarea:enabled, button:enabled, a[href]").evaluate_all(
        f"els => els.filter(el => el.getClientRects().length).map({NAME_OF})")


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

    # The palette offers pipeline steps only: not the notebook template (it never runs to completion).
    assert page.locator('[data-template="python"]').is_visible()
    assert page.locator('[data-template="notebook"]').count() == 0

    # Three tasks by drag and drop from the palette, each where it was dropped.
    box = pane.bounding_box()
    for i, (x, y) in enumerate(((0.15, 0.3), (0.45, 0.3), (0.75, 0.3))):
        drop = {"x": box["width"] * x, "y": box["height"] * y}
        page.locator('[data-template="python"]').drag_to(pane, target_position=drop)
        page.locator("[data-task]").nth(i).wait_for()
        # Centred on the pointer as laid out (200 x 64 at zoom 1): its corner 100, 32 up and left of it.
        landed = settled_box(page.locator(".react-flow__node").nth(i))
        corner = (landed["x"] - box["x"] + 100, landed["y"] - box["y"] + 32)
        assert abs(corner[0] - drop["x"]) < 4 and abs(corner[1] - drop["y"]) < 4, (i, drop, corner)
    names = page.locator("[data-task]").evaluate_all("els => els.map(e => e.dataset.task)")
    assert sorted(names) == ["python", "python-2", "python-3"], names
    tab.shot("three-tasks")
    page.get_by_role("button", name="Auto-layout").click()
    connect(page, "python", "python-2")
    connect(page, "python-2", "python-3")
    page.locator(".react-flow__edge").nth(1).wait_for()
    assert page.locator(".react-flow__edge").count() == 2
    arrows = page.locator(".react-flow__edge path[marker-end]")  # which task runs after which
    assert arrows.count() == 2 and all("url(" in (a.get_attribute("marker-end") or "") for a in arrows.all())
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
    form.get_by_label("script").fill("print(open('{{ tasks.python-2.outputs.greeting.txt }}').read())")
    assert form.locator(".field-error").count() == 0
    tab.shot("form-fixed")

    # The keyboard reaches every control of the task panel, and Enter and Space act on them.
    side = page.locator(".editor-side")
    stops = tab_stops(page, side.get_by_role("button", name="Delete task"), ".editor-side")
    assert set(controls(side)) <= set(stops), set(controls(side)) - set(stops)
    side.get_by_label("Add upstream task").focus()
    page.keyboard.press("ArrowDown")  # the first candidate: python
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")  # Add
    expect(page.locator(".react-flow__edge")).to_have_count(3)
    side.get_by_role("button", name="Remove dependency on python", exact=True).focus()
    page.keyboard.press("Space")
    expect(page.locator(".react-flow__edge")).to_have_count(2)

    # python-2 writes a file python-3 reads by reference; renaming python-2 takes the reference along.
    node(page, "python-2").click()
    form.get_by_label("outputs").fill("greeting.txt")
    form.get_by_label("script").fill("import os\nopen(os.path.join(os.environ['MYAPP_OUTPUT_DIR'], 'greeting.txt'), "
                                     "'w').write('hello from the e2e test')")
    form.get_by_label("Task name").fill("prepare")
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".save-status")).to_have_text("Saved")
    expect(page.locator("form.task-form")).to_have_attribute("aria-label", "Task prepare")  # still on it
    form.get_by_label("Retries").fill("1")  # lands on the renamed task
    node(page, "python-3").click()
    assert form.get_by_label("script").input_value() == "print(open('{{ tasks.prepare.outputs.greeting.txt }}').read())"
    node(page, "prepare").click()
    assert form.get_by_label("Retries").input_value() == "1"
    tab.shot("renamed")

    # The settings dialog at 1400x900, taller than the window with three parameter rows: its buttons stay
    # in view, and every control is reached by keyboard.
    page.set_viewport_size({"width": 1400, "height": 900})
    page.get_by_role("button", name="Settings").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_role("button", name="Add parameter").focus()
    for _ in range(3):
        page.keyboard.press("Enter")
    expect(dialog.get_by_label("Parameter 3 name")).to_be_visible()
    expect(dialog.get_by_role("button", name="Save settings")).to_be_in_viewport()
    stops = tab_stops(page, dialog.get_by_role("button", name="Close"), "dialog")
    assert set(controls(dialog)) <= set(stops), set(controls(dialog)) - set(stops)
    for _ in range(3):
        dialog.get_by_role("button", name="Remove parameter 1").focus()
        page.keyboard.press("Space")
    expect(dialog.get_by_role("button", name="Remove parameter 1")).to_have_count(0)
    dialog.get_by_label("Description").focus()
    page.keyboard.type("built by keyboard")
    dialog.get_by_label("Paused").focus()
    page.keyboard.press("Space")
    dialog.get_by_role("button", name="Save settings").focus()
    tab.shot("settings-by-keyboard")
    page.keyboard.press("Enter")
    expect(dialog).to_have_count(0)
    pipeline_id = int(page.url.rsplit("/", 1)[1])
    stored = platform.api("GET", f"/api/v1/pipeline/{pipeline_id}")
    assert (stored["description"], stored["paused"]) == ("built by keyboard", True), stored
    page.set_viewport_size({"width": 1280, "height": 800})

    # Save, then run on the local backend.
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".save-status")).to_have_text("Saved")
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
