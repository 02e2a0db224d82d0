"""The cross-project notebook attack, in Chromium: a developer of project A signs a notebook of A whose output
is a <script>; an admin (who may open every project's notebooks) has B's notebook open in the same browser,
then opens A's notebook. The script runs in A's origin with the admin's session of A, and tries to list and
write B's files: on B's own origin (its cookie is in the browser; fetch, a CORS-free POST, a form posted
into a frame) and through the old one-origin path `/notebook/<B>/...` on A's origin (with a forged XSRF
cookie for that path). Each notebook being its own origin, nothing of B is listed or written; the script's
write into A itself shows it ran with A's powers.
Screenshots and what the script saw: test-artifacts/e2e/test_a_script_in_one_notebook_cannot_reach_another/."""
from __future__ import annotations

import ast
import asyncio
import json
import urllib.parse
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.e2e.support import sign_in
from tests.e2e.test_notebooks import new_member
from tests.notebooks.origin_client import enter, platform_session
from tests.notebooks.test_runtime import _run_cell
from tests.support import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # chromium, the platform, two JupyterLabs

SCRIPT = """
(async () => {
  const out = {};
  const B_ORIGIN = %(b_origin)s, B_PATH = %(b_path)s, A_PATH = %(a_path)s;
  const xsrf = (document.cookie.match(/(?:^|; )_xsrf=([^;]*)/) || [])[1] || "";
  const body = (name) => JSON.stringify({type: "file", format: "text", content: "written from A: " + name});
  const json = {"Content-Type": "application/json"};
  async function attempt(name, url, options) {
    try {
      const r = await fetch(url, Object.assign({credentials: "include"}, options || {}));
      out[name] = r.type === "opaque" ? "opaque" : r.status + " " + (await r.text()).slice(0, 400);
    } catch (e) { out[name] = "blocked: " + e; }
  }
  // B's own origin: the browser holds the admin's session of it.
  await attempt("list_b", B_ORIGIN + B_PATH + "api/contents");
  await attempt("put_b", B_ORIGIN + B_PATH + "api/contents/pwned-put.txt",
                {method: "PUT", headers: Object.assign({"X-XSRFToken": xsrf}, json), body: body("put")});
  await attempt("post_b", B_ORIGIN + B_PATH + "api/contents/pwned-post.txt",
                {method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body: body("post")});
  await new Promise((resolve) => {
    const frame = document.createElement("iframe");
    frame.name = "sink"; frame.style.display = "none"; frame.onload = resolve;
    document.body.appendChild(frame);
    const form = document.createElement("form");
    form.method = "POST"; form.target = "sink"; form.setAttribute("enctype", "text/plain");
    form.action = B_ORIGIN + B_PATH + "api/contents/pwned-form.txt";
    const field = document.createElement("input");
    field.name = '{"type": "file", "x": "'; field.value = '"}';
    form.appendChild(field); document.body.appendChild(form); form.submit();
    setTimeout(resolve, 5000);
  });
  // The old one-origin form on A's origin, with an XSRF cookie of its own for B's path.
  document.cookie = "_xsrf=pwn; path=" + B_PATH;
  await attempt("list_b_path", B_PATH + "api/contents");
  await attempt("put_b_path", B_PATH + "api/contents/pwned-path.txt",
                {method: "PUT", headers: Object.assign({"X-XSRFToken": "pwn"}, json), body: body("path")});
  // A itself, with A's own XSRF token: what any member's script may do in A.
  await attempt("put_a", A_PATH + "api/contents/attack-ran.txt",
                {method: "PUT", headers: Object.assign({"X-XSRFToken": xsrf}, json), body: body("a")});
  window.__attack = out;
})();
"""

SIGN = """
import os
import nbformat
from nbformat.sign import NotebookNotary
nb = nbformat.v4.new_notebook()
nb.cells.append(nbformat.v4.new_code_cell("'report'", outputs=[nbformat.v4.new_output(
    "display_data", data={"text/html": %(html)s})]))
NotebookNotary().sign(nb)  # the server's own notary (its data folder, inherited): JupyterLab trusts it
nbformat.write(nb, os.path.join(os.environ["HOME"], "report.ipynb"))  # HOME: the work folder, Jupyter's root
"signed"
"""


def create(platform, project: dict, image: str) -> dict:
    return platform.api("POST", "/api/v1/notebook/", json={"project_id": project["id"], "name": "lab", "image": image})


