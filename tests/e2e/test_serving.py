"""Models and services through the browser, end to end: the digits pipeline runs (its serve
task makes the service `digits`), its model version appears on the Models page with a link to its run, is
deployed from there as a new service, answers the test panel correctly, a second version is uploaded from
the Models page and rolled out on it at 30 % and the split shows in the traffic figures, then it is
promoted. The test panel says the request's latency, the request logs say they are sampled, and the
traffic charts draw a line per version with a legend and a tooltip. Both services are deleted at the end,
which stops their servers.
Screenshots: test-artifacts/e2e/test_deploy_canary_and_promote_from_the_browser/."""
from __future__ import annotations

import json
import re

import pytest
import requests

from tests.e2e.support import check_chart, sign_in
from tests.support import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # chromium, and the platform as processes
OWN_PLATFORM = "the digits model's versions are numbered from 1 here, and every service is deleted at the end"

RUN_TIMEOUT = 400
SERVE_TIMEOUT_MS = 120_000


def test_deploy_canary_and_promote_from_the_browser(platform, tab):
    from sklearn.datasets import load_digits

    images, labels = load_digits(return_X_y=True)
    pipeline = platform.api("GET", "/api/v1/pipeline/", params={"name": "digits"})["items"][0]
    run = platform.api("POST", "/api/v1/pipeline_run/", json={"pipeline_id": pipeline["id"]})
    done = wait_until(lambda: (r := platform.api("GET", f"/api/v1/pipeline_run/{run['id']}"))["state"]
                      in ("succeeded", "failed", "cancelled") and r, timeout=RUN_TIMEOUT, interval=2,
                      what="the digits run to finish")
    attempts = platform.api("GET", "/api/v1/task_run/", params={"pipeline_run_id": run["id"]})["items"]
    service_id = None
    page = tab.page
    try:
        assert done["state"] == "succeeded", [(t["state"], t["reason"]) for t in attempts]
        sign_in(page, platform.base, "admin", platform.admin_password)
        page.get_by_role("link", name="Models").click()
        model = page.locator("[data-model='digits']")
        row = model.locator("tr[data-version='1']")
        row.wait_for()
        run_link = row.get_by_role("link", name=f"run #{run['id']}")
        assert run_link.get_attribute("href").endswith(f"/runs/{run['id']}")
        tab.shot("models")

        page.get_by_role("button", name="Deploy digits v1").click()
        page.get_by_label("New service").check()  # the pipeline's serve task made `digits`
        page.get_by_label("Service name").fill("digits-svc")
        page.get_by_role("button", name="Deploy", exact=True).click()
        page.wait_for_url(re.compile(r".*/ui/services\?service=\d+$"))
        service_id = int(page.url.rsplit("=", 1)[1])
        detail = page.locator(".service-detail[data-state='running']")
        detail.wait_for(timeout=SERVE_TIMEOUT_MS)

        page.get_by_label("Request body").fill(json.dumps({"instances": [images[7].tolist()]}))
        page.get_by_role("button", name="Send").click()
        answer = page.get_by_test_id("test-answer")
        answer.wait_for()
        assert page.get_by_test_id("answered-by").inner_text() == "v1"
        assert json.loads(answer.locator("pre").inner_text()) == {"predictions": [int(labels[7])]}
        assert "curl -sS -X POST" in (page.get_by_test_id("curl").text_content() or "")
        assert re.fullmatch(r"\d+(\.\d)? ms|\d+\.\d\d s", page.get_by_test_id("latency").inner_text())
        sampling = page.get_by_test_id("sampling").inner_text()  # an empty log says it holds a sample
        assert "every error" in sampling and "one in ten" in sampling, sampling
        tab.shot("answered")

        # A second version uploaded from the Models page (the run's file again: what differs is which one
        # answers), rolled out at 30 %.
        version = platform.api("GET", "/api/v1/model_version/", params={"name": "digits"})["items"][0]
        page.get_by_role("link", name="Models").click()
        page.get_by_role("button", name="Upload").click()
        page.get_by_label("Model name").fill("digits")
        page.get_by_label("File", exact=True).set_input_files(version["uri"])
        page.get_by_label("Framework").select_option("pytorch")
        page.get_by_label("Input shape").fill("n, 64")
        page.get_by_label("Metrics (JSON)").fill('{"accuracy": 0.5}')
        page.get_by_role("dialog").get_by_role("button", name="Upload").click()
        uploaded = model.locator("tr[data-version='2']")
        uploaded.wait_for()
        assert "accuracy 0.5" in uploaded.inner_text()
        v2 = platform.api("GET", "/api/v1/model_version/", params={"name": "digits"})["items"][0]
        assert (v2["version"], v2["framework"], v2["signature"]) == (2, "pytorch", version["signature"])
        assert v2["uri"] != version["uri"] and v2["files"][0]["size"] > 0
        tab.shot("uploaded")
        page.get_by_role("button", name="Deploy digits v2").click()
        page.get_by_label("Service", exact=True).select_option(label="digits-svc")
        page.get_by_label("Canary weight").fill("30")
        page.get_by_role("button", name="Deploy", exact=True).click()
        page.wait_for_url(re.compile(rf".*/ui/services\?service={service_id}$"))
        assert page.get_by_test_id("weight-v2").inner_text() == "30 %"
        page.locator("tr[data-version='v2'] .state-running").wait_for(timeout=SERVE_TIMEOUT_MS)
        page.locator(".service-detail[data-state='running']").wait_for(timeout=SERVE_TIMEOUT_MS)

        project = platform.api("GET", f"/api/v1/project/{version['project_id']}")["name"]
        url = f"{platform.base}/serving/{project}/digits-svc/predict"
        seen = {"v1": 0, "v2": 0}
        for i in range(200):
            resp = platform.admin.post(url, json={"instances": [images[i].tolist()]}, timeout=30)
            assert resp.status_code == 200, resp.text
            seen[resp.headers["X-Model-Version"]] += 1
        assert 50 <= seen["v2"] <= 70, seen

        def share() -> int | None:
            text = page.get_by_test_id("share-v2").inner_text() if page.get_by_test_id("share-v2").count() else ""
            return int(text.split()[0]) if text[:1].isdigit() else None
        observed = wait_until(share, timeout=20, interval=0.5, what="the split in the traffic figures")
        assert 25 <= observed <= 35, observed
        tooltip = check_chart(page, "Requests per second per version", ["v1", "v2"])
        assert "req/s" in tooltip, tooltip
        tab.shot("canary-30")

        page.get_by_role("button", name="Promote canary").click()
        page.get_by_test_id("weight-v2").filter(has_text="100 %").wait_for()
        assert page.locator("tr[data-version='v1']").count() == 0
        tab.shot("promoted")
        assert not tab.errors, tab.errors
    finally:
        # Every service of the run and of the test: deleting one stops its servers (they outlive runs).
        for service in platform.api("GET", "/api/v1/inference_service/")["items"]:
            requests.delete(f"{platform.base}/api/v1/inference_service/{service['id']}",
                            headers=platform.admin.headers, timeout=30)
        wait_until(lambda: not platform.api("GET", "/api/v1/inference_service/")["items"], timeout=90, interval=0.5,
                   what="the services to be gone")
