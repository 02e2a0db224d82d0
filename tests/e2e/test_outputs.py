"""Outputs in the run view: a pipeline whose second task reads the first task's file by reference runs
on the local backend; the run view lists the first task's outputs, previews the CSV as a table and the
text file as text, charts the metrics it reported, and serves the file for download.
Screenshots: test-artifacts/e2e/test_run_view_lists_and_previews_outputs/."""
from __future__ import annotations

import uuid

import pytest
import requests
from playwright.sync_api import expect

from tests.e2e.support import sign_in
from tests.support import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # chromium, and the platform as processes

PIPELINE = """
name: {name}
project: demo
tasks:
  - name: make
    template: python
    args:
      outputs: [data.csv, notes.txt]
      script: |
        import json, os
        out = os.environ["MYAPP_OUTPUT_DIR"]
        open(os.path.join(out, "data.csv"), "w").write("city,count\\nParis,3\\nLyon,5\\n")
        open(os.path.join(out, "notes.txt"), "w").write("made by make\\n")
        with open(os.path.join(out, "metrics.jsonl"), "w") as fh:
            for step, loss in enumerate([1.0, 0.6, 0.3, 0.2]):
                fh.write(json.dumps({{"step": step, "name": "loss", "value": loss}}) + "\\n")
  - name: use
    template: python
    depends_on: [make]
    args:
      script: |
        print("use saw", open("{{{{ tasks.make.outputs.data.csv }}}}").read().count("\\n"), "lines")
"""


def test_run_view_lists_and_previews_outputs(platform, tab):
    name = f"outputs-{uuid.uuid4().hex[:6]}"
    pipeline = platform.api("POST", "/api/v1/pipeline/import", json={"yaml": PIPELINE.format(name=name)})
    run = platform.api("POST", "/api/v1/pipeline_run/", json={"pipeline_id": pipeline["id"]})
    state = wait_until(lambda: (r := platform.api("GET", f"/api/v1/pipeline_run/{run['id']}"))["state"]
                       in ("succeeded", "failed", "cancelled") and r, timeout=120, interval=1,
                       what="the run to finish")
    assert state["state"] == "succeeded", state
    page = tab.page
    sign_in(page, platform.base, "admin", platform.admin_password)
    page.goto(f"{platform.base}/ui/runs/{run['id']}")
    page.locator("[data-task='make']").click()
    page.get_by_role("tab", name="Outputs").click()
    files = page.get_by_role("table", name="Output files")
    expect(files.get_by_role("button", name="data.csv")).to_be_visible()
    expect(files.get_by_role("button", name="notes.txt")).to_be_visible()
    expect(files.get_by_role("button", name="metrics.jsonl")).to_be_visible()
    expect(page.get_by_role("img", name="loss over steps")).to_be_visible()
    tab.shot("outputs-listed")

    files.get_by_role("button", name="data.csv").click()
    table = page.get_by_role("table", name="Preview of data.csv")
    expect(table.get_by_role("columnheader", name="city")).to_be_visible()
    expect(table.get_by_role("cell", name="Lyon")).to_be_visible()
    tab.shot("csv-preview")
    files.get_by_role("button", name="notes.txt").click()
    expect(page.get_by_label("Preview of notes.txt")).to_have_text("made by make\n")

    href = files.get_by_role("row").filter(has_text="data.csv").get_by_role("link", name="Download") \
        .get_attribute("href")
    cookies = {c["name"]: c["value"] for c in tab.context.cookies()}
    download = requests.get(platform.base + href, cookies=cookies, timeout=10)
    assert download.status_code == 200 and download.content == b"city,count\nParis,3\nLyon,5\n"
    assert download.headers["Content-Disposition"].startswith("attachment")

    page.locator("[data-task='use']").click()
    page.get_by_role("tab", name="Logs").click()
    expect(page.get_by_text("use saw 3 lines")).to_be_visible()
    assert not tab.errors, tab.errors


def test_run_with_parameters_from_the_editor(platform, tab):
    name = f"params-{uuid.uuid4().hex[:6]}"
    text = (f"name: {name}\nproject: demo\nparameters: {{greeting: hi, times: 2}}\ntasks:\n"
            "  - name: say\n    template: python\n"
            "    args: {command: 'echo {{ params.greeting }} x{{ params.times }} on {{ ds }}'}\n")
    pipeline = platform.api("POST", "/api/v1/pipeline/import", json={"yaml": text})
    page = tab.page
    sign_in(page, platform.base, "admin", platform.admin_password)
    page.goto(f"{platform.base}/ui/pipelines/{pipeline['id']}")
    page.get_by_role("button", name="Run", exact=True).click()
    dialog = page.get_by_role("dialog", name="Run with parameters")
    expect(dialog.get_by_label("greeting")).to_have_value("hi")
    expect(dialog.get_by_label("times")).to_have_value("2")
    dialog.get_by_label("greeting").fill("hello")
    tab.shot("run-dialog")
    dialog.get_by_role("button", name="Run").click()
    page.wait_for_url("**/ui/runs/*")
    run_id = int(page.url.rsplit("/", 1)[-1])
    run = platform.api("GET", f"/api/v1/pipeline_run/{run_id}")
    assert run["parameters"] == {"greeting": "hello"}  # only what changed; the default fills the rest
    expect(page.locator(".run-facts")).to_contain_text("greeting=hello")  # the run view says what was given
    done = wait_until(lambda: (r := platform.api("GET", f"/api/v1/pipeline_run/{run_id}"))["state"]
                      in ("succeeded", "failed", "cancelled") and r, timeout=120, interval=1, what="the run")
    assert done["state"] == "succeeded", done
    (attempt,) = platform.api("GET", f"/api/v1/task_run/?pipeline_run_id={run_id}")["items"]
    lines = [item["line"] for item in platform.api("GET", f"/api/v1/task_run/{attempt['id']}/logs")["items"]]
    assert f"hello x2 on {done['logical_date']}" in lines
    assert not tab.errors, tab.errors
