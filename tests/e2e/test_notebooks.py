"""A notebook, through the browser (a notebook of a platform default environment on day one is in
test_first_week.py): the project gets an environment built from a package list (a wheel this test puts in
the platform's package index); the user creates a notebook on the Notebooks page with that
environment, sees it start live, opens JupyterLab on the notebook's own origin
(<notebook>.<project>.localhost, entered by the platform's hand-off), pip-installs a wheel in a terminal and
runs a cell that imports it and the package the build installed (from the environment, not the platform's own
Python), with the same `python` and folder as the terminal. Stopped, its address shows a page with its state
and how to start it; started again, that page waits and becomes JupyterLab. Then it is deleted from the page.
A member of another project who asks for the same address is refused and never reaches Jupyter, and so is
someone not signed in.
Screenshots: test-artifacts/e2e/test_notebook_from_an_environment/{owner,stranger}/."""
from __future__ import annotations

import re
import subprocess
import sys
import urllib.parse
import uuid

import pytest
import requests

from tests.e2e.support import Page, publish_wheel, sign_in
from tests.support import MYAPP, wait_until, wheel

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # chromium, and the platform as processes

# A package the platform's own environment does not have (checked below), made by this test.
PACKAGE = "nbprobe"
BUILD_TIMEOUT = 240
START_TIMEOUT_MS = 180_000


