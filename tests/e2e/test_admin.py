"""An administrator, through the browser: a cluster, a resource group (after a refused quantity), a
quota for the demo project, then capacity against use; and the catalog and run history pages. Then a
user's sign-in limits seen and cleared on the Users page, and signing out (a POST with the CSRF token:
a visit to /logout/ signs no one out).
Screenshots: test-artifacts/e2e/test_admin_sets_up_capacity/, .../test_admin_clears_sign_in_limits/."""
from __future__ import annotations

import os
import re
import uuid

import pytest
import requests

from tests.e2e.support import Page, sign_in
from tests.support import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # chromium, and the platform as processes


def create(page, noun: str, fill) -> None:
    page.get_by_role("button", name=f"New {noun}").click()
    dialog = page.get_by_role("dialog")
    fill(dialog)
    dialog.get_by_role("button", name="Create").click()
    dialog.wait_for(state="detached")


def test_admin_sets_up_capacity(platform, tab):
    page = tab.page
    sign_in(page, platform.base, "admin", platform.admin_password)
    page.get_by_role("link", name="Admin").click()
    page.wait_for_url(re.compile(r".*/ui/admin$"))

    def cluster(d):
        d.get_by_label("Name").fill("lab")
        d.get_by_label("Kind").select_option("local")

    create(page, "cluster", cluster)
    page.get_by_role("cell", name="lab", exact=True).wait_for()
    tab.shot("cluster")

    page.get_by_role("link", name="Resource groups").click()
    page.get_by_role("button", name="New resource group").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Name").fill("a100")
    dialog.get_by_label("Cluster").select_option(label="lab (local)")
    dialog.get_by_label("CPU").fill("32")
    dialog.get_by_label("Memory").fill("lots")
    dialog.get_by_label("GPUs").fill("4")
    dialog.get_by_role("button", name="Create").click()
    dialog.locator(".field-error").first.wait_for()
    tab.shot("resource-group-refused")
    assert dialog.get_by_label("Memory").get_attribute("aria-invalid") == "true"
    dialog.get_by_label("Memory").fill("256Gi")
    dialog.get_by_role("button", name="Create").click()
    dialog.wait_for(state="detached")
    # The group's name in the table is the link to its detail page (ResourceGroupsTab.tsx names it).
    page.get_by_role("link", name="Open resource group a100", exact=True).wait_for()

    page.get_by_role("link", name="Quotas").click()

    def quota(d):
        d.get_by_label("Project").select_option(label="demo")
        d.get_by_label("Resource group").select_option(label="a100")
        d.get_by_label("CPU").fill("8")
        d.get_by_label("Memory").fill("64Gi")
        d.get_by_label("GPUs").fill("2")

    create(page, "quota", quota)
    tab.shot("quota")

    page.get_by_role("link", name="Usage").click()
    meter = page.get_by_role("meter", name=re.compile(r"CPU used of a100"))
    meter.wait_for()
    assert meter.get_attribute("aria-valuemax") is not None
    page.get_by_role("meter", name=re.compile(r"of demo against its quota on a100")).first.wait_for()
    tab.shot("usage")

    page.get_by_role("link", name="Catalog").click()
    page.get_by_role("button", name=re.compile("pytorch-ddp")).first.click()
    page.get_by_text("--epochs").first.wait_for()
    tab.shot("catalog")

    page.get_by_role("link", name="Runs", exact=True).click()
    page.wait_for_url(re.compile(r".*/ui/runs$"))
    page.get_by_role("heading", name=re.compile("Runs")).first.wait_for()
    tab.shot("runs")
    assert tab.errors == [], tab.errors


