"""A data scientist's first week, as one walk through the browser by a user who has never signed in: sign in
from the site's root (the address bar follows `next`), find no project and create one from the empty state
(its namespace shown, the creator its owner); open a notebook at once on a platform default environment
(nothing built), run a terminal command and a cell in it; build an environment from a package list (a wheel
this test makes, from the platform's package index: no network; a requirement with an option is refused
naming its line; the live log; the same list again from the cache); import a pipeline, pick that environment
for its python task in the editor, run it and read the task's log importing the package; join the demo
project, run the digits demo twice at two learning rates from the editor, compare the runs (parameters,
metrics, a chart per metric), see accuracy on both model versions and compare them (a table marking what
differs, the curves overlaid); deploy a version as a new service, send a test request and read its latency.
A screenshot of each page is kept: test-artifacts/e2e/test_first_week/ (or under MYAPP_TEST_ARTIFACTS)."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid

import pytest
from playwright.sync_api import expect

from tests.e2e.support import check_chart, publish_wheel
from tests.e2e.test_notebooks import run_cell
from tests.support import MYAPP, wait_until
from tests.test_example_pipeline import check_demo_run, check_demo_service

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # chromium, the platform, two real DDP trainings

RUN_TIMEOUT = 400  # the digits run: DDP training (2 processes, 12 epochs), register, serve
START_TIMEOUT_MS = 180_000
PROBE = """
name: probe
project: {project}
tasks:
  - name: probe
    template: python
    args: {{script: "import sys, {module}; print('imported', {module}.VALUE, sys.prefix)"}}
