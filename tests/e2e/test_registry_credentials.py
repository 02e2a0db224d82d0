"""The Images page's registry credentials, through the browser against the real platform: the owner sets
them (a bad registry refused at its field), the page then says for which registry, never the password,
and the owner clears them. Screenshots: test-artifacts/e2e/test_registry_credentials/."""
from __future__ import annotations

import re
import uuid

import pytest

from tests.e2e.support import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # chromium, and the platform as processes


def test_registry_credentials(platform, tab):
    project_name = f"reg-{uuid.uuid4().hex[:6]}"
    project = platform.api("POST", "/api/v1/project/", json={"name": project_name})
    page = tab.page
    sign_in(page, platform.base, "admin", platform.admin_password)
    page.get_by_label("Project").select_option(label=f"{project_name} (owner)")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Images").click()
    page.wait_for_url(re.compile(r".*/ui/images$"))
    page.get_by_test_id("registry-credentials-state").get_by_text("none (Kubernetes builds push").wait_for()
    page.get_by_text("Registry credentials:").click()  # opens the panel
    form = page.get_by_role("form", name="Registry credentials")
    form.get_by_label("Registry").fill("https://not-a-host/")
    form.get_by_label("Username").fill("robot")
    form.get_by_label("Password or token").fill("pushing-secret-value")
    form.get_by_role("button", name="Save").click()
    refused = form.locator(".field-error")
    refused.wait_for()
    assert "registry host" in refused.inner_text()

    form.get_by_label("Registry").fill("Registry.Example.com:5000")
    form.get_by_role("button", name="Save").click()
    page.get_by_text("set for registry.example.com:5000").wait_for()
    assert form.get_by_label("Password or token").input_value() == ""  # never shown back
    answer = platform.api("GET", f"/api/v1/image_build/project/{project['id']}/registry_credentials")
    assert answer["set"] is True and "pushing-secret-value" not in str(answer)
    tab.shot("set")

    form.get_by_role("button", name="Clear").click()
    page.get_by_text("none (Kubernetes builds push").wait_for()
    assert platform.api("GET", f"/api/v1/image_build/project/{project['id']}/registry_credentials")["set"] is False
    tab.shot("cleared")
    assert [e for e in tab.errors if "status of 400 (" not in e] == [], tab.errors