def wait_running(platform, nb: dict) -> dict:
    def state():
        shown = platform.api("GET", f"/api/v1/notebook/{nb['id']}")
        assert shown["state"] not in ("failed", "stopped"), shown
        return shown if shown["state"] == "running" else None

    return wait_until(state, timeout=240, interval=1, what=f"notebook {nb['name']} to run")


def visible(folder: Path) -> list[str]:
    """The files a member sees (JupyterLab keeps its workspace and checkpoints in dot-folders)."""
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))


def work_folder(platform, project: dict) -> Path:
    return platform.home / "jobs" / "data" / project["namespace"] / "volumes" / "lab-work"


def test_a_script_in_one_notebook_cannot_reach_another(platform, browser, tab):
    suffix = uuid.uuid4().hex[:6]
    mallory, mallory_password, team_a = new_member(platform, "mallory")
    team_b = platform.api("POST", "/api/v1/project/", json={"name": f"victims-{suffix}"})
    image = platform.api("POST", "/api/v1/image/", json={"repository": "registry.local/nb/lab", "tag": f"v-{suffix}"})
    image_name = f"{image['repository']}:{image['tag']}"
    a, b = create(platform, team_a, image_name), create(platform, team_b, image_name)
    a, b = wait_running(platform, a), wait_running(platform, b)
    a_url, b_url = urllib.parse.urlsplit(a["url"]), urllib.parse.urlsplit(b["url"])
    assert a_url.hostname == f"lab.{team_a['name']}.localhost" and b_url.hostname == f"lab.{team_b['name']}.localhost"
    proxy = f"http://127.0.0.1:{a_url.port}"  # Python does not resolve *.localhost; Chromium does
    a_path, b_path = f"/notebook/{team_a['name']}/lab/", f"/notebook/{team_b['name']}/lab/"

    # B holds a secret; A's developer signs a notebook whose output is the attack.
    admin_b = enter(platform_session(platform.base, "admin", platform.admin_password), platform.base, proxy,
                    b_url.hostname, b_path + "lab")
    put = admin_b.request("PUT", f"{b_path}api/contents/secret-of-b.txt",
                          json={"type": "file", "format": "text", "content": "B's secret"})
    assert put.status_code in (200, 201), put.text
    b_folder = work_folder(platform, team_b)
    before = visible(b_folder)
    assert before == ["secret-of-b.txt"], before
    script = SCRIPT % {"b_origin": json.dumps(f"{b_url.scheme}://{b_url.netloc}"), "b_path": json.dumps(b_path),
                       "a_path": json.dumps(a_path)}
    html = f"<p id='report'>Quarterly report</p><script>{script}</script>"
    attacker = enter(platform_session(platform.base, mallory, mallory_password), platform.base, proxy,
                     a_url.hostname, a_path + "lab")
    with ThreadPoolExecutor(1) as thread:  # Playwright's loop runs in this thread: the kernel's gets its own
        signed = thread.submit(asyncio.run, _run_cell(proxy + a_path, attacker.headers("POST"),
                                                      SIGN % {"html": repr(html)})).result()
    assert ast.literal_eval(signed) == "signed"

    # The admin has B open in the browser, then opens A's notebook.
    page = tab.page
    sign_in(page, platform.base, "admin", platform.admin_password)
    page.goto(b["url"])
    page.locator(".jp-LabShell").wait_for(timeout=120_000)
    tab.shot("b-open")
    assert any(c["domain"] == b_url.hostname for c in tab.context.cookies()), tab.context.cookies()
    page.goto(f"{a_url.scheme}://{a_url.netloc}{a_path}lab/tree/report.ipynb")
    try:
        page.get_by_text("Quarterly report").wait_for(timeout=120_000)  # the signed output, rendered trusted
        page.wait_for_function("() => window.__attack !== undefined", timeout=120_000)
    finally:
        tab.shot("a-report")
    out = page.evaluate("() => window.__attack")
    (tab.folder / "attack.json").write_text(json.dumps(out, indent=1))

    # The script ran with A's powers ...
    assert out["put_a"].startswith(("200", "201")), out
    assert (work_folder(platform, team_a) / "attack-ran.txt").is_file()
    # ... and got nothing of B: no listing, no write, whichever way it asked.
    for name in ("list_b", "list_b_path"):
        assert "secret-of-b" not in out[name], (name, out)
    assert out["list_b_path"].startswith("404"), out
    assert visible(b_folder) == before, out
    listed = admin_b.get(f"{b_path}api/contents").json()
    assert sorted(item["name"] for item in listed["content"]) == ["secret-of-b.txt"], (listed, out)
