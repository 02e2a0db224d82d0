"""A real notebook: JupyterLab in the job sandbox, on its own origin through the proxy, entered by the
platform's hand-off by members only, HTTP and a kernel over a websocket, Jupyter's XSRF check applying to
browser requests, its own folders out of the work folder; stopped, started again with its work folder,
deleted with nothing left."""
from __future__ import annotations

import asyncio
import datetime as dt
import json
import uuid
from pathlib import Path
from typing import Any

import psutil
import pytest
import requests

from tests.notebooks.origin_client import NAVIGATE, OriginClient, enter, platform_session
from tests.world import add_member, created

pytestmark = pytest.mark.slow  # JupyterLab starts twice: about 20 s


def _reconcile(app, notebook_id: int, backend, tmp_path: Path):
    from myapp.backends.registry import log_archive
    from myapp.notebooks.lifecycle import Hooks, reconcile

    with app.app_context():
        return reconcile(notebook_id, Hooks(backend_for=lambda _group: backend, archive=log_archive(),
                                            start_wait=60))


async def _terminal_echo(base: str, headers: dict[str, str], text: str) -> str:
    """Open a terminal through the proxy and echo `text` in it; returns what came back."""
    import aiohttp

    async with aiohttp.ClientSession() as session:
        async with session.post(f"{base}api/terminals", headers=headers) as answer:
            assert answer.status == 200, await answer.text()
            name = (await answer.json())["name"]
        seen = ""
        async with session.ws_connect(f"{base.replace('http', 'ws', 1)}terminals/websocket/{name}",
                                      headers=headers) as ws:
            await ws.send_str(json.dumps(["stdin", f"echo {text}\r"]))
            async with asyncio.timeout(30):
                async for message in ws:
                    kind, *rest = json.loads(message.data)
                    if kind == "stdout":
                        seen += rest[0]
                        if seen.count(text) >= 2:  # the typed command's echo, then its output
                            return seen
    return seen


async def _run_cell(base: str, headers: dict[str, str], code: str) -> str:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        async with session.post(f"{base}api/kernels", headers=headers, json={"name": "python3"}) as answer:
            assert answer.status == 201, await answer.text()
            kernel = (await answer.json())["id"]
        ws_base = base.replace("http", "ws", 1)
        async with session.ws_connect(f"{ws_base}api/kernels/{kernel}/channels", headers=headers) as ws:
            msg_id = uuid.uuid4().hex
            await ws.send_str(json.dumps({
                "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": "", "session": msg_id,
                           "version": "5.3", "date": ""},
                "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
                "content": {"code": code, "silent": False, "store_history": False, "user_expressions": {},
                            "allow_stdin": False, "stop_on_error": True}}))
            async with asyncio.timeout(60):
                async for message in ws:
                    data = json.loads(message.data)
                    if data.get("parent_header", {}).get("msg_id") == msg_id and data["msg_type"] == "execute_result":
                        return data["content"]["data"]["text/plain"]
    raise AssertionError("no execute_result")


def _processes_under(folder: Path) -> list[Any]:
    found = []
    for proc in psutil.process_iter(["cmdline", "cwd"]):
        try:
            text = " ".join(proc.info["cmdline"] or []) + " " + (proc.info["cwd"] or "")
        except (psutil.Error, TypeError):
            continue
        if str(folder) in text:
            found.append(proc)
    return found


def _refused_by_the_platform(web: str, proxy: str, host: str, path: str, someone) -> int:
    """How the platform answers someone the notebook's origin sent to its hand-off (no code unless a developer)."""
    first = OriginClient(proxy, host).get(path, headers=NAVIGATE)
    assert first.status_code == 302, first.text
    opened = requests.utils.urlparse(first.headers["Location"])
    answer = platform_session(web, someone.username, someone.password).get(
        f"{web}{opened.path}?{opened.query}", headers=NAVIGATE, allow_redirects=False, timeout=10)
    assert "Location" not in answer.headers
    return answer.status_code


