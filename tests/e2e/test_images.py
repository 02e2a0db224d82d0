"""Images page, through the browser against the real platform (web, worker, embedded broker): a developer asks
for an environment from a package list, a bad requirement is refused naming the field, the worker builds the
environment (for real: pip from PyPI in the job sandbox) and the page shows the live log and the success; the
same list again comes from the cache; a pipeline's python task picks that environment in the editor.
Screenshots: test-artifacts/e2e/test_images/."""
from __future__ import annotations

import re
import uuid

import pytest
from playwright.sync_api import expect

from tests.e2e.support import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # chromium, and the platform as processes


def test_images(platform, tab):
    project_name = f"img-{uuid.uuid4().hex[:6]}"
    project_id = platform.api("POST", "/api/v1/project/", json={"name": project_name})["id"]
    page = tab.page
    sign_in(page, platform.base, "admin", platform.admin_password)
    page.get_by_label("Project").select_option(label=f"{project_name} (owner)")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Images").click()
    page.wait_for_url(re.compile(r".*/ui/images$"))
    form = page.get_by_role("form", name="New build")
    form.get_by_label("Repository").fill("registry.local/e2e/six-env")
    form.get_by_label("Tag").fill("v1")

    # A requirement with an option is refused before anything is stored, naming the line.
    form.get_by_label("Python packages").fill("six==1.17.0\n--index-url=http://evil.example\n")
    form.get_by_role("button", name="Build").click()
    refused = form.locator(".field-error")
    refused.wait_for()
    assert "line 2" in refused.inner_text() and "no options" in refused.inner_text()
    tab.shot("refused")

    form.get_by_label("Python packages").fill("six==1.17.0\n")
    form.get_by_role("button", name="Build").click()
    detail = page.locator("section.build-detail")
    detail.wait_for()
    done = page.locator('section.build-detail[data-state="succeeded"]')
    done.wait_for(timeout=180_000)
    log = page.get_by_role("log", name="Build log")
    page.get_by_text("Successfully installed six-1.17.0").wait_for()
    assert "environment" in log.inner_text() and "is ready" in log.inner_text()
    assert "built registry.local/e2e/six-env:v1" in page.get_by_test_id("build-reason").inner_text()
    log.scroll_into_view_if_needed()
    tab.shot("built")

    # The same list under another tag: the environment from the cache.
    form.get_by_label("Tag").fill("v2")
    form.get_by_role("button", name="Build").click()
    page.locator('section.build-detail[data-state="succeeded"]').filter(has_text="six-env:v2").wait_for(
        timeout=60_000)
    assert "(from the cache)" in page.get_by_test_id("build-reason").inner_text()
    rows = page.locator("table.build-table tbody tr")
    assert rows.count() == 2
    page.get_by_test_id("build-reason").scroll_into_view_if_needed()
    tab.shot("cached")

    # A python task of the project picks the environment in the editor's task form, and keeps it once saved.
    python = platform.api("GET", "/api/v1/job_template/", params={"name": "python"})["items"][0]["id"]
    pipeline = platform.api("POST", "/api/v1/pipeline/", json={"project_id": project_id, "name": "uses-env"})
    task = platform.api("POST", "/api/v1/task/", json={"pipeline_id": pipeline["id"], "name": "probe",
                                                       "template_id": python})
    page.goto(f"{platform.base}/ui/pipelines/{pipeline['id']}")
    page.locator(".react-flow__node:has([data-task='probe'])").click()
    choice = page.locator("form.task-form").get_by_label("Image or environment")
    assert choice.input_value() == ""  # the template's image until one is picked
    choice.select_option(label="registry.local/e2e/six-env:v1 (environment)")
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".save-status")).to_have_text("Saved")
    assert platform.api("GET", f"/api/v1/task/{task['id']}")["image"] == "registry.local/e2e/six-env:v1"
    tab.shot("task-environment")
    # Chromium notes the answer to the refused build (400, provoked above); nothing else went wrong.
    assert [e for e in tab.errors if "status of 400 (" not in e] == [], tab.errors
