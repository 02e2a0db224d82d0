"""Time from "start" to a kernel answering: a notebook started through the platform vs JupyterLab by hand.

    .venv/bin/python benchmarks/notebook.py             # 3 rounds each (~2 minutes on 2 cores)
    .venv/bin/python benchmarks/notebook.py --quick     # 1 round each

Setup (not timed): `myapp init` and `myapp run` on a fresh home, an image in the catalog, a notebook
created and stopped. Each round, in rotating order:
  platform  POST /api/v1/notebook/{id}/start -> poll the API until running -> through the notebook
            proxy, on the notebook's own origin (entered once by the platform's hand-off, as a browser is):
            create a kernel, run `1+1` over its websocket, get "2" (then stop it, not timed)
  by-hand   `python -m jupyterlab` with a token on a free port -> poll until it answers -> the same
            kernel and cell, straight to it (then kill it, not timed)
Prints every run, the medians and platform / by-hand (target <= 1.30). Exit status 1 means the
benchmark broke; a missed target is only reported.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import aiohttp
import requests

REPO = Path(__file__).resolve().parents[1]
MYAPP = [str(Path(sys.executable).parent / "myapp")]
TARGET = 1.30


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(predicate: Callable[[], Any], timeout: float, what: str, interval: float = 0.05) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = predicate()
        except (requests.RequestException, OSError):
            value = None
        if value:
            return value
        time.sleep(interval)
    raise RuntimeError(f"timed out waiting for {what}")


async def run_cell(base: str, headers: dict[str, str]) -> str:
    """Create a kernel at `base` (a Jupyter base URL ending in /), run 1+1, return its text/plain."""
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{base}api/kernels", headers=headers, json={"name": "python3"}) as answer:
            if answer.status != 201:
                raise RuntimeError(f"kernel not created: {answer.status} {await answer.text()}")
            kernel = (await answer.json())["id"]
        async with session.ws_connect(f"{base.replace('http', 'ws', 1)}api/kernels/{kernel}/channels",
                                      headers=headers) as ws:
            msg_id = uuid.uuid4().hex
            await ws.send_str(json.dumps({
                "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": "", "session": msg_id,
                           "version": "5.3", "date": ""},
                "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
                "content": {"code": "1+1", "silent": False, "store_history": False, "user_expressions": {},
                            "allow_stdin": False, "stop_on_error": True}}))
            async with asyncio.timeout(120):
                async for message in ws:
                    data = json.loads(message.data)
                    if data.get("parent_header", {}).get("msg_id") == msg_id and data["msg_type"] == "execute_result":
                        return str(data["content"]["data"]["text/plain"])
    raise RuntimeError("no execute_result")


class Platform:
    def __init__(self, home: Path):
        skip = ("DATABASE_URL", "REDIS_URL", "MYAPP_ADMIN_PASSWORD")  # a fresh embedded platform of its own
        self.env = {k: v for k, v in os.environ.items() if k not in skip}
        self.env["MYAPP_HOME"] = str(home)
        init = subprocess.run([*MYAPP, "init"], env=self.env, capture_output=True, text=True, timeout=300)
        if init.returncode != 0:
            raise RuntimeError(f"myapp init failed: {init.stderr[-2000:]}")
        password = re.search(r"with password: (\S+)", init.stdout).group(1)  # type: ignore[union-attr]
        port, notebook_port = free_port(), free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen([*MYAPP, "run", "--port", str(port), "--notebook-port", str(notebook_port),
                                      "--web-workers", "1"], env=self.env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        wait_for(lambda: requests.get(f"{self.base}/health", timeout=5).status_code == 200, 120, "the platform")
        token = requests.post(f"{self.base}/api/v1/security/login", timeout=10, json={
            "username": "admin", "password": password, "provider": "db"}).json()["access_token"]
        self.auth = {"Authorization": f"Bearer {token}"}
        demo = self.get("/api/v1/project/?name=demo")["items"][0]
        image = self.post("/api/v1/image/", {"repository": "registry.local/bench/lab", "tag": "v1"})
        self.nb = self.post("/api/v1/notebook/", {"project_id": demo["id"], "name": "bench",
                                                  "image": f"{image['repository']}:{image['tag']}"})
        shown = wait_for(lambda: (s := self.get(f"/api/v1/notebook/{self.nb['id']}"))["state"] == "running" and s,
                         300, "the first start (warm-up, not timed)")
        self.enter(password, shown["url"])
        self.stop()

    def enter(self, password: str, url: str) -> None:
        """Into the notebook's own origin as a browser gets there (not timed): signed in on the platform, its
        one-time code, redeemed at the origin for that origin's cookie; writes carry Jupyter's XSRF token.
        Python does not resolve *.localhost: the proxy's address with the notebook's Host."""
        browser = requests.Session()
        csrf = browser.get(f"{self.base}/api/v1/session/", timeout=10).json()["csrf_token"]
        browser.post(f"{self.base}/api/v1/session/login", json={"username": "admin", "password": password},
                     headers={"X-CSRFToken": csrf}, timeout=10).raise_for_status()
        origin = urllib.parse.urlsplit(url)
        navigate = {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
        opened = browser.get(f"{self.base}/notebook-open", params={"host": origin.netloc, "next": origin.path},
                             headers=navigate, allow_redirects=False, timeout=10)
        if opened.status_code != 302:
            raise RuntimeError(f"no way into the notebook: {opened.status_code} {opened.text[:200]}")
        handoff = urllib.parse.urlsplit(opened.headers["Location"])
        proxy = f"http://127.0.0.1:{origin.port}"
        landed = requests.get(f"{proxy}{handoff.path}?{handoff.query}", headers={"Host": origin.netloc},
                              allow_redirects=False, timeout=10)
        if landed.status_code != 302 or not landed.cookies:
            raise RuntimeError(f"the hand-off failed: {landed.status_code} {landed.text[:200]}")
        xsrf = secrets.token_hex(16)
        cookies = "; ".join(f"{k}={v}" for k, v in landed.cookies.items())
        self.headers = {"Host": origin.netloc, "Cookie": f"{cookies}; _xsrf={xsrf}", "X-XSRFToken": xsrf}
        self.jupyter = proxy + origin.path.removesuffix("lab")

    def get(self, path: str) -> dict:
        return requests.get(f"{self.base}{path}", headers=self.auth, timeout=10).json()

    def post(self, path: str, body: dict | None = None) -> dict:
        answer = requests.post(f"{self.base}{path}", headers=self.auth, json=body, timeout=10)
        if answer.status_code not in (200, 201):
            raise RuntimeError(f"POST {path}: {answer.status_code} {answer.text}")
        return answer.json()

    def stop(self) -> None:
        self.post(f"/api/v1/notebook/{self.nb['id']}/stop")
        wait_for(lambda: self.get(f"/api/v1/notebook/{self.nb['id']}")["state"] == "stopped", 120, "the stop")

    def round(self) -> float:
        started = time.monotonic()
        self.post(f"/api/v1/notebook/{self.nb['id']}/start")
        state = wait_for(lambda: (s := self.get(f"/api/v1/notebook/{self.nb['id']}")["state"]) in
                         ("running", "failed") and s, 120, "the notebook to run")
        if state != "running":
            raise RuntimeError(f"the notebook failed: {self.get('/api/v1/notebook/' + str(self.nb['id']))}")
        answer = asyncio.run(run_cell(self.jupyter, self.headers))
        elapsed = time.monotonic() - started
        if answer != "2":
            raise RuntimeError(f"1+1 gave {answer!r}")
        self.stop()
        return elapsed

    def close(self) -> None:
        if self.nb and self.proc.poll() is None:
            try:
                self.stop()
            except (RuntimeError, requests.RequestException):
                pass
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def by_hand(folder: Path) -> float:
    port, token = free_port(), secrets.token_urlsafe(24)
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
                             f"--ServerApp.root_dir={folder}", *(["--allow-root"] if os.geteuid() == 0 else [])],
                            env=dict(os.environ, JUPYTER_TOKEN=token),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        base = f"http://127.0.0.1:{port}/"
        wait_for(lambda: requests.get(f"{base}api", timeout=2).status_code == 200, 120, "JupyterLab by hand")
        answer = asyncio.run(run_cell(base, {"Authorization": f"token {token}"}))
        elapsed = time.monotonic() - started
        if answer != "2":
            raise RuntimeError(f"1+1 gave {answer!r}")
        return elapsed
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="1 round each")
    args = parser.parse_args()
    repeats = 1 if args.quick else args.repeats
    times: dict[str, list[float]] = {"platform": [], "by-hand": []}
    with tempfile.TemporaryDirectory(prefix="myapp-bench-nb-") as tmp:
        platform = None
        try:
            platform = Platform(Path(tmp) / "home")
            for index in range(repeats):
                order = ["platform", "by-hand"] if index % 2 == 0 else ["by-hand", "platform"]
                for name in order:
                    elapsed = platform.round() if name == "platform" else by_hand(Path(tmp))
                    times[name].append(elapsed)
                    print(f"round {index + 1} {name:9s} {elapsed:6.2f} s", flush=True)
        except (RuntimeError, OSError, requests.RequestException) as exc:
            print(f"target platform/by-hand <= {TARGET:.2f}: BROKEN ({exc})")
            return 1
        finally:
            if platform is not None:
                platform.close()
    medians = {name: statistics.median(values) for name, values in times.items()}
    ratio = medians["platform"] / medians["by-hand"]
    print(f"median: platform {medians['platform']:.2f} s, by-hand {medians['by-hand']:.2f} s; ratio {ratio:.2f}")
    print(f"target platform/by-hand <= {TARGET:.2f}: {'MET' if ratio <= TARGET else 'MISSED'} ({ratio:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
