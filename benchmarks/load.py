#!/usr/bin/env python
"""Mixed API traffic against the whole platform (`myapp run`: gunicorn web, Celery worker and beat).

N closed-loop clients, each signed in once (half by JWT, half by a browser session with its CSRF
token) as one of a few project developers, for a bounded time: paged lists, reads of one run,
`/me`, run creation (a one-task pipeline of the `python` template running `true` on the local
backend, at most --runs-per-second) and server-sent events (a run's `events` stream read for a few
seconds). Every answer is checked (status, JSON, the stream's first `run` event); afterwards every
run created must have succeeded. Baseline from the same run: the same mix from one client first.

    .venv/bin/python benchmarks/load.py                # 50 clients x 60 s, embedded default
    .venv/bin/python benchmarks/load.py --pg           # on PostgreSQL + Redis
    .venv/bin/python benchmarks/load.py --quick        # 10 clients x 5 s; ~50 s

Exit status 1 means the benchmark broke: any failed request, a stream without its event, a run
that did not succeed. Latency has no target here; it is printed per endpoint.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import defaultdict
from pathlib import Path

import psutil
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from support.http_client import Client, free_port  # the benchmarks' shared HTTP client
from support.server_cpu import pct

ROOT = Path(__file__).resolve().parent.parent
MYAPP = [str(Path(sys.executable).parent / "myapp")]
QUICK = {"clients": 10, "seconds": 5.0, "baseline_seconds": 3.0, "sse_seconds": 1.0}
REDIS_DB = "redis://127.0.0.1:6379/13"  # flushed before and after
TERMINAL = {"succeeded", "failed", "cancelled"}
# op -> weight; a run creation over the rate cap, or a stream over the stream cap, reads a list instead.
MIX = {"list": 60, "get_run": 10, "me": 8, "create_run": 12, "sse": 10}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--seconds", type=float, default=60.0, help="measured time")
    p.add_argument("--baseline-seconds", type=float, default=10.0, help="the same mix from one client, first")
    p.add_argument("--users", type=int, default=5, help="developers the clients sign in as")
    p.add_argument("--web-workers", type=int, default=2)
    p.add_argument("--runs-per-second", type=float, default=1.0, help="cap on run creation (local jobs cost CPU)")
    p.add_argument("--streams", type=int, default=4, help="event streams open at once, at most")
    p.add_argument("--sse-seconds", type=float, default=3.0, help="how long a client reads a stream")
    p.add_argument("--settle", type=float, default=180.0, help="seconds the created runs have to finish")
    p.add_argument("--pg", nargs="?", const=os.environ.get("MYAPP_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres"),
                   help="run on PostgreSQL (this admin URL; a throw-away database) and Redis (DB 13)")
    p.add_argument("--keep", action="store_true", help="keep the home folder (and database)")
    p.add_argument("--quick", action="store_true", help="{clients} clients x {seconds:.0f} s".format(**QUICK))
    args = p.parse_args()
    if args.quick:
        vars(args).update(QUICK)
    return args


class Platform:
    """`myapp init` then `myapp run` in a temporary home; stopped by stop()."""

    def __init__(self, args: argparse.Namespace, home: Path, env: dict[str, str]):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.password = uuid.uuid4().hex
        self.env = env | {"MYAPP_HOME": str(home), "MYAPP_ADMIN_PASSWORD": self.password, "MYAPP_BASE_URL": self.base}
        subprocess.run([*MYAPP, "init"], env=self.env, check=True, capture_output=True, timeout=300)
        self.log = home / "platform.log"
        with open(self.log, "w") as log:
            self.proc = subprocess.Popen([*MYAPP, "run", "--port", str(self.port), "--notebook-port", str(free_port()),
                                          "--web-workers", str(args.web_workers)], env=self.env, cwd=ROOT, stdout=log,
                                         stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 90
        while True:
            try:
                if Client(self.base, timeout=2).request("GET", "/health")[0] == 200:
                    break
            except OSError:  # not listening yet
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                sys.exit(f"the platform did not start; see {self.log}")
            time.sleep(0.5)

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def call(client: Client, method: str, path: str, body: object = None, want: int = 200) -> dict:
    status, payload, _ = client.request(method, path, body)
    if status != want:
        sys.exit(f"setup: {method} {path} answered {status}: {payload[:300]!r}")
    return json.loads(payload)


def jwt_login(base: str, username: str, password: str) -> Client:
    client = Client(base)
    token = call(client, "POST", "/api/v1/security/login", {"username": username, "password": password,
                                                             "provider": "db"})["access_token"]
    client.headers["Authorization"] = f"Bearer {token}"
    return client


def setup(platform: Platform, users: int) -> dict:
    """The no-op pipeline in the demo project and `users` developers of it (passwords random)."""
    admin = jwt_login(platform.base, "admin", platform.password)
    project = call(admin, "GET", "/api/v1/project/?name=demo")["items"][0]["id"]
    template = call(admin, "GET", "/api/v1/job_template/?name=python")["items"][0]["id"]
    pipeline = call(admin, "POST", "/api/v1/pipeline/", {"project_id": project, "name": "load-noop"}, 201)["id"]
    call(admin, "POST", "/api/v1/task/", {"pipeline_id": pipeline, "name": "noop", "template_id": template,
                                          "args": {"command": "true"}}, 201)
    people = []
    for i in range(users):
        name, password = f"load-{i}", uuid.uuid4().hex
        call(admin, "POST", "/api/v1/user/", {"username": name, "first_name": "Load", "email": f"{name}@example.com",
                                              "password": password}, 201)
        call(admin, "POST", f"/api/v1/project/{project}/members", {"username": name, "role": "developer"}, 201)
        people.append((name, password))
    first = call(admin, "POST", "/api/v1/pipeline_run/", {"pipeline_id": pipeline}, 201)["id"]
    return {"project": project, "pipeline": pipeline, "users": people, "runs": [first]}


class Load:
    """Shared state of one phase: samples per endpoint, errors, runs created, the caps."""

    def __init__(self, world: dict, clients: int, seconds: float, args: argparse.Namespace):
        self.world, self.args, self.seconds = world, args, seconds
        self.deadline = float("inf")  # set when every client has signed in
        self.signed_in = threading.Barrier(clients + 1)
        self.samples: dict[str, list[float]] = defaultdict(list)
        self.errors: list[str] = []
        self.lock = threading.Lock()
        self.streams = threading.BoundedSemaphore(args.streams)
        self.next_run_at = time.monotonic()

    def record(self, name: str, started: float, problem: str | None) -> None:
        elapsed = (time.perf_counter() - started) * 1000
        with self.lock:
            if problem:
                self.errors.append(f"{name}: {problem}")
            else:
                self.samples[name].append(elapsed)

    def may_create_run(self) -> bool:
        with self.lock:
            now = time.monotonic()
            if now < self.next_run_at:
                return False
            self.next_run_at = max(now, self.next_run_at) + 1 / self.args.runs_per_second
            return True


def sign_in(base: str, name: str, password: str, browser: bool, load: Load) -> tuple[Client, dict[str, str]]:
    """One login per client: a JWT, or a browser session (cookie) whose writes carry its CSRF token."""
    started = time.perf_counter()
    if not browser:
        client = jwt_login(base, name, password)
        load.record("login (JWT)", started, None)
        return client, {}
    client = Client(base)
    status, payload, _ = client.request("GET", "/api/v1/session/")
    csrf = json.loads(payload)["csrf_token"] if status == 200 else ""
    status, payload, _ = client.request("POST", "/api/v1/session/login", {"username": name, "password": password},
                                        {"X-CSRFToken": csrf})
    if status != 200:
        load.record("login (session)", started, f"{status} {payload[:200]!r}")
        raise RuntimeError("session login failed")
    load.record("login (session)", started, None)
    return client, {"X-CSRFToken": json.loads(payload)["csrf_token"]}


def read_stream(client: Client, path: str, seconds: float) -> tuple[str | None, float]:
    """Reads a server-sent event stream for `seconds` (or to its end). Returns (problem, when the first
    `run` event arrived): the problem is None when that event came."""
    started = time.perf_counter()
    resp = client.stream(path)
    first = float("nan")
    try:
        if resp.status != 200 or not resp.getheader("Content-Type", "").startswith("text/event-stream"):
            return f"{resp.status} {resp.read(200)!r}", first
        stop = time.monotonic() + seconds
        while (left := stop - time.monotonic()) > 0:
            resp.fp.raw._sock.settimeout(left)  # type: ignore[attr-defined]  # a quiet stream ends the read too
            try:
                line = resp.fp.readline()
            except TimeoutError:
                break
            if not line:
                break  # the server ended it (the run finished)
            if line.startswith(b"event:") and line[6:].strip() == b"run" and first != first:
                first = time.perf_counter()
        return (None if first == first else "no run event"), first - started
    finally:
        resp.close()


def client_loop(index: int, base: str, load: Load) -> None:
    rnd = random.Random(index)
    name, password = load.world["users"][index % len(load.world["users"])]
    try:
        client, write_headers = sign_in(base, name, password, browser=index % 2 == 1, load=load)
    except (OSError, RuntimeError, ValueError) as exc:
        load.record("login", time.perf_counter(), repr(exc))
        return
    finally:
        load.signed_in.wait()  # the measured phase starts when every client is signed in
    project, pipeline = load.world["project"], load.world["pipeline"]
    lists = [f"/api/v1/pipeline/?project_id={project}", f"/api/v1/pipeline_run/?project_id={project}",
             f"/api/v1/task_run/?project_id={project}", "/api/v1/project/"]
    ops, weights = list(MIX), list(MIX.values())
    while time.monotonic() < load.deadline:
        op = rnd.choices(ops, weights)[0]
        if op == "create_run" and not load.may_create_run():
            op = "list"
        if op == "sse" and not load.streams.acquire(blocking=False):
            op = "list"
        run = rnd.choice(load.world["runs"][-20:])
        started = time.perf_counter()
        try:
            if op == "sse":
                try:
                    problem, first = read_stream(client, f"/api/v1/pipeline_run/{run}/events", load.args.sse_seconds)
                finally:
                    load.streams.release()
                load.record("GET pipeline_run/{id}/events", time.perf_counter() - first, problem)  # to 1st event
                continue
            if op == "list":
                path = rnd.choice(lists)
                path += f"{'&' if '?' in path else '?'}page={rnd.randrange(3)}"
                status, payload, _ = client.request("GET", path)
                # count and page are two statements: runs created in between may show in one only
                body = json.loads(payload) if status == 200 else {}
                ok = isinstance(body.get("count"), int) and len(body.get("items", ())) <= 25
                name_ = "GET " + path.split("/")[3] + " (list)"
            elif op == "get_run":
                status, payload, _ = client.request("GET", f"/api/v1/pipeline_run/{run}")
                ok, name_ = status == 200 and json.loads(payload)["id"] == run, "GET pipeline_run/{id}"
            elif op == "me":
                status, payload, _ = client.request("GET", "/api/v1/me/")
                ok, name_ = status == 200 and json.loads(payload)["username"] == name, "GET me"
            else:
                status, payload, _ = client.request("POST", "/api/v1/pipeline_run/", {"pipeline_id": pipeline},
                                                    write_headers)
                ok, name_ = status == 201, "POST pipeline_run"
                if ok:
                    with load.lock:
                        load.world["runs"].append(json.loads(payload)["id"])
        except (OSError, ValueError, KeyError) as exc:
            load.record(op, started, repr(exc))
            continue
        load.record(name_, started, None if ok else f"{status} {payload[:200]!r}")
    client.close()


def drive(base: str, world: dict, clients: int, seconds: float, args: argparse.Namespace, pid: int
          ) -> tuple[Load, float, dict[str, float]]:
    """Signs every client in (timed, not part of the phase: password hashing is slow on purpose), then
    runs the mix for `seconds`. Returns the samples, the phase's wall time and its CPU use (cores)."""
    load = Load(world, clients, seconds, args)
    threads = [threading.Thread(target=client_loop, args=(i, base, load)) for i in range(clients)]
    for t in threads:
        t.start()
    load.signed_in.wait()
    began, cpu, server = time.monotonic(), time.process_time(), tree_cpu(pid)
    load.deadline = began + seconds
    for t in threads:
        t.join()
    wall = time.monotonic() - began
    return load, wall, {"client": (time.process_time() - cpu) / wall, "server": (tree_cpu(pid) - server) / wall}