def new_member(platform, prefix: str) -> tuple[str, str, dict]:
    """A user who has never signed in, developer of a fresh project (an admin added them)."""
    suffix = uuid.uuid4().hex[:6]
    username, password = f"{prefix}-{suffix}", uuid.uuid4().hex
    made = subprocess.run([*MYAPP, "create-user", username, "--password", password], env=platform.env,
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    project = platform.api("POST", "/api/v1/project/", json={"name": f"{prefix}-team-{suffix}"})
    platform.api("POST", f"/api/v1/project/{project['id']}/members", json={"username": username, "role": "developer"})
    return username, password, project


def build_environment(platform, project: dict) -> str:
    """An environment of the project with PACKAGE installed by pip; its image as the catalog names it."""
    repository, tag = f"registry.local/{project['name']}/analysis", "v1"
    build = platform.api("POST", "/api/v1/image_build/", json={
        "project_id": project["id"], "repository": repository, "tag": tag,
        "packages": [publish_wheel(platform, PACKAGE, 3)]})

    def finished():
        state = platform.api("GET", f"/api/v1/image_build/{build['id']}")
        return state if state["state"] in ("succeeded", "failed") else None

    done = wait_until(finished, timeout=BUILD_TIMEOUT, interval=1, what="the environment build to finish")
    assert done["state"] == "succeeded", done
    return f"{repository}:{tag}"


def child(tab: Page, name: str) -> Page:
    tab.folder = tab.folder / name
    tab.folder.mkdir(parents=True, exist_ok=True)
    return tab


def run_cell(lab, code: str) -> str:
    """Type `code` into the open notebook's first cell once its kernel is idle, run it, and return its
    output's text. A kernel that the server restarts while it starts (slow imports on a busy machine) loses
    the request: the cell, still unrun, is run again (three tries)."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    cell = lab.locator(".jp-Notebook .jp-CodeCell").first
    editor = cell.locator(".cm-content")
    editor.wait_for(timeout=60_000)
    lab.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(timeout=120_000)
    editor.click()
    lab.keyboard.type(code)
    output = cell.locator(".jp-OutputArea-output").first
    for attempt in range(3):
        editor.click()
        lab.keyboard.press("Control+Enter")  # run the cell in place
        try:
            output.wait_for(timeout=60_000)
            break
        except PlaywrightTimeout:
            if attempt == 2:
                raise
    return output.inner_text()


def test_notebook_from_an_environment(platform, browser, tab):
    own = subprocess.run([sys.executable, "-c", f"import {PACKAGE}"], capture_output=True, timeout=60)
    assert own.returncode != 0, f"the platform's own Python has {PACKAGE}: the test would prove nothing"
    username, password, project = new_member(platform, "nora")
    stranger_name, stranger_password, _ = new_member(platform, "ivan")
    name = f"scratch-{uuid.uuid4().hex[:4]}"

    owner = child(tab, "owner")
    page = owner.page
    sign_in(page, platform.base, username, password)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Notebooks").click()
    page.wait_for_url(re.compile(r".*/ui/notebooks$"))
    page.get_by_text(f"No notebooks in {project['name']} yet.").wait_for()
    image = build_environment(platform, project)

    # ---- the member creates the notebook on the Notebooks page with the built environment ----------------
    page.get_by_role("button", name="New notebook").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Image or environment").locator(f'option[value="{image}"]').wait_for(state="attached")
    dialog.get_by_role("button", name="Create and start").click()  # no name: named at the field
    assert dialog.locator(".field-error").first.inner_text() == "is required"
    dialog.get_by_label("Name").fill(name)
    dialog.get_by_label("Image or environment").select_option(image)
    owner.shot("create-dialog")
    dialog.get_by_role("button", name="Create and start").click()
    dialog.wait_for(state="detached")
    row = page.locator(f'tr[data-notebook="{name}"]')
    row.wait_for()
    owner.shot("starting")
    row.locator('[data-state="running"]').first.wait_for(timeout=START_TIMEOUT_MS)
    assert row.get_by_role("link", name=f"Open {name} in JupyterLab").is_visible()
    owner.shot("running")

    # ---- JupyterLab through the platform: a cell imports what the environment build installed ----------
    with page.context.expect_page() as opened:
        row.get_by_role("link", name=f"Open {name} in JupyterLab").click()
    lab = opened.value
    lab.wait_for_url(re.compile(rf"http://{name}\.{project['name']}\.localhost:\d+/notebook/{project['name']}/{name}/lab.*"),
                     timeout=60_000)
    # A terminal: pip installs a wheel (from a file: no network) into the notebook's own layer, and says
    # which python and folder it has.
    work = platform.home / "jobs" / "data" / project["namespace"] / "volumes" / f"{name}-work"
    (work / "tinye2e-0.1-py3-none-any.whl").write_bytes(wheel("tinye2e", 5))
    lab.locator(".jp-LauncherCard[data-category='Other'][title*='terminal']").first.click(timeout=90_000)
    lab.locator(".jp-Terminal").first.click(timeout=60_000)
    lab.keyboard.type("pip install --no-index --no-deps ./tinye2e-0.1-py3-none-any.whl > pip.txt 2>&1; "
                      "python -c 'import os, sys; print(sys.executable, os.getcwd())' > where.txt\n")
    wait_until(lambda: (work / "where.txt").is_file() and (work / "where.txt").read_text().strip(), timeout=60,
               what="the terminal's command to finish")
    lab.screenshot(path=str(owner.folder / "jupyterlab-terminal.png"))
    assert "Successfully installed tinye2e-0.1" in (work / "pip.txt").read_text()
    lab.locator(".lm-TabBar-addButton:visible").first.click()  # a new launcher
    lab.locator(".jp-LauncherCard[data-category='Notebook']").first.click(timeout=90_000)
    try:
        output = run_cell(lab, f"import {PACKAGE}, tinye2e, os, sys; print({PACKAGE}.__file__); print(sys.prefix); "
                               "print(tinye2e.VALUE, sys.executable, os.getcwd()); print(open('where.txt').read()); "
                               f"print('sealed', [os.path.exists('{platform.home}/' + f) for f in ('secret_key', "
                               "'myapp.sqlite')], [k for k in os.environ if k in ('SECRET_KEY', 'DATABASE_URL')])")
    finally:
        lab.screenshot(path=str(owner.folder / "jupyterlab-cell.png"))
    assert "/environments/" in output and f"/{PACKAGE}/" in output, output
    kernel_line, terminal_line = [line for line in output.splitlines() if line.strip()][2:4]
    assert kernel_line == f"5 {work}/.myapp-venv/bin/python {work}", output
    assert terminal_line == f"{work}/.myapp-venv/bin/python {work}", output  # the terminal's, the same
    # Sealed off like any job: the platform's secret key, database and variables are not there.
    assert "sealed [False, False] []" in output, output
    assert (platform.home / "secret_key").is_file() and (platform.home / "myapp.sqlite").is_file()
    notebook_url = lab.url

    # ---- a member of another project, and someone not signed in, are refused ----------------------------
    with browser.new_context(viewport={"width": 1280, "height": 800}) as context:
        stranger = context.new_page()
        sign_in(stranger, platform.base, stranger_name, stranger_password)
        answer = stranger.goto(notebook_url)  # to the platform's hand-off, which finds no notebook for them
        assert answer is not None and answer.status == 404, answer.status if answer else None
        assert stranger.url.startswith(f"{platform.base}/notebook-open?")
        assert stranger.locator(".jp-LabShell").count() == 0
        host = urllib.parse.urlsplit(notebook_url).hostname
        assert not [c for c in context.cookies() if c["domain"] == host]  # no way into the notebook's origin
        stranger.screenshot(path=str(owner.folder.parent / "stranger-refused.png"))
    address = urllib.parse.urlsplit(notebook_url)  # Python does not resolve *.localhost: its Host, to the loopback
    anonymous = requests.get(f"http://127.0.0.1:{address.port}{re.sub(r'/lab.*$', '/api/kernels', address.path)}",
                             headers={"Host": address.netloc}, timeout=30, allow_redirects=False)
    assert anonymous.status_code == 401, anonymous.status_code

    # ---- JupyterLab's own log, from the page --------------------------------------------------------------
    row.get_by_role("button", name=f"Logs of {name}").click()
    logs = page.get_by_role("dialog", name=f"Logs of {name}")
    logs.get_by_role("log").filter(has_text="Jupyter Server").wait_for(timeout=30_000)
    owner.shot("logs")
    logs.get_by_role("button", name="Close").click()
    logs.wait_for(state="detached")

    # ---- stop (the work folder stays): its address says so, with how to start it; started, it opens ----
    row.get_by_role("button", name=f"Stop {name}").click()
    row.locator('[data-state="stopped"]').first.wait_for(timeout=60_000)
    assert row.get_by_role("button", name=f"Start {name}").is_enabled()
    owner.shot("stopped")
    answer = lab.goto(notebook_url)
    assert answer is not None and answer.status == 409 and "text/html" in answer.headers["content-type"]
    assert lab.get_by_role("heading", name=f"Notebook {name} is stopped").is_visible()
    assert lab.locator('[data-state="stopped"]').inner_text() == "stopped"
    assert lab.get_by_role("link", name="Start it on the Notebooks page").get_attribute("href") == \
        f"{platform.base}/ui/notebooks"
    lab.screenshot(path=str(owner.folder / "stopped-address.png"))
    row.get_by_role("button", name=f"Start {name}").click()
    row.locator('[data-state="stopped"]').first.wait_for(state="detached", timeout=30_000)
    lab.goto(notebook_url)  # while it starts: a page that waits, then JupyterLab
    if lab.locator(".jp-LabShell").count() == 0:
        assert lab.get_by_role("heading", name=f"Notebook {name} is starting").is_visible()
        lab.screenshot(path=str(owner.folder / "starting-address.png"))
    lab.locator(".jp-LabShell").wait_for(timeout=START_TIMEOUT_MS)
    lab.close()
    row.get_by_role("button", name=f"Delete {name}").click()
    page.get_by_role("dialog").get_by_role("button", name="Delete").click()
    row.wait_for(state="detached", timeout=60_000)
    owner.shot("deleted")
    assert not [e for e in owner.errors if "status of 40" not in e], owner.errors
