"""The pipeline editor in a real browser (Debian's chromium via Playwright), at 300 tasks.

    .venv/bin/python benchmarks/editor.py                  # 300 tasks vs a 10-task baseline, 3 rounds
    .venv/bin/python benchmarks/editor.py --tasks 500 --rounds 5
    .venv/bin/python benchmarks/editor.py --quick          # 60 tasks vs 10, 1 round, ~40 s

Starts the platform (`myapp run`, embedded default, built UI from frontend/dist) in a temporary home,
creates two pipelines through the API (a layered DAG of N tasks, and the 10-task baseline), then per
round and pipeline measures in the browser:
  open      navigation to the editor until every task node is on the page
  layout    click "Auto-layout" until the next painted frame
  drag-in   drop a template from the palette onto the canvas until its node is on the page
  move      drag one task node 200 px in 20 mouse steps: mean time per step (one frame is ~16.7 ms)
Prints every round, medians, and the ratios N-task / baseline. Also prints the gzipped size of the
JavaScript the first page loads (the entry chunk and what it imports statically), budget 500 KB.
The task nodes on the page are counted: every task once, and one more after the drag-in.
Exit status 1 means the benchmark broke (the platform, a page or a count); a missed budget is only
reported.
"""
from __future__ import annotations

import argparse
import gzip
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import requests

REPO = Path(__file__).resolve().parents[1]
DIST = REPO / "frontend" / "dist"
MYAPP = [str(Path(sys.executable).parent / "myapp")]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-sync",
                 "--disable-background-networking", "--disable-component-update"]
BUDGET_KB = 500
QUICK = {"tasks": 60, "baseline": 10, "rounds": 1}
COUNT_NODES = "() => document.querySelectorAll('[data-task]').length"
NEXT_FRAME = "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(performance.now()))))"


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def first_page_js() -> tuple[int, int, list[str]]:
    """(raw bytes, gzipped bytes, files) of the scripts index.html loads before anything is lazy-loaded."""
    html = (DIST / "index.html").read_text()
    files = re.findall(r'<script[^>]+src="/ui/([^"]+\.js)"', html)
    files += re.findall(r'<link[^>]+rel="modulepreload"[^>]+href="/ui/([^"]+\.js)"', html)
    raw = zipped = 0
    for name in files:
        data = (DIST / name).read_bytes()
        raw += len(data)
        zipped += len(gzip.compress(data, compresslevel=9))
    return raw, zipped, files


