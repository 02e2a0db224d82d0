#!/usr/bin/env python
"""/health latency with 200 server-sent event streams open: streams must not starve the web server.

Starts the web process as `myapp run` does (gunicorn, myapp/web/gunicorn_conf.py: gthread, --web-workers 2,
MYAPP_WEB_THREADS 128) on the embedded default (SQLite; `--db postgresql` for PostgreSQL), with no
worker (the runs stay queued, so their streams stay open). Creates --streams / 10 users (the per-user
cap is 10) and one queued run each; measures /health with no stream open (the baseline), then opens
--streams run-event streams (each reconnects when the server ends it after 30 s, as EventSource does)
and measures /health and `GET /api/v1/me/` again while they are open, checking the streams keep
receiving events.

    .venv/bin/python benchmarks/streams.py                  # 200 streams, 15 s measured; ~40 s
    .venv/bin/python benchmarks/streams.py --db postgresql
    .venv/bin/python benchmarks/streams.py --quick          # 40 streams, 4 s measured

Exit status 1 means the benchmark broke: a stream refused or failed, a request failed, a stream that
received nothing while measured. A missed latency target (/health p95 < 100 ms) is only reported.
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

TARGET_MS = 100.0
PER_USER = 10  # MYAPP_STREAMS_PER_USER's default
ROOT = Path(__file__).resolve().parent.parent
MYAPP = str(Path(sys.executable).parent / "myapp")
PASSWORD = f"bench passphrase {uuid.uuid4().hex[:8]}"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--streams", type=int, default=200)
    p.add_argument("--seconds", type=float, default=15.0, help="measured time per phase")
    p.add_argument("--web-workers", type=int, default=2)
    p.add_argument("--web-threads", type=int, default=128)
    p.add_argument("--db", choices=("sqlite", "postgresql"), default="sqlite")
    p.add_argument("--pg", default=os.environ.get("MYAPP_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres"))
    p.add_argument("--quick", action="store_true", help="40 streams, 4 s per phase")
    args = p.parse_args()
    if args.quick:
        args.streams, args.seconds = 40, 4.0
    return args


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def call(port: int, method: str, path: str, body: object = None, token: str | None = None) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Content-Type": "application/json"} | ({"Authorization": f"Bearer {token}"} if token else {})
    conn.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, (json.loads(data) if data else {})


def must(result: tuple[int, dict], what: str) -> dict:
    status, data = result
    if status >= 300:
        raise SystemExit(f"BROKEN: {what}: {status} {data}")
    return data


def login(port: int, username: str, password: str) -> str:
    return must(call(port, "POST", "/api/v1/security/login",
                     {"username": username, "password": password, "provider": "db"}), "login")["access_token"]


class Stream(threading.Thread):
    """One EventSource: reads events, reconnects when the server ends the stream."""

    def __init__(self, port: int, path: str, token: str, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.port, self.path, self.token, self.stop = port, path, token, stop
        self.opened = threading.Event()
        self.events = 0
        self.connects = 0
        self.error: str | None = None

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
                conn.request("GET", self.path, headers={"Authorization": f"Bearer {self.token}"})
                resp = conn.getresponse()
                if resp.status != 200:
                    self.error = f"{resp.status} {resp.read()[:200]!r}"
                    return
                self.connects += 1
                for line in resp:
                    if line.startswith((b"event:", b": idle")):
                        self.events += 1
                        self.opened.set()
                    if self.stop.is_set():
                        break
                conn.close()
            except OSError as exc:
                if not self.stop.is_set():
                    self.error = repr(exc)
                return


def sample(port: int, path: str, seconds: float, token: str | None = None, rate: float = 20.0) -> list[float]:
    """Latencies (ms) of `path`, asked `rate` times a second for `seconds` on one keep-alive connection."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    out, end = [], time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.perf_counter()
        conn.request("GET", path, headers=headers)
        resp = conn.getresponse()
        resp.read()
        if resp.status != 200:
            raise SystemExit(f"BROKEN: GET {path}: {resp.status}")
        out.append((time.perf_counter() - started) * 1000)
        time.sleep(max(0.0, 1 / rate - (time.perf_counter() - started)))
    conn.close()
    return out