def test_admin_clears_sign_in_limits(platform, tab, browser):
    name, password = f"target-{uuid.uuid4().hex[:6]}", f"a sound passphrase {uuid.uuid4().hex[:6]}"
    platform.api("POST", "/api/v1/user/", json={"username": name, "first_name": "Target",
                                                "email": f"{name}@example.org", "password": password})
    # Wrong passwords from this machine: three free, then this address waits before its next try.
    wrong = [requests.post(f"{platform.base}/api/v1/security/login", timeout=10, json={
        "username": name, "password": f"guess {n}", "provider": "db"}) for n in range(5)]
    assert [r.status_code for r in wrong] == [401, 401, 401, 401, 429], [r.text for r in wrong]
    assert wrong[-1].headers["Retry-After"] == "1"

    page = tab.page
    sign_in(page, platform.base, "admin", platform.admin_password)
    page.get_by_role("link", name="Users").click()
    page.get_by_role("button", name=f"Sign-in limits of {name}").click()
    dialog = page.get_by_role("dialog")
    addresses = dialog.get_by_role("table", name="Addresses after failed passwords")
    addresses.get_by_role("row").filter(has_text="127.0.0.1").filter(has_text="4").wait_for()
    dialog.get_by_role("table", name="Known addresses").wait_for(state="detached")  # never signed in
    tab.shot("limits")
    dialog.get_by_role("button", name="Clear limits").click()
    dialog.get_by_role("status").filter(has_text="every address may try again now").wait_for()
    assert addresses.count() == 0
    tab.shot("cleared")
    dialog.get_by_role("button", name="Close", exact=True).last.click()
    page.get_by_role("status").filter(has_text=f"Cleared the sign-in limits of {name}").wait_for()

    # The user signs in; a visit to /logout/ (a link or an image elsewhere) signs no one out; Sign out does.
    own = Page(browser, "test_admin_clears_sign_in_limits/user")
    user_page = own.page
    missing: list[str] = []
    user_page.on("response", lambda r: r.status == 404 and missing.append(r.url))
    sign_in(user_page, platform.base, name, password)
    assert user_page.goto(f"{platform.base}/logout/").status == 405
    user_page.goto(f"{platform.base}/ui/pipelines")
    user_page.get_by_role("button", name="Sign out").click()
    user_page.get_by_role("button", name="Sign in").wait_for()
    own.shot("signed-out")
    user_page.goto(f"{platform.base}/ui/pipelines")
    user_page.get_by_role("button", name="Sign in").wait_for()  # the session ended on the server
    assert user_page.evaluate("fetch('/api/v1/me/').then(r => r.status)") == 401
    own.context.close()
    assert tab.errors == [], tab.errors
    # Chromium notes the answers provoked on purpose (405, 401) and the plain 405 page's favicon (404).
    assert all(url.endswith("/favicon.ico") for url in missing), missing
    assert [e for e in own.errors if not (e.startswith("Failed to load resource") and any(
        f"status of {status} (" in e for status in (401, 404, 405)))] == [], own.errors


SLEEPER = """
name: sleeper
project: demo
tasks:
  - name: nap
    template: python
    args: {script: "import time; time.sleep(600)"}
"""


def test_admins_first_view_shows_this_machine_and_what_runs_on_it(platform, tab):
    """`myapp init` registered this machine (a local cluster, a default group of its CPUs, memory and GPUs);
    a demo task naming no resource group runs on it, and the Usage tab shows it under the demo project and
    the group's detail among what runs there."""
    group = platform.api("GET", "/api/v1/resource_group/", params={"name": "default"})["items"][0]
    assert group["cpu_millicores"] == (os.cpu_count() or 1) * 1000
    pipeline = platform.api("POST", "/api/v1/pipeline/import", json={"yaml": SLEEPER})
    run = platform.api("POST", "/api/v1/pipeline_run/", json={"pipeline_id": pipeline["id"]})
    wait_until(lambda: [a for a in platform.api("GET", f"/api/v1/task_run/?pipeline_run_id={run['id']}")["items"]
                        if a["state"] == "running"], timeout=90, interval=1, what="the demo's task to run")

    page = tab.page
    sign_in(page, platform.base, "admin", platform.admin_password)
    page.goto(f"{platform.base}/ui/admin/clusters")
    page.locator("td strong", has_text=re.compile("^local$")).wait_for()  # its name (its kind is local too)
    page.get_by_role("link", name="Resource groups").click()
    page.get_by_role("link", name="Open resource group default", exact=True).wait_for()
    page.get_by_role("link", name="Usage").click()
    usage = page.locator("section[data-group='default']")
    cpu = usage.get_by_role("meter", name="CPU used of default")
    cpu.wait_for()
    assert cpu.get_attribute("aria-valuemax") == str(group["cpu_millicores"])
    demo = usage.locator("tr[data-project='demo']")
    assert demo.locator("td.usage-running").inner_text() == "1 job"
    tab.shot("usage-of-this-machine")
    # The group's detail counts the same task, though it names no group.
    page.get_by_role("link", name="Resource groups").click()
    page.get_by_role("link", name="Open resource group default", exact=True).click()
    running = page.get_by_role("region", name=re.compile(r"^Running \(\d+\)$"))
    running.get_by_role("link", name="demo / sleeper / nap").wait_for()
    tab.shot("default-group-detail")
    platform.api("POST", f"/api/v1/pipeline_run/{run['id']}/cancel")
    assert tab.errors == [], tab.errors
