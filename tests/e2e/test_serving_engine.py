"""An administrator sets a Kubernetes cluster's serving engine in the browser (Admin > Clusters): KServe at
creation, shown in the table and stored, then back to Deployments by editing it (docs/serving.md "With
KServe"). Screenshots: test-artifacts/e2e/test_admin_sets_a_cluster_s_serving_engine/."""
from __future__ import annotations

import re

import pytest

from tests.e2e.support import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # chromium, and the platform as processes


def test_admin_sets_a_cluster_s_serving_engine(platform, tab):
    page = tab.page
    sign_in(page, platform.base, "admin", platform.admin_password)
    page.get_by_role("link", name="Admin").click()
    page.wait_for_url(re.compile(r".*/ui/admin$"))

    page.get_by_role("button", name="New cluster").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Name").fill("gpu-lab")
    dialog.get_by_label("Kind").select_option("kubernetes")
    dialog.get_by_label("Serving engine").select_option("kserve")
    dialog.get_by_role("button", name="Create").click()
    dialog.wait_for(state="detached")
    row = page.get_by_role("row").filter(has_text="gpu-lab")
    row.get_by_role("cell", name="kserve", exact=True).wait_for()
    tab.shot("kserve")
    (stored,) = platform.api("GET", "/api/v1/cluster/?name=gpu-lab")["items"]
    assert stored["serving_engine"] == "kserve"

    page.get_by_role("button", name="Edit cluster gpu-lab").click()
    dialog = page.get_by_role("dialog")
    assert dialog.get_by_label("Serving engine").input_value() == "kserve"
    dialog.get_by_label("Serving engine").select_option("deployments")
    dialog.get_by_role("button", name="Save").click()
    dialog.wait_for(state="detached")
    row.get_by_role("cell", name="deployments", exact=True).wait_for()
    tab.shot("deployments")
    assert platform.api("GET", f"/api/v1/cluster/{stored['id']}")["serving_engine"] == "deployments"