def settle(platform: Platform, world: dict, timeout: float) -> list[str]:
    """Every run created must succeed (the worker and beat kept up, nothing lost)."""
    admin = jwt_login(platform.base, "admin", platform.password)
    deadline, states = time.monotonic() + timeout, {}
    while time.monotonic() < deadline:
        states = {}
        for page in range(1000):
            body = call(admin, "GET", f"/api/v1/pipeline_run/?pipeline_id={world['pipeline']}&page_size=100"
                                      f"&page={page}")
            states |= {item["id"]: item["state"] for item in body["items"]}
            if len(body["items"]) < 100:
                break
        if all(states.get(run) in TERMINAL for run in world["runs"]):
            break
        time.sleep(1)
    problems = [f"run {run} is {states.get(run, 'missing')}" for run in world["runs"] if states.get(run) != "succeeded"]
    return problems[:5] + ([f"... {len(problems) - 5} more"] if len(problems) > 5 else [])


def tree_cpu(pid: int) -> float:
    try:
        root = psutil.Process(pid)
        procs = [root, *root.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0.0
    for proc in procs:
        try:
            total += sum(proc.cpu_times()[:2])
        except psutil.Error:  # a job process that ended meanwhile
            pass
    return total


def report(base_load: Load, base_wall: float, load: Load, wall: float, args: argparse.Namespace) -> None:
    head = f"{'endpoint':<32}{'reqs':>7}{'req/s':>8}{'p50':>8}{'p95':>8}{'p99':>8}{'1-client p50':>14}{'ratio':>7}"
    print(head + "\n" + "-" * len(head))
    every = [v for name, values in load.samples.items() for v in values if not name.startswith("login")]
    for name in sorted(load.samples):
        values, alone = load.samples[name], base_load.samples.get(name, [])
        if name.startswith("login"):
            print(f"{name:<32}{len(values):>7}{'':>8}{pct(values, 50):>8.1f}{pct(values, 95):>8.1f}"
                  f"{pct(values, 99):>8.1f}{pct(alone, 50) if alone else float('nan'):>14.1f}"
                  "  (all clients at once, before the phase)")
            continue
        ratio = f"{pct(values, 50) / pct(alone, 50):.1f}x" if alone else ""
        print(f"{name:<32}{len(values):>7}{len(values) / wall:>8.1f}{pct(values, 50):>8.1f}{pct(values, 95):>8.1f}"
              f"{pct(values, 99):>8.1f}{pct(alone, 50) if alone else float('nan'):>14.1f}{ratio:>7}")
    print(f"{'ALL':<32}{len(every):>7}{len(every) / wall:>8.1f}{pct(every, 50):>8.1f}{pct(every, 95):>8.1f}"
          f"{pct(every, 99):>8.1f}")


def main() -> int:
    args = parse_args()
    home = Path(tempfile.mkdtemp(prefix="myapp-load-"))
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    db_name = None
    if args.pg:
        import redis

        db_name = f"myapp_load_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(args.pg, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{db_name}"')
        redis.Redis.from_url(REDIS_DB).flushdb()
        env |= {"DATABASE_URL": args.pg.rsplit("/", 1)[0] + f"/{db_name}", "REDIS_URL": REDIS_DB}
    platform, status = None, 1
    try:
        platform = Platform(args, home, env)
        world = setup(platform, args.users)
        print(f"platform: myapp run ({args.web_workers} web workers, Celery worker and beat) on "
              f"{'PostgreSQL + Redis' if args.pg else 'the embedded default (SQLite, filesystem broker)'}; "
              f"{os.cpu_count()} cpus; {args.users} developers; runs <= {args.runs_per_second}/s, "
              f"<= {args.streams} streams of {args.sse_seconds:.0f} s")
        base_load, base_wall, _ = drive(platform.base, world, 1, args.baseline_seconds, args, platform.proc.pid)
        load, wall, cpu = drive(platform.base, world, args.clients, args.seconds, args, platform.proc.pid)
        created = len(world["runs"])
        problems = [*base_load.errors, *load.errors]
        problems += settle(platform, world, args.settle)
        print(f"\n{args.clients} clients x {args.seconds:.0f} s (baseline: 1 client x {args.baseline_seconds:.0f} s "
              f"of the same mix)\n")
        report(base_load, base_wall, load, wall, args)
        total = sum(len(v) for v in load.samples.values())  # logins included
        print(f"\nthroughput {total / wall:.0f} req/s; {created} runs created, all checked; CPU: platform "
              f"{cpu['server']:.2f} cores (web, worker, beat, jobs), load generator {cpu['client']:.2f} of a core")
        for problem in problems[:10]:
            print(f"PROBLEM {problem}")
        errors = len(base_load.errors) + len(load.errors)
        verdict = "BROKEN" if problems else "MET"
        print(f"target 0 errors over {total} requests of {args.clients} clients: {verdict} ({errors} errors)")
        status = 1 if problems else 0
    finally:
        if platform is not None:
            platform.stop()
        if args.keep:
            print(f"\nkept: MYAPP_HOME={home}" + (f" database {db_name}" if db_name else ""))
        else:
            shutil.rmtree(home, ignore_errors=True)
            if db_name:
                with psycopg.connect(args.pg, autocommit=True) as conn:
                    conn.execute(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)')
        if args.pg:
            import redis

            redis.Redis.from_url(REDIS_DB).flushdb()
    return status


if __name__ == "__main__":
    sys.exit(main())
