#!/usr/bin/env python
"""The run controller under load: N runs x 10 tasks on Celery workers, against a fast fake backend.

Real parts: PostgreSQL (a throw-away database), Redis as the Celery broker, Celery workers
(in this process, thread pool), the platform's reconcile_run task and controller. Fake part:
the backend, whose jobs finish on their second status poll (no real work), so the figures
measure the controller, SQL and the broker.

Prints state transitions per second (counted as they are committed: every change of a run's
or task run's state) and, for every task with an upstream, the latency from "upstream done"
(the controller recording its success) to "submitted" (the downstream attempt handed to the
backend), p50/p95 against the 200 ms target. Baseline in the same run: the same runs
reconciled by one in-process loop with no broker, the controller's own floor.

    .venv/bin/python benchmarks/controller.py [--runs 1000] [--tasks 10] [--workers 4]
    .venv/bin/python benchmarks/controller.py --quick      # 40 runs, ~20 s

Exit status 1 means the benchmark broke: a run that did not succeed, a task run missing or
retried, a job created twice. A missed latency target is only reported.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # myapp, and tests.fake_backend: the fake backend the tests use
TARGET_P95_MS = 200.0
QUICK = {"runs": 40, "workers": 2, "timeout": 120}


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=1000)
    p.add_argument("--tasks", type=int, default=10)
    p.add_argument("--workers", type=int, default=4, help="Celery worker threads")
    p.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/postgres")
    p.add_argument("--redis", default="redis://127.0.0.1:6379/14")
    p.add_argument("--timeout", type=float, default=1200, help="give up after this many seconds")
    p.add_argument("--quick", action="store_true", help="{runs} runs on {workers} worker threads".format(**QUICK))
    args = p.parse_args()
    if args.quick:
        vars(args).update(QUICK)
    return args


class TransitionCounter:
    """Counts state changes of runs and task runs as they are committed: each transition() that
    changed a state is held by its session until commit (a rolled-back pass counts nothing)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.committed: Counter[str] = Counter()  # "TaskRun running->succeeded" -> count

    def install(self) -> None:
        import sqlalchemy as sa
        from sqlalchemy.orm import object_session

        from myapp.models import PipelineRun, TaskRun

        def counting(original):
            def transition(row, new, reason=None, now=None):
                before = row.state
                original(row, new, reason, now)
                if row.state != before:
                    key = f"{type(row).__name__} {before.value}->{row.state.value}"
                    object_session(row).info.setdefault("bench_transitions", []).append(key)
            return transition

        for model in (PipelineRun, TaskRun):
            model.transition = counting(model.transition)
        sa.event.listen(sa.orm.Session, "after_commit", self._commit)
        sa.event.listen(sa.orm.Session, "after_rollback", lambda session: session.info.pop("bench_transitions", None))

    def _commit(self, session) -> None:
        done = session.info.pop("bench_transitions", [])
        with self.lock:
            self.committed.update(done)

    def take(self) -> Counter[str]:
        """The transitions committed since the last take."""
        with self.lock:
            out, self.committed = self.committed, Counter()
        return out


def admin_sql(pg: str, sql: str) -> None:
    with psycopg.connect(pg, autocommit=True) as conn:
        conn.execute(sql)


