"""An administrator, through the browser: a cluster, a resource group (after a refused quantity), a
quota for the demo project, then capacity against use; and the catalog and run history pages.
Screenshots: test-artifacts/e2e/test_admin_sets_up_capacity/."""
from __future__ import annotations

import re

import pytest

from tests.e2e.support import sign_in

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