def figures(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"p50 {statistics.median(ordered):6.1f} ms  p95 {p95:6.1f} ms  max {ordered[-1]:6.1f} ms  (n={len(ordered)})"


def p95(values: list[float]) -> float:
    return sorted(values)[min(len(values) - 1, int(len(values) * 0.95))]


def main() -> int:
    args = parse_args()
    home = Path(tempfile.mkdtemp(prefix="myapp-bench-streams-"))
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env |= {"MYAPP_HOME": str(home), "MYAPP_ADMIN_PASSWORD": PASSWORD, "MYAPP_WEB_THREADS": str(args.web_threads),
            "MYAPP_BACKEND": "local"}
    pg_name = None
    if args.db == "postgresql":
        import psycopg

        pg_name = f"myapp_bench_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(args.pg, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{pg_name}"')
        env["DATABASE_URL"] = args.pg.rsplit("/", 1)[0] + f"/{pg_name}"
    port, web, stop = free_port(), None, threading.Event()
    try:
        subprocess.run([MYAPP, "init"], env=env, check=True, capture_output=True, cwd=ROOT)
        # The web process of `myapp run` (myapp/cli.py), without worker and beat.
        web = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "python:myapp.web.gunicorn_conf", "--bind",
                                f"127.0.0.1:{port}", "--workers", str(args.web_workers), "--access-logfile",
                                "/dev/null", "myapp.wsgi:app"], env=env, cwd=ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while True:
            try:
                if call(port, "GET", "/health")[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline or web.poll() is not None:
                raise SystemExit("BROKEN: the web process did not start")
            time.sleep(0.2)

        admin = login(port, "admin", PASSWORD)
        digits = must(call(port, "GET", "/api/v1/pipeline/?name=digits", token=admin), "pipelines")["items"][0]["id"]
        users = []
        for _ in range(-(-args.streams // PER_USER)):
            name = f"bench-{uuid.uuid4().hex[:8]}"
            must(call(port, "POST", "/api/v1/user/", {"username": name, "first_name": "Bench", "password": PASSWORD,
                                                      "email": f"{name}@example.org", "is_admin": True}, admin),
                 "create a user")
            token = login(port, name, PASSWORD)
            run = must(call(port, "POST", "/api/v1/pipeline_run/", {"pipeline_id": digits}, token), "a run")
            users.append((token, f"/api/v1/pipeline_run/{run['id']}/events"))

        print(f"{args.streams} streams from {len(users)} users; gunicorn gthread, {args.web_workers} workers x "
              f"{args.web_threads} threads, {args.db}")
        baseline = sample(port, "/health", args.seconds)
        api_baseline = sample(port, "/api/v1/me/", args.seconds / 2, admin)

        streams = [Stream(port, users[i // PER_USER][1], users[i // PER_USER][0], stop) for i in range(args.streams)]
        for stream in streams:
            stream.start()
        opened_by = time.monotonic() + 60
        for stream in streams:
            stream.opened.wait(max(0.0, opened_by - time.monotonic()))
        broken = [s.error for s in streams if s.error] + (
            [f"{sum(not s.opened.is_set() for s in streams)} streams never opened"]
            if not all(s.opened.is_set() for s in streams) else [])
        if broken:
            raise SystemExit(f"BROKEN: {broken[:3]}")
        before = [s.events for s in streams]
        loaded = sample(port, "/health", args.seconds)
        api_loaded = sample(port, "/api/v1/me/", args.seconds / 2, admin)
        silent = sum(s.events == b for s, b in zip(streams, before, strict=True))
        errors = [s.error for s in streams if s.error]
        if errors or silent:
            raise SystemExit(f"BROKEN: {len(errors)} streams failed ({errors[:2]}), {silent} received nothing")

        print(f"/health, no stream open:        {figures(baseline)}")
        print(f"/health, {args.streams} streams open:     {figures(loaded)}")
        print(f"/api/v1/me/, no stream open:    {figures(api_baseline)}")
        print(f"/api/v1/me/, {args.streams} streams open: {figures(api_loaded)}")
        events = sum(s.events for s in streams) - sum(before)
        print(f"streams: {events} events/comments received while measured, "
              f"{sum(s.connects for s in streams)} connections (reconnects after 30 s included)")
        print(f"ratio /health p95 loaded / baseline: {p95(loaded) / max(p95(baseline), 0.001):.1f}x")
        verdict = "MET" if p95(loaded) < TARGET_MS else "MISSED"
        print(f"target /health p95 < {TARGET_MS:.0f} ms with {args.streams} streams open: {verdict}")
        return 0
    finally:
        stop.set()
        if web is not None:
            web.terminate()
            try:
                web.wait(15)
            except subprocess.TimeoutExpired:
                web.kill()
        if pg_name:
            import psycopg

            with psycopg.connect(args.pg, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{pg_name}" WITH (FORCE)')
        shutil.rmtree(home, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