def test_notebook_through_the_proxy(app, user, make_user, notebook_world, local_backend, web, proxy, tmp_path):
    project = notebook_world["project"]
    nb = created(user.post("/api/v1/notebook/", json={"project_id": project["id"], "name": "lab",
                                                       "image": notebook_world["image"]}))
    from myapp.models import NotebookState

    assert _reconcile(app, nb["id"], local_backend, tmp_path) == NotebookState.RUNNING
    shown = user.get(f"/api/v1/notebook/{nb['id']}").get_json()
    assert "state" in shown, shown
    host = f"lab.{project['name']}.localhost"
    assert shown["state"] == "running" and shown["url"] == f"http://{host}:8081/notebook/{project['name']}/lab/lab"
    base = f"/notebook/{project['name']}/lab/"
    member = enter(platform_session(web, user.username, user.password), web, proxy, host, base + "lab")

    # HTTP: members reach Jupyter (which never sees their session); others are refused before it.
    status = member.get(f"{base}api/status")
    assert status.status_code == 200, status.text
    assert OriginClient(proxy, host).get(f"{base}api/status").status_code == 401
    assert _refused_by_the_platform(web, proxy, host, base + "lab", make_user()) == 404
    viewer = make_user()
    add_member(user, project["id"], viewer.username, "viewer")
    assert _refused_by_the_platform(web, proxy, host, base + "lab", viewer) == 403
    lab = member.get(f"{base}lab")
    assert lab.status_code == 200 and "JupyterLab" in lab.text

    # Jupyter's XSRF check applies to what the browser sends (the proxy's token does not lift it): a forged
    # write without the _xsrf double-submit is refused by Jupyter itself, the same write with it passes.
    forged = member.request("PUT", f"{base}api/contents/forged.txt", xsrf=False,
                            json={"type": "file", "format": "text", "content": "x"})
    assert forged.status_code == 403 and "_xsrf" in forged.text, forged.text
    # Jupyter's cookie secret and runtime files are not in the work folder the project's jobs write.
    work = local_backend.volume_dir(project["namespace"], "lab-work")
    assert not [p for p in work.rglob("*") if p.name in ("jupyter_cookie_secret", "runtime")
                or p.name.startswith("jpserver-")], sorted(work.rglob("*"))

    log = user.get(f"/api/v1/notebook/{nb['id']}/log").get_json()
    assert "replicas" in log, log
    assert log["replicas"] == ["notebook-0"] and any("Jupyter" in line["line"] for line in log["items"]), log

    # A kernel over the websocket, through the proxy.
    assert asyncio.run(_run_cell(proxy + base, member.headers("POST"), "1+1")) == "2"
    echoed = asyncio.run(_terminal_echo(proxy + base, member.headers("POST"), "hello-from-a-terminal"))
    assert echoed.count("hello-from-a-terminal") >= 2
    from myapp.notebooks.activity import fetcher, last_activity

    with app.app_context():  # the culling check reads the kernel's and terminal's activity from Jupyter itself
        from myapp.extensions import db
        from myapp.models import Notebook
        from myapp.notebooks.states import jupyter_token

        row = db.session.get(Notebook, nb["id"])
        token = jupyter_token(row)
        stored = json.dumps(row.job)
        latest, _busy = last_activity(row.upstream, f"/notebook/{project['name']}/lab/", token,
                                      fetcher(project['name'], "lab"))
    # The row keeps the token sealed: the value Jupyter was given (its Secret) is nowhere in it.
    given = (local_backend.workdir / "secrets" / project["namespace"] / "lab-jupyter-token" / "token").read_text()
    assert token == given.strip() and token not in stored and '"sealed:' in stored
    assert latest is not None and (dt.datetime.now(dt.UTC) - latest).total_seconds() < 60
    saved = member.request("PUT", f"{base}api/contents/kept.txt",
                           json={"type": "file", "format": "text", "content": "still here"})
    assert saved.status_code in (200, 201), saved.text

    # Jupyter runs with a token of its own, never in its command line.
    job_dir = local_backend.workdir / project["namespace"] / "lab"
    jupyter = [p for p in _processes_under(job_dir) if "jupyterlab" in " ".join(p.cmdline())]
    assert jupyter and all("token" not in " ".join(p.cmdline()).lower() for p in jupyter)

    # Stop: nothing of it runs, the work folder stays; start again: the file is there.
    user.post(f"/api/v1/notebook/{nb['id']}/stop")
    assert _reconcile(app, nb["id"], local_backend, tmp_path) == NotebookState.STOPPED
    assert not _processes_under(job_dir)
    assert member.get(f"{base}api/status").status_code == 409
    archived = user.get(f"/api/v1/notebook/{nb['id']}/log").get_json()  # the stopped attempt's, archived
    assert archived["items"] and archived["items"][-1]["seq"] >= log["items"][-1]["seq"]
    assert user.post(f"/api/v1/notebook/{nb['id']}/start").get_json()["state"] == "pending"
    assert _reconcile(app, nb["id"], local_backend, tmp_path) == NotebookState.RUNNING
    kept = member.get(f"{base}api/contents/kept.txt")
    assert kept.status_code == 200 and kept.json()["content"] == "still here"

    # Delete: processes, token Secret and work folder gone, then the row.
    assert work.is_dir()
    assert user.delete(f"/api/v1/notebook/{nb['id']}").status_code == 200
    assert _reconcile(app, nb["id"], local_backend, tmp_path) is None
    assert not _processes_under(job_dir) and not work.exists() and not job_dir.exists()
    assert not (local_backend.workdir / "secrets" / project["namespace"]).exists() or \
        not any((local_backend.workdir / "secrets" / project["namespace"]).iterdir())
    assert user.get(f"/api/v1/notebook/{nb['id']}").status_code == 404


def test_deleting_the_project_stops_its_notebooks(app, user, notebook_world, local_backend, tmp_path, monkeypatch):
    from myapp.api import projects
    from myapp.backends.registry import log_archive
    from myapp.models import NotebookState
    from myapp.notebooks.lifecycle import Hooks, release

    project = notebook_world["project"]
    nb = created(user.post("/api/v1/notebook/", json={"project_id": project["id"], "name": "lab",
                                                       "image": notebook_world["image"]}))
    assert _reconcile(app, nb["id"], local_backend, tmp_path) == NotebookState.RUNNING
    job_dir = local_backend.workdir / project["namespace"] / "lab"
    assert _processes_under(job_dir)
    sent: list[list[dict]] = []
    monkeypatch.setattr(projects, "release_notebooks", sent.append)  # what would go to the workers
    assert user.delete(f"/api/v1/project/{project['id']}").status_code == 200
    assert user.get(f"/api/v1/notebook/{nb['id']}").status_code == 404  # the row went with the project
    (attempts,) = sent
    with app.app_context():
        for attempt in attempts:
            release(json.loads(json.dumps(attempt)), Hooks(backend_for=lambda _group: local_backend,
                                                           archive=log_archive()))
    assert not _processes_under(job_dir) and not job_dir.exists()
    assert not local_backend.volume_dir(project["namespace"], "lab-work").exists()
