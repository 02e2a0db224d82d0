"""Run comparison in the browser: two runs of the demo's digits pipeline at different learning rates
(`params.lr`), picked in the run history and shown side by side: the parameter, the loss and accuracy
the training reported, durations, and a chart per metric with a line per run (drawn, with a legend and a
tooltip). The versions the two runs registered carry the run's parameter and the last accuracy of its
curve, and the Models page compares them: a table marking the rows that differ, and the curves overlaid.
Screenshots: test-artifacts/e2e/test_two_digits_runs_side_by_side/."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.support import check_chart, sign_in
from tests.support import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # chromium, the platform, two real DDP trainings

RUN_TIMEOUT = 400  # the digits run: DDP training (2 processes, 12 epochs), register, serve


def test_two_digits_runs_side_by_side(platform, tab):
    from myapp.backends import JobRef
    from myapp.backends.local import LocalBackend

    pipeline = platform.api("GET", "/api/v1/pipeline/?name=digits")["items"][0]
    runs = [platform.api("POST", "/api/v1/pipeline_run/",
                         json={"pipeline_id": pipeline["id"], "parameters": {"lr": lr}})
            for lr in (0.05, 0.01)]
    try:
        for run in runs:  # what is compared is the training: its attempt must have succeeded
            wait_until(lambda r=run: platform.api("GET", f"/api/v1/pipeline_run/{r['id']}")["state"]
                       in ("succeeded", "failed", "cancelled"), timeout=RUN_TIMEOUT, interval=1,
                       what=f"digits run {run['id']} to finish")
            attempts = platform.api("GET", f"/api/v1/task_run/?pipeline_run_id={run['id']}")["items"]
            train = [a for a in attempts if a["manifests"] and a["manifests"][0]["kind"] == "PyTorchJob"]
            assert [a["state"] for a in train] == ["succeeded"], [(a["state"], a["reason"]) for a in attempts]
        page = tab.page
        sign_in(page, platform.base, "admin", platform.admin_password)
        page.goto(f"{platform.base}/ui/pipelines/{pipeline['id']}/runs")
        for run in runs:
            page.get_by_label(f"Compare run {run['id']}").check()
        page.get_by_role("link", name="Compare 2 runs").click()
        page.wait_for_url(f"**/ui/pipelines/{pipeline['id']}/compare?runs={runs[0]['id']},{runs[1]['id']}")

        table = page.get_by_role("table", name="Runs side by side")
        lr_row = table.get_by_role("row").filter(has_text="params.lr")
        expect(lr_row.get_by_role("cell")).to_have_text(["0.05", "0.01"])
        expect(lr_row).to_have_attribute("data-differs", "true")  # marked: the runs differ there
        for key in ("train/loss", "train/accuracy"):
            expect(table.get_by_role("rowheader", name=key)).to_be_visible()
            tooltip = check_chart(page, f"{key} per run", [f"run {run['id']}" for run in runs])
            assert f"run {runs[0]['id']}" in tooltip, tooltip
        expect(table.get_by_role("row").filter(has_text="Duration").get_by_role("cell")).to_have_count(2)
        tab.shot("compared")

        # The versions the runs registered: the run's parameter, the accuracy's last value and its curve.
        versions = {v["run_id"]: v for v in platform.api("GET", "/api/v1/model_version/?name=digits")["items"]}
        picked = [versions[run["id"]] for run in runs]
        for version, lr in zip(picked, (0.05, 0.01), strict=True):
            assert version["params"]["lr"] == lr, version  # the run's value of the pipeline's parameter
            curve = platform.api("GET", f"/api/v1/model_version/{version['id']}/metric_history")["metrics"]["accuracy"]
            assert [p["step"] for p in curve] == list(range(1, 13))  # one per epoch
            assert version["metrics"]["accuracy"] == curve[-1]["value"] > 0.8
        page.get_by_role("link", name="Models").click()
        for version in picked:
            page.get_by_label(f"Compare digits v{version['version']}").check()
        labels = [f"v{version['version']}" for version in picked]
        side = page.get_by_role("table", name="Versions side by side")
        lr = side.locator("tr", has=page.get_by_role("rowheader", name=re.compile(r"^lr( \(differs\))?$")))
        expect(lr.get_by_role("cell")).to_have_text(["0.05", "0.01"])
        expect(lr).to_have_attribute("data-differs", "true")
        expect(side.locator("tr", has=page.get_by_role("rowheader", name="framework"))).to_have_attribute(
            "data-differs", "false")
        expect(side.get_by_role("rowheader", name="accuracy")).to_be_visible()
        tooltip = check_chart(page, "accuracy per version", labels)
        assert all(label in tooltip for label in labels), tooltip
        tab.shot("versions-compared")
        assert not tab.errors, tab.errors
    finally:  # the serve task's model servers outlive their runs by design: stop them here
        backend = LocalBackend(platform.home / "jobs")
        for run in runs:
            for attempt in platform.api("GET", f"/api/v1/task_run/?pipeline_run_id={run['id']}")["items"]:
                if attempt["backend_ref"] and attempt["manifests"][0]["kind"] == "Deployment":
                    backend.cancel(JobRef.from_dict(attempt["backend_ref"]))
