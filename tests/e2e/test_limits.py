"""An administrator sets limits through the browser: a refused value, the platform's backfill length and
minimum schedule interval, and the demo project's limit of runs running at once.
Screenshots: test-artifacts/e2e/test_admin_sets_limits/."""
from __future__ import annotations

import re

import pytest

from tests.e2e.support import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # chromium, and the platform as processes


@pytest.fixture()
def limits_put_back(platform):
    """The platform is shared with other modules (tests/e2e/conftest.py): its limits as they were, after."""
    before = platform.api("GET", "/api/v1/limits/")
    yield
    platform.api("PUT", "/api/v1/limits/", json={k: v["value"] if v["set"] else None
                                                 for k, v in before["platform"].items()})
    for project in before["projects"]:
        platform.api("PUT", f"/api/v1/limits/project/{project['id']}",
                     json={"max_running_runs": project["max_running_runs"]})


def test_admin_sets_limits(platform, tab, limits_put_back):
    page = tab.page
    sign_in(page, platform.base, "admin", platform.admin_password)
    page.goto(f"{platform.base}/ui/admin/limits")
    interval = page.get_by_label("Minimum schedule interval (seconds)")
    interval.wait_for()
    tab.shot("defaults")

    interval.fill("0")  # refused in the browser, before any request
    assert interval.get_attribute("aria-invalid") == "true"
    assert page.get_by_role("button", name="Save platform limits").is_disabled()
    interval.fill("300")
    page.get_by_label("Longest backfill (days)").fill("31")
    page.get_by_role("button", name="Save platform limits").click()
    page.get_by_text(re.compile(r"Now 5 min; empty")).wait_for()
    page.get_by_text(re.compile(r"Now 31 days; empty")).wait_for()

    row = page.locator("tr[data-project='demo']")
    row.get_by_role("textbox").fill("2")
    row.get_by_role("button", name="Save").click()
    row.get_by_text(re.compile(r"of 2 running")).wait_for()
    tab.shot("set")
    limits = page.evaluate("fetch('/api/v1/limits/').then(r => r.json())")
    assert limits["platform"]["min_schedule_interval"]["value"] == 300
    assert limits["platform"]["max_backfill_days"]["value"] == 31
    assert next(p for p in limits["projects"] if p["name"] == "demo")["max_running_runs"] == 2
