"""Every page of the UI, and the sign-in page, through axe-core (the npm package's axe.min.js from
frontend/node_modules): no serious or critical violation; the lesser ones are printed. The pages come
from the router's table in frontend/src/App.tsx (and the admin tabs from AdminPage.tsx), so a new page
is swept without touching this test; a new URL parameter fails here until PARAMS says what to put in it.
Screenshots: test-artifacts/e2e/test_every_page_passes_axe/."""
from __future__ import annotations

import json
import re
import uuid

import pytest

from tests.e2e.support import ARTIFACTS, ROOT
from tests.support import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # chromium, and the platform as processes

AXE = ROOT / "frontend" / "node_modules" / "axe-core" / "axe.min.js"
APP = ROOT / "frontend" / "src" / "App.tsx"
ADMIN = ROOT / "frontend" / "src" / "pages" / "admin" / "AdminPage.tsx"
FAILING = ("serious", "critical")

PIPELINE = """
name: {name}
project: demo
tasks:
  - name: prepare
    template: python
    args:
      outputs: [data.txt]
      script: |
        import os
        open(os.path.join(os.environ["MYAPP_OUTPUT_DIR"], "data.txt"), "w").write("ready")
  - name: train
    template: python
    depends_on: [prepare]
    args:
      script: print(open("{{{{ tasks.prepare.outputs.data.txt }}}}").read())
"""


def routes() -> list[str]:
    """The router's patterns ("/pipelines/:id"), in its order."""
    found = re.findall(r'\{\s*pattern:\s*"([^"]+)"', APP.read_text())
    assert len(found) >= 10, f"the route table in {APP} changed shape: {found}"
    return found


def admin_tabs() -> list[str]:
    found = re.findall(r'\{\s*id:\s*"([a-z-]+)"', ADMIN.read_text())
    assert found, f"the tab table in {ADMIN} changed shape"
    return found


def paths(pipeline_id: int, run_id: int, experiment_id: int) -> list[str]:
    """Every route with its parameters filled in (a route with a parameter PARAMS does not know fails)."""
    params = {("pipelines", "id"): [str(pipeline_id)], ("runs", "id"): [str(run_id)], ("admin", "tab"): admin_tabs(),
              ("experiments", "id"): [str(experiment_id)]}
    out = []
    for pattern in routes():
        filled = [""]
        parts = pattern.strip("/").split("/")
        for part in parts:
            if part.startswith(":"):
                values = params.get((parts[0], part[1:]))
                assert values, f"no value for {part} in {pattern}: add one to paths() in {__file__}"
                filled = [f"{f}/{v}" for f in filled for v in values]
            else:
                filled = [f"{f}/{part}" for f in filled]
        out += filled
    return [f"{p}?runs={run_id},{run_id}" if p.endswith("/compare") else p for p in out]


def settle(page) -> None:
    """The page's first reads are in: it shows something and no "Loading…" is left."""
    page.locator("main > *, form").first.wait_for(timeout=15_000)
    page.get_by_text(re.compile(r"^Loading")).first.wait_for(state="detached", timeout=15_000)
    page.wait_for_timeout(300)  # the last answers' re-render


def axe(page) -> list[dict]:
    """axe-core's violations on the page as it is now."""
    if not page.evaluate("() => typeof window.axe === 'object'"):
        page.add_script_tag(path=str(AXE))
    return page.evaluate("async () => (await window.axe.run(document, {resultTypes: ['violations']})).violations")


def report(where: str, violations: list[dict], failures: list[str]) -> None:
    for v in violations:
        nodes = [n["target"] for n in v["nodes"]][:6]
        line = f"{where}: {v['impact']} {v['id']} ({v['help']}) on {len(v['nodes'])} nodes: {json.dumps(nodes)}"
        print(line)
        if v["impact"] in FAILING:
            failures.append(line)


@pytest.fixture(scope="module")
def pipeline_and_run(platform) -> tuple[int, int]:
    pipeline = platform.api("POST", "/api/v1/pipeline/import",
                            json={"yaml": PIPELINE.format(name=f"axe-{uuid.uuid4().hex[:6]}")})
    run = platform.api("POST", "/api/v1/pipeline_run/", json={"pipeline_id": pipeline["id"]})
    wait_until(lambda: platform.api("GET", f"/api/v1/pipeline_run/{run['id']}")["state"]
               in ("succeeded", "failed", "cancelled"), timeout=120, interval=1, what="the run to finish")
    return pipeline["id"], run["id"]


def test_every_page_passes_axe(platform, browser, pipeline_and_run):
    assert AXE.is_file(), f"{AXE} missing: cd frontend && npm ci"
    # The platform's Content-Security-Policy refuses injected scripts: this context alone bypasses it.
    context = browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)
    page = context.new_page()
    folder = ARTIFACTS / "test_every_page_passes_axe"
    folder.mkdir(parents=True, exist_ok=True)
    failures: list[str] = []
    try:
        page.goto(f"{platform.base}/ui/login")
        settle(page)
        report("/login", axe(page), failures)
        page.get_by_label("Username").fill("admin")
        page.get_by_label("Password").fill(platform.admin_password)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_url(re.compile(r".*/ui/pipelines$"))

        demo_search = platform.api("GET", "/api/v1/experiment/", params={"name": "digits-search"})["items"][0]
        for path in paths(*pipeline_and_run, demo_search["id"]):
            page.goto(f"{platform.base}/ui{path}")
            settle(page)
            page.screenshot(path=str(folder / (re.sub(r"[^a-z0-9]+", "-", path).strip("-") + ".png")))
            report(path, axe(page), failures)
            if re.fullmatch(r"/pipelines/\d+", path):  # the editor's task form and its dialogs
                page.locator(".react-flow__node").first.click()
                page.locator("form.task-form").wait_for()
                report(f"{path} (task form)", axe(page), failures)
                for dialog in ("Settings", "YAML"):
                    page.get_by_role("button", name=dialog, exact=True).click()
                    page.get_by_role("dialog").wait_for()
                    report(f"{path} ({dialog} dialog)", axe(page), failures)
                    page.keyboard.press("Escape")
                    page.get_by_role("dialog").wait_for(state="detached")
    finally:
        context.close()
    assert not failures, "\n".join(failures)