def layered_graph(n: int, template_id: int, width: int = 10) -> dict:
    """n tasks in layers of `width`; each task depends on up to two tasks of the layer before."""
    tasks = [{"key": f"t{i}", "name": f"task-{i:04d}", "template_id": template_id} for i in range(n)]
    edges = []
    for i in range(width, n):
        layer_start = (i // width - 1) * width
        for up in {layer_start + i % width, layer_start + (i + 1) % width}:
            edges.append({"upstream": f"t{up}", "downstream": f"t{i}"})
    return {"tasks": tasks, "edges": edges}


class Platform:
    def __init__(self, home: Path):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.password = uuid.uuid4().hex
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
        self.env = env | {"MYAPP_HOME": str(home), "MYAPP_ADMIN_PASSWORD": self.password, "MYAPP_BASE_URL": self.base}
        subprocess.run([*MYAPP, "init"], env=self.env, check=True, capture_output=True, timeout=300)
        with open(home / "platform.log", "w") as log:  # the platform writes its own copy of the file
            self.proc = subprocess.Popen([*MYAPP, "run", "--port", str(self.port), "--notebook-port", str(free_port()),
                                          "--web-workers", "1"],
                                         env=self.env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 90
            while True:
                try:
                    if requests.get(f"{self.base}/health", timeout=2).status_code == 200:
                        break
                except requests.RequestException:
                    pass
                if time.monotonic() > deadline:
                    raise SystemExit("the platform did not start; see " + str(home / "platform.log"))
                time.sleep(0.5)
            self.api = requests.Session()
            token = self.api.post(f"{self.base}/api/v1/security/login", json={
                "username": "admin", "password": self.password, "provider": "db"}).json()["access_token"]
            self.api.headers["Authorization"] = f"Bearer {token}"
        except BaseException:  # the caller never gets this object to stop: stop the platform here
            self.stop()
            raise

    def call(self, method: str, path: str, **kwargs) -> dict:
        resp = self.api.request(method, self.base + path, timeout=60, **kwargs)
        resp.raise_for_status()
        return resp.json()

    def pipeline(self, name: str, n: int) -> int:
        project = self.call("GET", "/api/v1/project/?name=demo")["items"][0]["id"]
        template = self.call("GET", "/api/v1/job_template/?name=python")["items"][0]["id"]
        pipe = self.call("POST", "/api/v1/pipeline/", json={"project_id": project, "name": name})
        self.call("PUT", f"/api/v1/pipeline/{pipe['id']}/graph", json=layered_graph(n, template))
        saved = self.call("GET", f"/api/v1/pipeline/{pipe['id']}/graph")
        if len(saved["tasks"]) != n:
            raise SystemExit(f"saved {n} tasks, the graph has {len(saved['tasks'])}")
        return pipe["id"]

    def stop(self) -> None:
        os.killpg(self.proc.pid, signal.SIGTERM)
        self.proc.wait(timeout=30)


def measure(page, base: str, pipeline_id: int, n: int) -> dict[str, float]:
    out: dict[str, float] = {}
    start = time.perf_counter()
    page.goto(f"{base}/ui/pipelines/{pipeline_id}")
    # A locator wait: the UI's CSP (no 'unsafe-eval') refuses wait_for_function's string predicates.
    page.locator("[data-task]").nth(n - 1).wait_for(state="attached", timeout=120_000)
    page.evaluate(NEXT_FRAME)
    out["open"] = (time.perf_counter() - start) * 1000
    shown = page.evaluate(COUNT_NODES)
    if shown != n:
        raise SystemExit(f"the editor shows {shown} task nodes for {n} tasks")

    layout = page.get_by_role("button", name="Auto-layout")
    t0 = page.evaluate("() => performance.now()")
    layout.click()
    out["layout"] = page.evaluate(NEXT_FRAME) - t0

    canvas = page.locator(".react-flow__pane").bounding_box()
    source = page.locator('[data-template="python"]').first
    t0 = page.evaluate("() => performance.now()")
    source.drag_to(page.locator(".react-flow__pane"),
                   target_position={"x": canvas["width"] * 0.5, "y": canvas["height"] * 0.3})
    page.locator("[data-task]").nth(n).wait_for(state="attached", timeout=60_000)
    out["drag-in"] = page.evaluate(NEXT_FRAME) - t0
    shown = page.evaluate(COUNT_NODES)
    if shown != n + 1:
        raise SystemExit(f"after one drag-in the editor shows {shown} task nodes, expected {n + 1}")

    node = page.locator(".react-flow__node").nth(0).bounding_box()
    x, y = node["x"] + node["width"] / 2, node["y"] + 10
    page.mouse.move(x, y)
    page.mouse.down()
    steps = 20
    t0 = page.evaluate("() => performance.now()")
    for i in range(1, steps + 1):
        page.mouse.move(x + 10 * i, y + 5 * i)
        page.evaluate("() => new Promise(r => requestAnimationFrame(r))")
    out["move"] = (page.evaluate("() => performance.now()") - t0) / steps
    page.mouse.up()
    return out


def login(page, base: str, password: str) -> None:
    page.goto(f"{base}/ui/login")
    page.get_by_label("Username").fill("admin")
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(re.compile(r".*/ui/pipelines$"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=300)
    parser.add_argument("--baseline", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quick", action="store_true",
                        help="{tasks} tasks vs {baseline}, {rounds} round".format(**QUICK))
    args = parser.parse_args()
    if args.quick:
        vars(args).update(QUICK)
    if not (DIST / "index.html").is_file():
        raise SystemExit("build the UI first: make ui")

    raw, zipped, files = first_page_js()
    print(f"first page JavaScript: {len(files)} files, {raw / 1024:.1f} KB raw, {zipped / 1024:.1f} KB gzipped")

    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as home:
        platform = Platform(Path(home))
        try:
            big = platform.pipeline("bench-big", args.tasks)
            small = platform.pipeline("bench-small", args.baseline)
            results: dict[str, list[dict[str, float]]] = {"big": [], "small": []}
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
                for round_no in range(1, args.rounds + 1):
                    for label, pid, n in (("small", small, args.baseline), ("big", big, args.tasks)):
                        context = browser.new_context(viewport={"width": 1280, "height": 800})
                        page = context.new_page()
                        login(page, platform.base, platform.password)
                        got = measure(page, platform.base, pid, n)
                        context.close()
                        results[label].append(got)
                        shown = ", ".join(f"{k} {v:.1f} ms" for k, v in got.items())
                        print(f"round {round_no} {n:4d} tasks: {shown}")
                browser.close()
        finally:
            platform.stop()

    print(f"\nmedians ({args.rounds} rounds)       {args.baseline:>6} tasks  {args.tasks:>6} tasks   ratio")
    for metric in ("open", "layout", "drag-in", "move"):
        small_med = statistics.median(r[metric] for r in results["small"])
        big_med = statistics.median(r[metric] for r in results["big"])
        unit = "ms/step" if metric == "move" else "ms"
        print(f"  {metric:<8} ({unit:<7})          {small_med:9.1f}  {big_med:9.1f}  {big_med / small_med:6.2f}")
    verdict = "MET" if zipped <= BUDGET_KB * 1024 else "MISSED"
    print(f"target first page JavaScript <= {BUDGET_KB} KB gzipped: {verdict} ({zipped / 1024:.1f} KB)")


if __name__ == "__main__":
    main()
