#!/usr/bin/env python
"""Latency of the paged list APIs on PostgreSQL (or SQLite) with 10,000 pipelines and 100,000 task runs.

Creates a throw-away database, migrates and seeds it, starts the real gunicorn server,
logs in as a project member (non-admin: the project-scoped path) and drives N concurrent
keep-alive clients against /api/v1/{pipeline,pipeline_run,task_run}/ for a bounded time.
Prints p50/p95/p99 per endpoint against the 50 ms p95 target, with two baselines from
the same run: /health under the same load (server floor) and the raw SQL of each list.

    .venv/bin/python benchmarks/api_list.py [--seconds 20] [--clients 20] [--keep]
    .venv/bin/python benchmarks/api_list.py --quick     # 500 pipelines, 4 clients, 3 s per phase
    .venv/bin/python benchmarks/api_list.py --sqlite    # the same on the embedded default (SQLite)

Exit status 1 means the benchmark broke: a request failed, a list returned no rows or a count
other than the same query's in SQL. A missed latency target is only reported.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import logging
import os
import random
import secrets
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg
from support.http_client import Client, free_port, login
from support.server_cpu import connections_per_worker, cpu_per_request, cpu_seconds, pct

TARGET_P95_MS = 50.0
PAGES, PAGE_SIZE = 20, 25  # clients ask for a random page among the first 20 (fewer if the list is shorter)
QUICK = {"pipelines": 500, "task_runs": 2000, "clients": 4, "seconds": 3.0}
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a checkout without installing
RUN_STATES = ["succeeded"] * 7 + ["failed", "cancelled", "running"]
TASK_STATES = ["succeeded"] * 7 + ["failed", "upstream_failed", "skipped"]


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--pipelines", type=int, default=10_000)
    p.add_argument("--task-runs", type=int, default=100_000, help="2 per pipeline run")
    p.add_argument("--projects", type=int, default=10, help="projects the data is spread over")
    p.add_argument("--member-of", type=int, default=2, help="of which the benchmark user is a developer in")
    p.add_argument("--clients", type=int, default=20)
    p.add_argument("--seconds", type=float, default=20.0, help="measured time per phase")
    p.add_argument("--max-requests", type=int, default=200_000, help="hard cap per phase")
    p.add_argument("--web-workers", type=int, default=2)
    p.add_argument("--threads", type=int, default=4, help="gunicorn gthread threads per worker")
    p.add_argument("--app", default="myapp.wsgi:app", help="WSGI app to serve (A/B-test a patched entry point)")
    p.add_argument("--pg", default=os.environ.get("MYAPP_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres"),
                   help="admin URL of the server the database is created on")
    p.add_argument("--sqlite", action="store_true", help="the embedded default (SQLite in MYAPP_HOME) instead")
    p.add_argument("--keep", action="store_true", help="keep the database and the instance folder")
    p.add_argument("--reuse", metavar="HOME", help="the instance folder a --keep run left: its database and user, "
                   "not seeded again (A/B runs)")
    p.add_argument("--server-root", type=Path, default=ROOT, help="the checkout the server runs from (A/B: a "
                   "worktree of the old code)")
    p.add_argument("--quick", action="store_true", help="{pipelines} pipelines, {task_runs} task runs, "
                   "{clients} clients, {seconds:.0f} s per phase".format(**QUICK))
    args = p.parse_args()
    if args.quick:
        vars(args).update(QUICK)
    return args


def admin_sql(pg: str, sql: str) -> None:
    with psycopg.connect(pg, autocommit=True) as conn:
        conn.execute(sql)


def seed(args: argparse.Namespace) -> dict:
    """Migrate, sync roles, create the user and bulk-insert the rows. Returns ids and credentials."""
    import sqlalchemy as sa

    from myapp.app import create_app
    from myapp.extensions import db
    from myapp.models import JobTemplate, Pipeline, PipelineRun, Project, ProjectMember, Task, TaskRun
    from myapp.models.list_count import fold
    from myapp.models.migrate import upgrade
    from myapp.setup_data import create_user, sync_roles

    logging.getLogger("flask_appbuilder").setLevel(logging.ERROR)  # startup chatter
    rnd = random.Random(42)
    app = create_app()
    with app.app_context():
        upgrade()
        sync_roles()
        password = secrets.token_urlsafe(16)
        user = create_user("bench", password)
        template = JobTemplate(name="train", version="1", kind="Job", image="python:3.11-slim",
                               command=["python", "-c", "print(1)"])
        projects = [Project(name=f"proj-{i}", namespace=f"proj-{i}") for i in range(args.projects)]
        db.session.add_all([template, *projects])
        db.session.flush()
        pids = [p.id for p in projects]
        member = pids[:args.member_of]
        db.session.add_all(ProjectMember(project_id=pid, user_id=user.id, role="developer") for pid in member)

        t0 = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
        pipelines = [{"id": i + 1, "project_id": pids[i % len(pids)], "name": f"pipeline-{i}",
                      "parameters": {"lr": "0.01"}, "created_by_id": user.id,
                      "created_at": t0 + dt.timedelta(minutes=i), "updated_at": t0 + dt.timedelta(minutes=i)}
                     for i in range(args.pipelines)]
        tasks = [{"id": 2 * i + k + 1, "project_id": p["project_id"], "pipeline_id": p["id"], "name": name,
                  "template_id": template.id, "args": {"epochs": 3}, "resources": {"cpu": "1", "memory": "2Gi"}}
                 for i, p in enumerate(pipelines) for k, name in enumerate(("train", "evaluate"))]
        runs, task_runs = [], []
        for j in range(args.task_runs // 2):
            p = pipelines[j % len(pipelines)]
            created = t0 + dt.timedelta(seconds=30 * j)
            state = rnd.choice(RUN_STATES)
            runs.append({"id": j + 1, "project_id": p["project_id"], "pipeline_id": p["id"], "run_key": f"run-{j}",
                         "state": state, "trigger": "schedule", "parameters": {}, "created_by_id": user.id,
                         "created_at": created, "started_at": created,
                         "finished_at": None if state == "running" else created + dt.timedelta(minutes=5)})
            for k in range(2):
                task_id = 2 * (p["id"] - 1) + k + 1
                tstate = "running" if state == "running" else rnd.choice(TASK_STATES)
                task_runs.append({
                    "id": 2 * j + k + 1, "project_id": p["project_id"], "pipeline_run_id": j + 1, "task_id": task_id,
                    "attempt": 1, "state": tstate, "backend": "kubernetes",
                    "exit_code": 0 if tstate == "succeeded" else None,
                    "manifests": [{"apiVersion": "batch/v1", "kind": "Job",
                                   "metadata": {"name": f"run-{j}-{k}", "namespace": f"proj-{p['project_id']}"},
                                   "spec": {"backoffLimit": 0, "template": {"spec": {"containers": [
                                       {"name": "main", "image": "python:3.11-slim", "args": ["--epochs", "3"]}]}}}}],
                    "created_at": created, "submitted_at": created, "started_at": created,
                    "finished_at": None if tstate == "running" else created + dt.timedelta(minutes=4)})
        for model, rows in ((Pipeline, pipelines), (Task, tasks), (PipelineRun, runs), (TaskRun, task_runs)):
            for i in range(0, len(rows), 5000):  # executemany -> multi-row INSERTs (insertmanyvalues)
                db.session.execute(sa.insert(model), rows[i:i + 5000])
            table = model.__tablename__  # explicit ids: move the sequence past them (SQLite needs nothing)
            if not args.sqlite:
                db.session.execute(sa.text(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                                           f"(SELECT coalesce(max(id), 0) + 1 FROM {table}), false)"))
        db.session.commit()
        with db.engine.begin() as connection:  # the lists' kept counts, one row per key, as beat's tick leaves them
            fold(connection)
        if args.sqlite:
            db.session.execute(sa.text("ANALYZE"))
            db.session.commit()
        db.engine.dispose()
    if not args.sqlite:
        admin_sql(os.environ["DATABASE_URL"], "VACUUM ANALYZE")  # steady state: what autovacuum leaves behind
    return {"username": "bench", "password": password, "member": member}


def start_server(args: argparse.Namespace, port: int, log: Path) -> subprocess.Popen:
    # The settings `myapp run` and the deployments use (gthread, keep-alive, access log), workers and threads
    # as given.
    cmd = [sys.executable, "-m", "gunicorn", "-c", "python:myapp.web.gunicorn_conf", "--bind", f"127.0.0.1:{port}",
           "--workers", str(args.web_workers), "--threads", str(args.threads), args.app]
    root = args.server_root.resolve()
    env = os.environ | {"PYTHONPATH": str(root)}
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                sys.exit(f"gunicorn exited with {proc.returncode}; see {log}")
            try:
                if Client(f"http://127.0.0.1:{port}", timeout=2).request("GET", "/health")[0] == 200:
                    return proc
            except OSError:  # not listening yet, or a worker still booting
                pass
            time.sleep(0.3)
        sys.exit(f"gunicorn not healthy after 60 s; see {log}")
    except BaseException:  # the caller never gets proc: stop it here, whatever went wrong
        proc.terminate()
        proc.wait(30)
        raise


def endpoints(ids: dict) -> dict[str, str]:
    """name -> path (without page); filtered variants use a project the user belongs to."""
    mine = ids["member"][0]
    return {
        "pipeline": "/api/v1/pipeline/?page_size=25",
        "pipeline?project_id": f"/api/v1/pipeline/?page_size=25&project_id={mine}",
        "pipeline_run": "/api/v1/pipeline_run/?page_size=25",
        "pipeline_run?state": "/api/v1/pipeline_run/?page_size=25&state=succeeded",
        "task_run": "/api/v1/task_run/?page_size=25",
        "task_run?state": "/api/v1/task_run/?page_size=25&state=succeeded",
        "task_run?project_id": f"/api/v1/task_run/?page_size=25&project_id={mine}",
    }


def pages(count: int) -> int:
    return max(1, min(PAGES, -(-count // PAGE_SIZE)))


def drive(base: str, token: str | None, paths: dict[str, str], clients: int, seconds: float, cap: int,
          counts: dict[str, int] | None = None) -> dict:
    """Closed loop: each client sends its next request when the last one answered. A list answer must
    hold the rows and the count the same query has in SQL (`counts`), else it is an error."""
    samples: dict[str, list[float]] = {name: [] for name in paths}
    errors: list[str] = []
    lock = threading.Lock()
    budget = [cap]
    deadline = time.monotonic() + seconds
    names = list(paths)

    def client(seed: int) -> None:
        rnd = random.Random(seed)
        session = Client(base, {"Authorization": f"Bearer {token}"} if token else {})
        mine: dict[str, list[float]] = {name: [] for name in paths}
        while time.monotonic() < deadline:
            with lock:
                if budget[0] <= 0:
                    break
                budget[0] -= 1
            name = rnd.choice(names)
            url, want = paths[name], None
            if counts is not None and name in counts:
                page = rnd.randrange(pages(counts[name]))
                url += f"&page={page}"
                want = (counts[name], min(PAGE_SIZE, counts[name] - page * PAGE_SIZE))
            start = time.perf_counter()
            try:
                status, payload, _ = session.request("GET", url)
            except OSError as exc:
                with lock:
                    errors.append(f"{name}: {exc!r}")
                continue
            elapsed = (time.perf_counter() - start) * 1000
            ok = status == 200
            if ok and want is not None:
                body = json.loads(payload)
                ok = (body["count"], len(body["items"])) == want
            if not ok:
                with lock:
                    errors.append(f"{name}: {status} {payload[:200]!r} (expected count, rows {want})")
                continue
            mine[name].append(elapsed)
        session.close()
        with lock:
            for name, values in mine.items():
                samples[name].extend(values)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    began, cpu = time.monotonic(), time.process_time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - began
    return {"samples": samples, "errors": errors, "wall": wall, "client_cpu": (time.process_time() - cpu) / wall}


def raw_sql_ms(db_url: str, paths: dict[str, str], member: list[int], repeat: int = 30
               ) -> tuple[dict[str, float], dict[str, int]]:
    """Median of count(*) + page (a plain implementation of the list: the app reads kept counts where it can)
    on one direct connection; and the counts, which every answer must carry."""
    rnd = random.Random(1)
    result, counts = {}, {}
    if db_url.startswith("sqlite:///"):
        connect: Any = contextlib.closing(sqlite3.connect(db_url.removeprefix("sqlite:///"), isolation_level=None))
    else:
        connect = psycopg.connect(db_url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True)
    with connect as conn:
        for name, path in paths.items():
            table = path.split("/")[3]
            where = [f"project_id IN ({', '.join(map(str, member))})"]
            for arg in path.split("?", 1)[1].split("&"):
                key, value = arg.split("=")
                if key != "page_size":
                    where.append(f"{key} = '{value}'")
            cond = " AND ".join(where)
            times = []
            for _ in range(repeat):
                start = time.perf_counter()
                counts[name] = conn.execute(f"SELECT count(*) FROM (SELECT * FROM {table} WHERE {cond}) AS s"
                                            ).fetchone()[0]
                conn.execute(f"SELECT * FROM {table} WHERE {cond} ORDER BY id DESC LIMIT {PAGE_SIZE} "
                             f"OFFSET {PAGE_SIZE * rnd.randrange(pages(counts[name]))}").fetchall()
                times.append((time.perf_counter() - start) * 1000)
            result[name] = pct(times, 50)
    return result, counts


def report(load: dict, health: dict, sql: dict[str, float]) -> int:
    def row(label: str, values: list[float], wall: float, sql_ms: str = "", verdict: str = "") -> None:
        print(f"{label:<22}{len(values):>7}{len(values) / wall:>8.1f}{pct(values, 50):>8.1f}"
              f"{pct(values, 95):>8.1f}{pct(values, 99):>8.1f}{sql_ms:>9}  {verdict}")

    head = f"{'endpoint':<22}{'reqs':>7}{'req/s':>8}{'p50':>8}{'p95':>8}{'p99':>8}{'sql p50':>9}  p95<=50ms"
    print(head + "\n" + "-" * len(head))
    every = [v for values in load["samples"].values() for v in values]
    for name, values in [*load["samples"].items(), ("ALL list endpoints", every)]:
        met = "yes" if pct(values, 95) <= TARGET_P95_MS else "NO"
        row(name, values, load["wall"], f"{sql[name]:.2f}" if name in sql else "", met)
    hv = health["samples"]["/health"]
    row("/health (baseline)", hv, health["wall"])
    sql_median = pct(list(sql.values()), 50)
    print(f"\nratios: list p95 / health p95 = {pct(every, 95) / pct(hv, 95):.1f}x; "
          f"list p50 / health p50 = {pct(every, 50) / pct(hv, 50):.1f}x; "
          f"list p50 / raw SQL p50 (median over endpoints, {sql_median:.2f} ms) = {pct(every, 50) / sql_median:.1f}x")
    print(f"throughput: lists {len(every) / load['wall']:.0f} req/s vs /health {len(hv) / health['wall']:.0f} req/s "
          f"(closed loop: p50 ~= clients / throughput); load generator CPU: {load['client_cpu']:.0%} "
          f"of a core during lists, {health['client_cpu']:.0%} during /health")
    problems = []
    for phase in (load, health):
        if phase["errors"]:
            problems.append(f"{len(phase['errors'])} failed requests, first: {phase['errors'][0]}")
    problems += [f"no {name} request answered" for name, values in
                 [*load["samples"].items(), *health["samples"].items()] if not values]
    for problem in problems:
        print(f"PROBLEM {problem}")
    verdict = "BROKEN" if problems else "MET" if pct(every, 95) <= TARGET_P95_MS else "MISSED"
    print(f"target p95 <= {TARGET_P95_MS:.0f} ms over all list requests: {verdict} ({pct(every, 95):.1f} ms)")
    return 1 if problems else 0


def main() -> int:
    args = parse_args()
    if args.reuse:
        return main_reusing(args, Path(args.reuse))
    home = Path(tempfile.mkdtemp(prefix="myapp-bench-"))
    if args.sqlite:  # the embedded default: the database file in MYAPP_HOME
        name, db_url = "myapp.sqlite", f"sqlite:///{home / 'myapp.sqlite'}"
    else:
        name = f"myapp_bench_{uuid.uuid4().hex[:8]}"
        db_url = args.pg.rsplit("/", 1)[0] + f"/{name}"
        admin_sql(args.pg, f'CREATE DATABASE "{name}"')
    os.environ.update(DATABASE_URL=db_url, MYAPP_HOME=str(home))
    os.environ.pop("REDIS_URL", None)
    status = 1
    try:
        start = time.monotonic()
        ids = seed(args)
        if args.keep:
            (home / "bench.json").write_text(json.dumps({"name": name, "db_url": db_url, "ids": ids}))
        print(f"database {name}: {args.pipelines} pipelines, {args.task_runs // 2} pipeline runs, "
              f"{args.task_runs} task runs in {args.projects} projects, seeded in {time.monotonic() - start:.1f} s; "
              f"user is developer in {len(ids['member'])}")
        status = measure(args, home, name, db_url, ids)
    finally:
        if args.keep:
            print(f"\nkept: DATABASE_URL={db_url} MYAPP_HOME={home} (again: --reuse {home})")
        else:
            if not args.sqlite:
                admin_sql(args.pg, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            shutil.rmtree(home, ignore_errors=True)
    return status


def main_reusing(args: argparse.Namespace, home: Path) -> int:
    kept = json.loads((home / "bench.json").read_text())
    args.sqlite = kept["db_url"].startswith("sqlite")
    os.environ.update(DATABASE_URL=kept["db_url"], MYAPP_HOME=str(home))
    os.environ.pop("REDIS_URL", None)
    print(f"database {kept['name']} as a --keep run left it")
    return measure(args, home, kept["name"], kept["db_url"], kept["ids"])


def measure(args: argparse.Namespace, home: Path, name: str, db_url: str, ids: dict) -> int:
    """Start the server, drive the lists and /health, report; the server is stopped before returning."""
    proc, status = None, 1
    try:
        port = free_port()
        proc = start_server(args, port, home / "gunicorn.log")
        base = f"http://127.0.0.1:{port}"
        token = login(base, ids["username"], ids["password"])
        paths = endpoints(ids)
        warm = min(5.0, args.seconds / 2)
        print(f"gunicorn: {args.web_workers} workers x {args.threads} threads; {args.clients} clients; "
              f"warm-up {warm:.0f} s, then {args.seconds:.0f} s per phase; pages 0-{PAGES - 1} of {PAGE_SIZE} rows "
              f"(fewer if shorter); {os.cpu_count()} cpus")
        sql, counts = raw_sql_ms(db_url, paths, ids["member"])
        drive(base, token, paths, args.clients, warm, args.max_requests, counts)
        cpu = [cpu_seconds(proc.pid, None if args.sqlite else name)]
        spread: list[list[int]] = []
        sampler = threading.Timer(args.seconds / 2, lambda: spread.append(connections_per_worker(proc.pid, port)))
        sampler.start()
        load = drive(base, token, paths, args.clients, args.seconds, args.max_requests, counts)
        cpu.append(cpu_seconds(proc.pid, None if args.sqlite else name))
        # The floor: the same server and clients, a request that reads the database but needs no sign-in.
        health = drive(base, None, {"/health": "/health"}, args.clients, args.seconds, args.max_requests)
        cpu.append(cpu_seconds(proc.pid, None if args.sqlite else name))
        print()
        status = report(load, health, sql)
        sampler.join()
        print(f"client connections per gunicorn worker, mid-phase: {spread[0] if spread else 'not sampled'}")
        for label, phase, before, after in (("lists", load, cpu[0], cpu[1]), ("/health", health, cpu[1], cpu[2])):
            served = sum(len(v) for v in phase["samples"].values())
            print(f"{label}: {cpu_per_request(before, after, phase['wall'], served)}")
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
    return status


if __name__ == "__main__":
    sys.exit(main())
