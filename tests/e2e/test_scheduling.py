"""An administrator opens a resource group (capacity, quotas per project, the task that runs and the one that
waits with its reason, refreshed), then
runs the simulator on the bundled sample trace with two policies and sees both sets of figures and the charts.
Screenshots: test-artifacts/e2e/test_admin_sees_a_resource_group_and_simulates/."""
from __future__ import annotations

import re

import pytest

from tests.e2e.support import check_chart, sign_in
from tests.support import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # chromium, and the platform as processes

PIPELINE = """
name: hold-the-pool
project: demo
tasks:
  - name: first
    template: python
    resource_group: {group}
    resources: {{cpu: "1", memory: 256Mi}}
    args: {{script: "import time; time.sleep(120)"}}
  - name: second
    template: python
    resource_group: {group}
    resources: {{cpu: "1", memory: 256Mi}}
    args: {{script: "import time; time.sleep(120)"}}
"""


def test_admin_sees_a_resource_group_and_simulates(platform, tab):
    page = tab.page
    clusters = platform.api("GET", "/api/v1/cluster/", params={"kind": "local"})["items"]
    cluster = clusters[0] if clusters else platform.api("POST", "/api/v1/cluster/",
                                                        json={"name": "here", "kind": "local"})
    group = platform.api("POST", "/api/v1/resource_group/", json={
        "name": "small-pool", "cluster_id": cluster["id"], "cpu": "1", "memory": "4Gi", "gpus": 0})
    project = platform.api("GET", "/api/v1/project/", params={"name": "demo"})["items"][0]
    platform.api("POST", "/api/v1/quota/", json={"project_id": project["id"], "resource_group_id": group["id"],
                                                  "cpu": "1", "memory": "2Gi", "gpus": 0})
    # Two tasks of one CPU each on a group of one CPU: one runs, the other waits for it, with its reason.
    pipeline = platform.api("POST", "/api/v1/pipeline/import", json={"yaml": PIPELINE.format(group=group["name"])})
    run = platform.api("POST", "/api/v1/pipeline_run/", json={"pipeline_id": pipeline["id"]})
    wait_until(lambda: (s := platform.api("GET", f"/api/v1/resource_group/{group['id']}/status"))["running"]
               and s["queue"], timeout=90, interval=1, what="one task to run and the other to wait")
    status = platform.api("GET", f"/api/v1/resource_group/{group['id']}/status")

    sign_in(page, platform.base, "admin", platform.admin_password)
    page.goto(f"{platform.base}/ui/admin/resource-groups")
    page.get_by_role("link", name=f"Open resource group {group['name']}").click()
    page.wait_for_url(re.compile(rf".*/ui/admin/resource-groups\?group={group['id']}$"))
    page.get_by_role("heading", name=f"Resource group {group['name']}").wait_for()
    cpu = page.get_by_role("meter", name=f"CPU used of {group['name']}")
    cpu.wait_for()
    assert cpu.get_attribute("aria-valuemax") == str(status["capacity"]["cpu_millicores"])
    demo = page.locator("tr[data-project='demo']")
    demo.get_by_role("meter", name=f"CPU of demo against its quota on {group['name']}").wait_for()
    assert demo.get_by_role("meter", name=re.compile("^CPU of demo")).get_attribute("aria-valuemax") == "1000"
    page.get_by_role("heading", name="Running (1)").wait_for()
    page.get_by_role("heading", name="Queue (1)").wait_for()
    waiting = status["queue"][0]
    row = page.locator(f"tr[data-task-run='{waiting['task_run_id']}']")
    assert row.locator("td.reason").text_content() == waiting["reason"]
    assert waiting["reason"].startswith("waiting:"), waiting
    assert row.get_by_role("link").text_content() == f"demo / {pipeline['name']} / {waiting['task']}"
    for node in status["capacity"]["nodes"]:
        page.locator(f"tr[data-node='{node['name']}']").wait_for()
    page.get_by_text(re.compile(r"refreshes every 5 s")).wait_for()
    first = page.get_by_text(re.compile(r"^Updated ")).text_content()
    page.wait_for_timeout(5_500)  # the view asks again on its own
    assert page.get_by_text(re.compile(r"^Updated ")).text_content() != first
    tab.shot("resource-group")
    platform.api("POST", f"/api/v1/pipeline_run/{run['id']}/cancel")

    page.get_by_role("link", name="Simulator").click()
    page.wait_for_url(re.compile(r".*/ui/admin/simulator$"))
    form = page.get_by_role("form", name="Simulation")
    form.get_by_label("Trace").select_option("philly-sample")
    form.get_by_label(re.compile(r"^GPUs")).fill("128")
    form.get_by_label(re.compile(r"^Jobs")).fill("1000")
    form.get_by_label("Policy", exact=True).select_option("gang-fifo")
    form.get_by_label("Compare with").select_option("sieve")
    tab.shot("simulator-form")
    form.get_by_role("button", name="Run simulation").click()
    page.get_by_role("heading", name="philly-sample: 1,000 jobs on 128 GPUs").wait_for(timeout=60_000)
    figures = page.locator("table.simulation-figures")
    assert figures.locator("th[data-policy]").all_text_contents() == ["gang-fifo", "sieve"]
    average = figures.locator("tr", has=page.get_by_role("rowheader", name="Average JCT"))
    cells = average.locator("td").all_text_contents()
    assert len(cells) == 3 and re.fullmatch(r"\d+\.\d\d\N{MULTIPLICATION SIGN}", cells[2]), cells
    for chart in ("GPU utilization over time", "Jobs waiting over time", "Average JCT (hours) by submission time"):
        check_chart(page, f"{chart}: gang-fifo and sieve", ["gang-fifo", "sieve"])  # one line per policy
    page.locator(".simulation .charts").scroll_into_view_if_needed()
    tab.shot("simulation")
    assert not tab.errors, tab.errors
