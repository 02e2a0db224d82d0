"""A notebook started through `myapp run` outlives a stop of the platform, is reached again after the
next start, and leaves no process behind once stopped."""
from __future__ import annotations

import re
import signal
import subprocess
from pathlib import Path

import psutil
import pytest
import requests

from tests.notebooks.origin_client import enter, platform_session
from tests.support import MYAPP, free_port, healthy, unique, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.backends]  # two platform starts and a JupyterLab: about a minute


def _start(env: dict[str, str], port: int, notebook_port: int) -> subprocess.Popen:
    proc = subprocess.Popen([*MYAPP, "run", "--port", str(port), "--notebook-port", str(notebook_port),
                             "--web-workers", "1"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_until(lambda: healthy(f"http://127.0.0.1:{port}"), timeout=90, interval=0.5, what="the platform to answer")
    return proc


def _stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGINT)
    proc.wait(60)


def _jupyters(home: Path) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        argv = proc.info["cmdline"] or []
        # JupyterLab itself, not the sandbox's wrappers (bwrap, setpriv, env) whose argv names it too
        if argv and Path(argv[0]).name.startswith("python") and "jupyterlab" in argv and str(home) in " ".join(argv):
            found.append(proc)
    return found


def test_notebook_survives_a_platform_restart(tmp_path, platform_env):
    env = platform_env(tmp_path)
    init = subprocess.run([*MYAPP, "init"], env=env, capture_output=True, text=True, timeout=180)
    assert init.returncode == 0, init.stderr
    password = re.search(r"with password: (\S+)", init.stdout).group(1)
    port, notebook_port = free_port(), free_port()
    base, proxy = f"http://127.0.0.1:{port}", f"http://127.0.0.1:{notebook_port}"
    proc = _start(env, port, notebook_port)
    try:
        token = requests.post(f"{base}/api/v1/security/login", timeout=10, json={
            "username": "admin", "password": password, "provider": "db"}).json()["access_token"]
        auth = {"Authorization": f"Bearer {token}"}
        demo = requests.get(f"{base}/api/v1/project/?name=demo", headers=auth, timeout=10).json()["items"][0]
        image = requests.post(f"{base}/api/v1/image/", headers=auth, timeout=10,
                              json={"repository": "registry.local/nb/lab", "tag": unique("v")}).json()
        nb = requests.post(f"{base}/api/v1/notebook/", headers=auth, timeout=10, json={
            "project_id": demo["id"], "name": "lab", "image": f"{image['repository']}:{image['tag']}"}).json()

        def state() -> dict:
            return requests.get(f"{base}/api/v1/notebook/{nb['id']}", headers=auth, timeout=10).json()

        shown = wait_until(lambda: (s := state())["state"] == "running" and s, timeout=120, interval=0.5,
                           what=lambda: f"the notebook to run: {state()}")
        assert shown["url"] == f"http://lab.demo.localhost:{notebook_port}/notebook/demo/lab/lab"
        status = "/notebook/demo/lab/api/status"
        browser = enter(platform_session(base, "admin", password), base, proxy, "lab.demo.localhost",
                        "/notebook/demo/lab/lab")
        assert browser.get(status).status_code == 200
        (jupyter,) = _jupyters(tmp_path)

        _stop(proc)  # the platform stops; the notebook does not
        assert jupyter.is_running() and jupyter.status() != psutil.STATUS_ZOMBIE
        proc = _start(env, port, notebook_port)
        # The origin's session is the platform's (in its database): the browser stays in across the restart.
        assert wait_until(lambda: browser.get(status).status_code == 200, timeout=30,
                          what="the proxy to reach the same notebook again")
        assert state()["state"] == "running" and _jupyters(tmp_path) == [jupyter]

        assert requests.post(f"{base}/api/v1/notebook/{nb['id']}/stop", headers=auth, timeout=10).status_code == 200
        wait_until(lambda: state()["state"] == "stopped", timeout=60, interval=0.5,
                   what=lambda: f"the notebook to stop: {state()}")
        psutil.wait_procs([jupyter], timeout=10)
        assert not jupyter.is_running() and not _jupyters(tmp_path)
        leftovers = [p for p in psutil.process_iter(["cmdline"]) if str(tmp_path / "jobs") in
                     " ".join(p.info["cmdline"] or [])]
        assert not leftovers  # no supervisor, no sandbox
    finally:
        if proc.poll() is None:
            _stop(proc)
        for left in _jupyters(tmp_path):
            left.kill()