"""


def test_first_week(platform, tab):
    from sklearn.datasets import load_digits

    suffix = uuid.uuid4().hex[:6]
    username, password, project_name = f"wendy-{suffix}", uuid.uuid4().hex, f"first-{suffix}"
    made = subprocess.run([*MYAPP, "create-user", username, "--password", password], env=platform.env,
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    print(f"screenshots of the walk: {tab.folder}")
    page = tab.page

    # ---- sign in from the site's root: the address bar follows `next` --------------------------------------
    page.goto(f"{platform.base}/")
    page.wait_for_url(re.compile(r".*/ui/login\?next=%2F$"))
    tab.shot("sign-in")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*/ui/pipelines$"))
    # Signed in already, the sign-in page goes on to `next` (same-site paths only).
    page.goto(f"{platform.base}/ui/login?next=%2Fprojects")
    page.wait_for_url(re.compile(r".*/ui/projects$"))
    page.goto(f"{platform.base}/ui/login?next=%2F%2Fevil.example")
    page.wait_for_url(re.compile(r".*/ui/pipelines$"))

    # ---- no project yet: the empty state leads to the form; the creator owns the project ---------------------
    page.get_by_role("heading", name="No project yet").wait_for()
    tab.shot("no-project")
    page.get_by_role("link", name="Create a project").click()
    dialog = page.get_by_role("dialog", name="New project")
    dialog.locator("input[name=name]").fill(project_name)
    assert f"run: {project_name}." in dialog.get_by_text("Where its jobs").inner_text()  # the namespace it gets
    dialog.get_by_label("Description").fill("Where Wendy tries things")
    tab.shot("new-project")
    dialog.get_by_role("button", name="Create project").click()
    page.wait_for_url(re.compile(r".*/ui/pipelines$"))
    assert page.get_by_label("Project").locator("option:checked").inner_text() == f"{project_name} (owner)"
    project = platform.api("GET", "/api/v1/project/", params={"name": project_name})["items"][0]

    # ---- a notebook on day one: the platform's default environment, chosen already ---------------------------
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Notebooks").click()
    page.wait_for_url(re.compile(r".*/ui/notebooks$"))
    page.get_by_role("button", name="New notebook").click()
    dialog = page.get_by_role("dialog")
    offered = dialog.get_by_label("Image or environment")
    default = f"myapp/python-ml:{sys.version_info[0]}.{sys.version_info[1]}"
    wait_until(lambda: offered.input_value() == default, timeout=30, what="the default environment chosen")
    assert offered.locator("optgroup").first.get_attribute("label") == "Platform defaults"
    assert offered.locator("optgroup").first.locator("option").all_inner_texts() == [
        default, "ghcr.io/myapp-platform/notebook:1.0.0"]
    # nothing built in the project: the dialog says how to get more
    dialog.get_by_role("link", name="build an environment").wait_for()
    dialog.get_by_label("Name").fill("day-one")
    tab.shot("new-notebook")
    dialog.get_by_role("button", name="Create and start").click()
    dialog.wait_for(state="detached")
    row = page.locator('tr[data-notebook="day-one"]')
    row.locator('[data-state="running"]').first.wait_for(timeout=START_TIMEOUT_MS)
    tab.shot("notebook-running")
    with page.context.expect_page() as opened:
        row.get_by_role("link", name="Open day-one in JupyterLab").click()
    lab = opened.value
    lab.wait_for_url(re.compile(rf".*/notebook/{project_name}/day-one/lab.*"), timeout=60_000)
    work = platform.home / "jobs" / "data" / project["namespace"] / "volumes" / "day-one-work"
    lab.locator(".jp-LauncherCard[data-category='Other'][title*='terminal']").first.click(timeout=90_000)
    lab.locator(".jp-Terminal").first.click(timeout=60_000)
    lab.keyboard.type("python -c 'import os, sys; print(sys.executable, os.getcwd())' > where.txt\n")
    wait_until(lambda: (work / "where.txt").is_file() and (work / "where.txt").read_text().strip(), timeout=60,
               what="the terminal's command to finish")
    lab.screenshot(path=str(tab.folder / f"{tab.step + 1:02d}-notebook-terminal.png"))
    tab.step += 1
    terminal_python, terminal_cwd = (work / "where.txt").read_text().split()
    assert terminal_cwd == str(work)
    lab.locator(".lm-TabBar-addButton:visible").first.click()  # a new launcher
    lab.locator(".jp-LauncherCard[data-category='Notebook']").first.click(timeout=90_000)
    try:
        output = run_cell(lab, "import os, sys; print(6 * 7, sys.executable, os.getcwd())")
    finally:
        lab.screenshot(path=str(tab.folder / f"{tab.step + 1:02d}-notebook-cell.png"))
        tab.step += 1
    assert output.strip() == f"42 {terminal_python} {work}", output  # the terminal's python and folder
    lab.close()
    row.get_by_role("button", name="Stop day-one").click()  # not waited on: it stops while the walk goes on

    # ---- an environment from a package list: refused naming the line, built live, then from the cache --------
    requirement = publish_wheel(platform, "walkprobe", 7)
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Images").click()
    page.wait_for_url(re.compile(r".*/ui/images$"))
    form = page.get_by_role("form", name="New build")
    form.get_by_label("Repository").fill(f"registry.local/{project_name}/probe-env")
    form.get_by_label("Tag").fill("v1")
    form.get_by_label("Python packages").fill(f"{requirement}\n--index-url=http://evil.example\n")
    form.get_by_role("button", name="Build").click()
    refused = form.locator(".field-error")
    refused.wait_for()
    assert "line 2" in refused.inner_text() and "no options" in refused.inner_text()
    form.get_by_label("Python packages").fill(f"{requirement}\n")
    form.get_by_role("button", name="Build").click()
    page.locator('section.build-detail[data-state="succeeded"]').wait_for(timeout=180_000)
    log = page.get_by_role("log", name="Build log")
    page.get_by_text("Successfully installed walkprobe-0.1").wait_for()
    assert "environment" in log.inner_text() and "is ready" in log.inner_text()
    image = f"registry.local/{project_name}/probe-env:v1"
    assert f"built {image}" in page.get_by_test_id("build-reason").inner_text()
    log.scroll_into_view_if_needed()
    tab.shot("environment-built")
    form.get_by_label("Tag").fill("v2")
    form.get_by_role("button", name="Build").click()
    page.locator('section.build-detail[data-state="succeeded"]').filter(has_text="probe-env:v2").wait_for(
        timeout=60_000)
    assert "(from the cache)" in page.get_by_test_id("build-reason").inner_text()
    assert page.locator("table.build-table tbody tr").count() == 2

    # ---- a pipeline's python task runs in that environment, picked in the editor ---------------------------
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Pipelines").click()
    page.get_by_role("button", name="Import YAML").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("YAML").fill(PROBE.format(project=project_name, module="walkprobe"))
    dialog.get_by_role("button", name="Import").click()
    page.wait_for_url(re.compile(r".*/ui/pipelines/\d+$"))
    page.locator(".react-flow__node:has([data-task='probe'])").click()
    choice = page.locator("form.task-form").get_by_label("Image or environment")
    assert choice.input_value() == ""  # the template's image until one is picked
    choice.select_option(label=f"{image} (environment)")
    page.get_by_role("button", name="Save").click()
    expect(page.locator(".save-status")).to_have_text("Saved")
    tab.shot("task-environment")
    page.get_by_role("button", name="Run").click()
    page.wait_for_url(re.compile(r".*/ui/runs/\d+$"))
    page.locator('.run-node[data-task="probe"][data-state="succeeded"]').wait_for(
        state="attached", timeout=120_000)
    page.locator(".run-node[data-task='probe']").dispatch_event("click")
    page.get_by_role("log", name="Task logs").get_by_text(re.compile(r"imported 7 .*/environments/")).wait_for(
        timeout=30_000)
    tab.shot("task-imported")

    # ---- the demo, twice, from the editor at two learning rates ---------------------------------------------
    demo = platform.api("GET", "/api/v1/project/", params={"name": "demo"})["items"][0]
    platform.api("POST", f"/api/v1/project/{demo['id']}/members", json={"username": username, "role": "developer"})
    pipeline = platform.api("GET", "/api/v1/pipeline/", params={"name": "digits"})["items"][0]
    page.goto(f"{platform.base}/ui/pipelines")
    page.get_by_label("Project").select_option(label="demo (developer)")
    runs = []
    for lr in ("0.05", "0.01"):
        page.goto(f"{platform.base}/ui/pipelines/{pipeline['id']}")
        page.get_by_role("button", name="Run").click()
        asked = page.get_by_role("form", name="Run parameters")
        asked.locator("input[name=lr]").fill(lr)
        asked.get_by_role("button", name="Run").click()
        page.wait_for_url(re.compile(r".*/ui/runs/\d+$"))
        runs.append(int(page.url.rsplit("/", 1)[1]))
    tab.shot("demo-run")
    for run in runs:  # what is compared is the training: its attempt must have succeeded
        wait_until(lambda r=run: platform.api("GET", f"/api/v1/pipeline_run/{r}")["state"]
                   in ("succeeded", "failed", "cancelled"), timeout=RUN_TIMEOUT, interval=1,
                   what=f"digits run {run} to finish")
        attempts = platform.api("GET", f"/api/v1/task_run/?pipeline_run_id={run}")["items"]
        train = [a for a in attempts if a["manifests"] and a["manifests"][0]["kind"] == "PyTorchJob"]
        assert [a["state"] for a in train] == ["succeeded"], [(a["state"], a["reason"]) for a in attempts]
    # The Quick start's promise on this platform (`myapp init`, `myapp run`): logs, metrics, the registered
    # versions and the service the demo's serve task made, as tests/test_example_pipeline.py checks them.
    demo_versions = [check_demo_run(platform.base, platform.admin, run, float(lr))
                     for run, lr in zip(runs, ("0.05", "0.01"), strict=True)]
    check_demo_service(platform.base, platform.admin, demo_versions)

    # ---- the two runs side by side ---------------------------------------------------------------------------
    page.goto(f"{platform.base}/ui/pipelines/{pipeline['id']}/runs")
    for run in runs:
        page.get_by_label(f"Compare run {run}").check()
    page.get_by_role("link", name="Compare 2 runs").click()
    page.wait_for_url(f"**/ui/pipelines/{pipeline['id']}/compare?runs={runs[0]},{runs[1]}")
    table = page.get_by_role("table", name="Runs side by side")
    lr_row = table.get_by_role("row").filter(has_text="params.lr")
    expect(lr_row.get_by_role("cell")).to_have_text(["0.05", "0.01"])
    expect(lr_row).to_have_attribute("data-differs", "true")  # marked: the runs differ there
    for key in ("train/loss", "train/accuracy"):
        expect(table.get_by_role("rowheader", name=key)).to_be_visible()
        tooltip = check_chart(page, f"{key} per run", [f"run {run}" for run in runs])
        assert f"run {runs[0]}" in tooltip, tooltip
    expect(table.get_by_role("row").filter(has_text="Duration").get_by_role("cell")).to_have_count(2)
    tab.shot("runs-compared")

    # ---- accuracy on both versions, and the versions compared ------------------------------------------------
    versions = {v["run_id"]: v for v in platform.api("GET", "/api/v1/model_version/?name=digits")["items"]}
    picked = [versions[run] for run in runs]
    for version, lr in zip(picked, ("0.05", "0.01"), strict=True):
        assert str(version["params"]["lr"]) == lr, version  # the run's value of the pipeline's parameter
        curve = platform.api("GET", f"/api/v1/model_version/{version['id']}/metric_history")["metrics"]["accuracy"]
        assert [p["step"] for p in curve] == list(range(1, 13))  # one per epoch
        assert version["metrics"]["accuracy"] == curve[-1]["value"] > 0.8
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Models").click()
    model = page.locator("[data-model='digits']")
    for version in picked:
        shown = model.locator(f"tr[data-version='{version['version']}'] td.metrics")
        expect(shown).to_contain_text(re.compile(r"accuracy 0\.\d+"))
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

    # ---- deploy the better one as a service of its own, and ask it --------------------------------------------
    best = max(picked, key=lambda v: v["metrics"]["accuracy"])
    page.get_by_role("button", name=f"Deploy digits v{best['version']}").click()
    page.get_by_label("New service").check()  # the demo's serve task made `digits`
    page.get_by_label("Service name").fill(f"walk-{suffix}")
    page.get_by_role("button", name="Deploy", exact=True).click()
    page.wait_for_url(re.compile(r".*/ui/services\?service=\d+$"))
    page.locator(".service-detail[data-state='running']").wait_for(timeout=START_TIMEOUT_MS)
    images, digits = load_digits(return_X_y=True)
    page.get_by_label("Request body").fill(json.dumps({"instances": [images[7].tolist()]}))
    page.get_by_role("button", name="Send").click()
    answer = page.get_by_test_id("test-answer")
    answer.wait_for()
    assert page.get_by_test_id("answered-by").inner_text() == f"v{best['version']}"
    assert json.loads(answer.locator("pre").inner_text()) == {"predictions": [int(digits[7])]}
    assert re.fullmatch(r"\d+(\.\d)? ms|\d+\.\d\d s", page.get_by_test_id("latency").inner_text())
    tab.shot("service-answered")
    assert [e for e in tab.errors if "status of 400 (" not in e] == [], tab.errors  # 400: the refused build