def seed(app, runs: int, tasks: int) -> list[int]:
    """One pipeline per 10 runs: a chain of `tasks` tasks with a fan-out in the middle."""
    from myapp.catalog import load_catalog
    from myapp.extensions import db
    from myapp.models import Edge, JobTemplate, Pipeline, PipelineRun, Project, Task
    from myapp.setup_data import sync_catalog

    with app.app_context():
        sync_catalog(load_catalog())
        template = db.session.query(JobTemplate).filter_by(name="python").one()
        project = Project(name="bench", namespace="bench")
        db.session.add(project)
        db.session.flush()
        run_ids = []
        for p in range((runs + 9) // 10):
            pipeline = Pipeline(project_id=project.id, name=f"p{p}", max_active_runs=10)
            db.session.add(pipeline)
            db.session.flush()
            ids = []
            for t in range(tasks):
                task = Task(project_id=project.id, pipeline_id=pipeline.id, name=f"t{t}", template_id=template.id,
                            args={"command": f"echo {t}"}, retry_delay=0)
                db.session.add(task)
                db.session.flush()
                ids.append(task.id)
            for t in range(1, tasks):  # t0 -> t1..t3 fan out, then a chain
                up = ids[0] if t <= 3 else ids[t - 1]
                db.session.add(Edge(project_id=project.id, pipeline_id=pipeline.id,
                                    upstream_task_id=up, downstream_task_id=ids[t]))
            for r in range(min(10, runs - p * 10)):
                run = PipelineRun(project_id=project.id, pipeline_id=pipeline.id, run_key=f"r{r}",
                                  logical_date=dt.date(2026, 1, 1) + dt.timedelta(days=r))
                db.session.add(run)
                db.session.flush()
                run_ids.append(run.id)
        db.session.commit()
        return run_ids


def measure(app, run_ids: list[int], tasks: int, started: float, finished: float, transitions: Counter[str],
            backend) -> dict:
    from myapp.extensions import db
    from myapp.models import Edge, PipelineRun, TaskRun

    with app.app_context():
        rows = db.session.query(TaskRun.pipeline_run_id, TaskRun.task_id, TaskRun.submitted_at, TaskRun.finished_at,
                                TaskRun.state, TaskRun.attempt).filter(TaskRun.pipeline_run_id.in_(run_ids)).all()
        edges = db.session.query(Edge.upstream_task_id, Edge.downstream_task_id).all()
        states = db.session.query(PipelineRun.state).filter(PipelineRun.id.in_(run_ids)).all()
    problems = []
    succeeded = sum(1 for (s,) in states if s.value == "succeeded")
    if succeeded != len(run_ids):
        problems.append(f"{len(run_ids) - succeeded} of {len(run_ids)} runs did not succeed")
    if len(rows) != len(run_ids) * tasks or any(r.attempt != 1 or r.state.value != "succeeded" for r in rows):
        problems.append(f"{len(rows)} task runs, expected {len(run_ids) * tasks} first attempts, all succeeded")
    twice = [job for job, n in backend.creations.items() if n != 1]
    if twice:
        problems.append(f"{len(twice)} jobs created more than once")
    by_key = {(r.pipeline_run_id, r.task_id): r for r in rows}
    ups: dict[int, list[int]] = {}
    for up, down in edges:
        ups.setdefault(down, []).append(up)
    latencies = []
    for (run_id, task_id), row in by_key.items():
        if task_id not in ups or row.submitted_at is None:
            continue
        done = max(by_key[(run_id, u)].finished_at for u in ups[task_id])
        latencies.append((row.submitted_at - done).total_seconds() * 1000)
    latencies.sort()
    return {"runs": len(run_ids), "succeeded": succeeded, "task_runs": len(rows), "seconds": finished - started,
            "transitions": sum(transitions.values()), "kinds": transitions, "problems": problems,
            "p50": latencies[len(latencies) // 2] if latencies else float("nan"),
            "p95": latencies[int(len(latencies) * 0.95)] if latencies else float("nan")}


def run_celery(app, run_ids: list[int], args: argparse.Namespace, counter: TransitionCounter, backend) -> dict:
    import redis
    from celery.contrib.testing.worker import start_worker

    from myapp.celery_app import make_celery
    from myapp.config import celery_settings
    from myapp.extensions import db
    from myapp.models import PipelineRun, RunState

    redis.Redis.from_url(args.redis).flushdb()
    celery = make_celery(app, celery_settings(Path(app.config["INSTANCE_PATH"]), args.redis))
    celery.loader.import_default_modules()
    started = time.monotonic()
    with start_worker(celery, pool="threads", concurrency=args.workers, perform_ping_check=False,
                      shutdown_timeout=60, loglevel="WARNING"):
        for run_id in run_ids:
            celery.send_task("myapp.reconcile_run", args=[run_id])
        while time.monotonic() - started < args.timeout:
            time.sleep(0.2)  # what beat's tick does for runs that are still going
            with app.app_context():
                active = [r for (r,) in db.session.query(PipelineRun.id).filter(
                    PipelineRun.id.in_(run_ids), PipelineRun.state.in_([RunState.QUEUED, RunState.RUNNING]))]
            if not active:
                break
            for run_id in active:
                celery.send_task("myapp.reconcile_run", args=[run_id])
    finished = time.monotonic()
    return measure(app, run_ids, args.tasks, started, finished, counter.take(), backend)


def run_inline(app, run_ids: list[int], tasks: int, counter: TransitionCounter, backend) -> dict:
    from myapp.backends.registry import backend_for
    from myapp.pipelines.controller import RunController

    controller = RunController(backend_for)
    started = time.monotonic()
    with app.app_context():
        pending = list(run_ids)
        while pending:
            pending = [r for r in pending if controller.reconcile(r).value not in ("succeeded", "failed", "cancelled")]
    finished = time.monotonic()
    return measure(app, run_ids, tasks, started, finished, counter.take(), backend)


def show(label: str, m: dict) -> None:
    print(f"{label:<22} runs {m['succeeded']}/{m['runs']} succeeded, {m['task_runs']} task runs "
          f"in {m['seconds']:.1f} s: {m['transitions']} transitions, {m['transitions'] / m['seconds']:.0f}/s; "
          f"upstream done -> submitted p50 {m['p50']:.1f} ms, p95 {m['p95']:.1f} ms")
    print(f"{'':<22} " + ", ".join(f"{kind} {n}" for kind, n in sorted(m["kinds"].items())))
    for problem in m["problems"]:
        print(f"{'':<22} PROBLEM {problem}")


def main() -> int:
    args = parse_args()
    name = f"myapp_ctl_{uuid.uuid4().hex[:8]}"
    os.environ.update(DATABASE_URL=args.pg.rsplit("/", 1)[0] + f"/{name}", MYAPP_HOME=tempfile.mkdtemp())
    os.environ.pop("REDIS_URL", None)
    admin_sql(args.pg, f'CREATE DATABASE "{name}"')
    try:
        from myapp.app import create_app
        from myapp.backends import registry
        from myapp.extensions import db
        from myapp.migrate import upgrade
        from tests.fake_backend import FakeBackend

        app = create_app()
        with app.app_context():
            upgrade()
        counter = TransitionCounter()
        counter.install()
        backend = registry._backends[("default", app.config["MYAPP_BACKEND"])] = FakeBackend()
        baseline_ids = seed(app, max(10, args.runs // 10), args.tasks)
        counter.take()  # seeding changes no state; start from zero all the same
        base = run_inline(app, baseline_ids, args.tasks, counter, backend)
        with app.app_context():
            db.session.execute(db.text("DELETE FROM project"))  # start the measured phase clean
            db.session.commit()
        backend = registry._backends[("default", app.config["MYAPP_BACKEND"])] = FakeBackend()
        run_ids = seed(app, args.runs, args.tasks)
        counter.take()
        celery_m = run_celery(app, run_ids, args, counter, backend)
        print(f"{args.runs} runs x {args.tasks} tasks; PostgreSQL + Redis broker; "
              f"{args.workers} Celery worker threads; {os.cpu_count()} cpus")
        show("baseline (inline loop)", base)
        show("Celery on Redis", celery_m)
        ratio = celery_m["transitions"] / celery_m["seconds"] / (base["transitions"] / base["seconds"])
        print(f"throughput vs baseline: {ratio:.2f}x")
        broken = base["problems"] + celery_m["problems"]
        verdict = "BROKEN" if broken else "MET" if celery_m["p95"] <= TARGET_P95_MS else "MISSED"
        print(f"target p95 upstream done -> submitted <= {TARGET_P95_MS:.0f} ms: {verdict} ({celery_m['p95']:.1f} ms)")
        with app.app_context():
            db.engine.dispose()
        return 1 if broken else 0
    finally:
        admin_sql(args.pg, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    sys.exit(main())
