#!/usr/bin/env python
"""The run controller under load: N runs x 10 tasks on Celery workers, against a fast fake backend.

Real parts: PostgreSQL (a throw-away database; `--db sqlite`: the embedded default's file), the
Celery broker (the embedded SQLite transport of myapp/shared/broker.py, and Redis), Celery workers (in this
process, thread pool), the platform's reconcile_run and cancel_run tasks, its reconcile requests
(myapp/shared/reconcile_requests.py: one pending per run, beat's tick asking only for runs that are due)
and its controller. Fake part: the backend, whose jobs finish on their second status poll (or
never, for the load phase), so the figures measure the controller, SQL and the broker.

Per broker, two phases:
* throughput: `--runs` runs x `--tasks` tasks requested at once as a backfill would be; state
  transitions per second (counted as they are committed) against the baseline (the same work
  reconciled by one in-process loop with no broker, the controller's own floor), and for every task
  with an upstream the latency from "upstream done" to "downstream submitted" (p50/p95).
* load: `--long-runs` runs whose one task never ends, for `--minutes`, beat ticking every
  MYAPP_TICK_SECONDS; meanwhile a new run in another project every `--probe-every` seconds (start
  latency: created -> its job submitted) and a cancel of one long run as often (cancel latency:
  sent -> the run cancelled). Prints the broker's queue length (sampled), its maximum, and the
  reconciles per second the workers did.

    .venv/bin/python benchmarks/controller.py [--runs 1000] [--long-runs 1000] [--minutes 10] [--workers 4]
    .venv/bin/python benchmarks/controller.py --brokers redis --minutes 2
    .venv/bin/python benchmarks/controller.py --quick      # small phases on both brokers, ~40 s

Exit status 1 means the benchmark broke: a run that did not succeed (or a long run that ended
uncancelled), a task run missing or retried, a job created twice, a probe run that never started,
a cancel that never took effect. A missed target is only reported.
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

import psycopg
from support.controller_probes import Beat, CancelTrace, TransitionCounter, pct

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # myapp, and tests.fake_backend: the fake backend the tests use
from myapp.cli import WORKER_CONCURRENCY  # noqa: E402 - after the path

TARGET_P95_MS = 50.0  # upstream done -> downstream submitted, on Redis
TARGET_RATIO = 0.9  # throughput on Redis against the inline baseline
TARGET_START_S = 5.0  # a new run in another project, p95, during the load phase
TARGET_CANCEL_S = 2.0  # every cancel, during the load phase
QUICK = {"runs": 10, "long_runs": 50, "minutes": 0.1, "probe_every": 1.0, "workers": 2, "timeout": 120}
BROKERS = ("embedded", "redis")
PHASES = ("throughput", "load")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    p.add_argument("--runs", type=int, default=1000, help="throughput phase: runs of --tasks tasks")
    p.add_argument("--tasks", type=int, default=10)
    p.add_argument("--long-runs", type=int, default=1000, help="load phase: runs that never end")
    p.add_argument("--minutes", type=float, default=10, help="load phase: how long")
    p.add_argument("--probe-every", type=float, default=5.0, help="load phase: seconds between new runs and cancels")
    p.add_argument("--workers", type=int, default=WORKER_CONCURRENCY,
                   help="Celery worker threads (default: the platform's worker concurrency, myapp.cli)")
    p.add_argument("--brokers", nargs="+", choices=BROKERS, default=list(BROKERS))
    p.add_argument("--db", choices=("postgresql", "sqlite"), default="postgresql",
                   help="sqlite: the embedded default's database, a file in a temporary MYAPP_HOME")
    p.add_argument("--pg", default="postgresql://postgres@127.0.0.1:5432/postgres")
    p.add_argument("--redis", default="redis://127.0.0.1:6379/14")
    p.add_argument("--timeout", type=float, default=1200, help="throughput phase: give up after this many seconds")
    p.add_argument("--phases", nargs="+", choices=PHASES, default=list(PHASES),
                   help="throughput (with its inline baseline) and/or load (new runs and cancels)")
    p.add_argument("--quick", action="store_true",
                   help="{runs} runs, {long_runs} long runs for {minutes} min, {workers} threads".format(**QUICK))
    args = p.parse_args()
    if args.quick:
        vars(args).update(QUICK)
    return args


def admin_sql(pg: str, sql: str) -> None:
    with psycopg.connect(pg, autocommit=True) as conn:
        conn.execute(sql)


def seed(app, runs: int, tasks: int, project_name: str = "bench", task_name: str = "t", per_pipeline: int = 10
         ) -> list[int]:
    """One pipeline per `per_pipeline` runs: a chain of `tasks` tasks with a fan-out in the middle.
    Tasks are named task_name + number: what the fake backend's script goes by."""
    from myapp.extensions import db
    from myapp.models import Edge, JobTemplate, Pipeline, PipelineRun, Project, Task
    from myapp.rendering.catalog import load_catalog
    from myapp.setup_data import sync_catalog

    with app.app_context():
        if not db.session.query(JobTemplate).filter_by(name="python").first():
            sync_catalog(load_catalog())
        template = db.session.query(JobTemplate).filter_by(name="python").one()
        project = Project(name=project_name, namespace=project_name)
        db.session.add(project)
        db.session.flush()
        run_ids = []
        for p in range((runs + per_pipeline - 1) // per_pipeline):
            pipeline = Pipeline(project_id=project.id, name=f"p{p}", max_active_runs=per_pipeline)
            db.session.add(pipeline)
            db.session.flush()
            ids = []
            for t in range(tasks):
                task = Task(project_id=project.id, pipeline_id=pipeline.id, name=f"{task_name}{t}",
                            template_id=template.id, args={"command": f"echo {t}"}, retry_delay=0)
                db.session.add(task)
                db.session.flush()
                ids.append(task.id)
            for t in range(1, tasks):  # t0 -> t1..t3 fan out, then a chain
                up = ids[0] if t <= 3 else ids[t - 1]
                db.session.add(Edge(project_id=project.id, pipeline_id=pipeline.id,
                                    upstream_task_id=up, downstream_task_id=ids[t]))
            for r in range(min(per_pipeline, runs - p * per_pipeline)):
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


def make_broker(app, broker: str, args: argparse.Namespace):
    """A Celery app on that broker (emptied), the default app from now on: tasks send through it."""
    import redis

    from myapp.celery_app import make_celery
    from myapp.config import celery_settings

    redis_url = args.redis if broker == "redis" else None
    if redis_url:
        redis.Redis.from_url(redis_url).flushdb()
    celery = make_celery(app, celery_settings(Path(tempfile.mkdtemp()), redis_url))
    celery.loader.import_default_modules()
    return celery


def run_celery(app, run_ids: list[int], args: argparse.Namespace, counter: TransitionCounter, backend,
               broker: str) -> dict:
    from celery.contrib.testing.worker import start_worker

    from myapp.config import BACKGROUND_QUEUE
    from myapp.extensions import db
    from myapp.models import PipelineRun, RunState
    from myapp.shared.reconcile_requests import request

    celery = make_broker(app, broker, args)
    started = time.monotonic()
    with start_worker(celery, pool="threads", concurrency=args.workers, perform_ping_check=False,
                      shutdown_timeout=60, loglevel="WARNING"):
        beat = Beat(app, celery)
        beat.start()
        with app.app_context():
            request(celery, run_ids, BACKGROUND_QUEUE)  # as a backfill does
        while time.monotonic() - started < args.timeout:
            time.sleep(0.2)
            with app.app_context():
                active = db.session.query(PipelineRun.id).filter(
                    PipelineRun.id.in_(run_ids), PipelineRun.state.in_([RunState.QUEUED, RunState.RUNNING])).count()
                db.session.rollback()
            if not active:
                break
        finished = time.monotonic()
        beat.stop.set()
        beat.join()
    out = measure(app, run_ids, args.tasks, started, finished, counter.take(), backend)
    out["queue_max"] = max(beat.lengths, default=0)
    return out


def run_load(app, args: argparse.Namespace, backend, broker: str) -> dict:
    """`--long-runs` runs that never end, for `--minutes`: the queue length, new runs' start latency
    and cancel latency meanwhile."""
    from celery.contrib.testing.worker import start_worker

    from myapp.config import ACTIONS_QUEUE, BACKGROUND_QUEUE
    from myapp.extensions import db
    from myapp.models import PipelineRun, RunState, TaskRun, utcnow
    from myapp.pipelines.controller import RunController
    from myapp.shared.reconcile_requests import request

    backend.script["long0"] = ["hang"]
    long_ids = seed(app, args.long_runs, 1, f"long-{broker}", "long", per_pipeline=args.long_runs)
    probe_pipeline = seed(app, 1, 1, f"probe-{broker}", "quick", per_pipeline=1)[0]
    with app.app_context():
        seeded = db.session.get(PipelineRun, probe_pipeline)
        probe_project, probe_pipeline_id = seeded.project_id, seeded.pipeline_id
        db.session.execute(db.text("UPDATE pipeline SET max_active_runs = 1000 WHERE id = :id"),
                           {"id": probe_pipeline_id})
        db.session.commit()
    reconciles = Counter()
    original = RunController.reconcile

    def counted(self, run_id):
        reconciles["n"] += 1
        return original(self, run_id)

    RunController.reconcile = counted  # type: ignore[method-assign]
    trace = CancelTrace()
    trace.install()
    celery = make_broker(app, broker, args)
    probes: list[int] = []
    cancels: dict[int, dt.datetime] = {}
    to_cancel = list(long_ids)
    try:
        with start_worker(celery, pool="threads", concurrency=args.workers, perform_ping_check=False,
                          shutdown_timeout=60, loglevel="WARNING"):
            beat = Beat(app, celery)
            beat.start()
            with app.app_context():
                request(celery, long_ids, BACKGROUND_QUEUE)  # a backfill of long runs
            started = time.monotonic()
            n = 0
            while time.monotonic() - started < args.minutes * 60:
                n += 1
                time.sleep(max(0.0, started + n * args.probe_every - time.monotonic()))
                with app.app_context():  # what POST /pipeline_run/ and POST .../cancel do
                    run = PipelineRun(project_id=probe_project, pipeline_id=probe_pipeline_id, run_key=f"probe{n}")
                    db.session.add(run)
                    db.session.commit()
                    probes.append(run.id)
                    request(celery, [run.id], ACTIONS_QUEUE)
                    victim = to_cancel.pop()
                    cancels[victim] = utcnow()
                    trace.sent(victim)
                    celery.send_task("myapp.cancel_run", args=[victim], queue=ACTIONS_QUEUE)
            seconds = time.monotonic() - started
            # The last probes and cancels get up to 30 s to take effect, then the workers stop.
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                with app.app_context():
                    waiting = db.session.query(PipelineRun.id).filter(
                        PipelineRun.id.in_(list(cancels)), PipelineRun.state != RunState.CANCELLED).count()
                    unstarted = db.session.query(PipelineRun.id).filter(
                        PipelineRun.id.in_(probes), ~PipelineRun.id.in_(
                            db.session.query(TaskRun.pipeline_run_id).filter(TaskRun.submitted_at.is_not(None)))
                    ).count()
                    db.session.rollback()
                if not waiting and not unstarted:
                    break
                time.sleep(0.2)
            beat.stop.set()
            beat.join()
            celery.control.purge()  # what is left of the long runs' polls: the workers stop after their tasks
    finally:
        RunController.reconcile = original  # type: ignore[method-assign]
        trace.uninstall()
    figures = load_figures(app, long_ids, probes, cancels, beat.lengths, reconciles["n"], seconds, backend)
    figures["cancel_stages"], figures["cancel_slow"] = trace.stage_p95(), trace.slow(1.0)
    return figures


def load_figures(app, long_ids, probes, cancels, lengths, reconciles, seconds, backend) -> dict:
    from myapp.extensions import db
    from myapp.models import PipelineRun, RunState, TaskRun

    problems = []
    with app.app_context():
        starts = dict(db.session.query(PipelineRun.id, PipelineRun.created_at).filter(PipelineRun.id.in_(probes)))
        submitted = dict(db.session.query(TaskRun.pipeline_run_id, TaskRun.submitted_at).filter(
            TaskRun.pipeline_run_id.in_(probes), TaskRun.submitted_at.is_not(None)))
        ended = dict(db.session.query(PipelineRun.id, PipelineRun.finished_at).filter(
            PipelineRun.id.in_(list(cancels)), PipelineRun.state == RunState.CANCELLED))
        # Ended: a long run the workers have not reached yet (still queued, on a loaded machine) has not.
        others = db.session.query(PipelineRun.id).filter(
            PipelineRun.id.in_(long_ids), ~PipelineRun.id.in_(list(cancels)),
            PipelineRun.state.in_([RunState.SUCCEEDED, RunState.FAILED, RunState.CANCELLED])).count()
        db.session.rollback()
    start_s = sorted((submitted[r] - starts[r]).total_seconds() for r in probes if r in submitted)
    cancel_s = sorted((ended[r] - aware(sent)).total_seconds() for r, sent in cancels.items() if r in ended)
    if len(start_s) < len(probes):
        problems.append(f"{len(probes) - len(start_s)} of {len(probes)} new runs never started")
    if len(cancel_s) < len(cancels):
        problems.append(f"{len(cancels) - len(cancel_s)} of {len(cancels)} cancels never took effect")
    if others:
        problems.append(f"{others} long runs ended without being cancelled")
    twice = [job for job, n in backend.creations.items() if n != 1]
    if twice:
        problems.append(f"{len(twice)} jobs created more than once")
    return {"long_runs": len(long_ids), "seconds": seconds, "queue_max": max(lengths, default=0),
            "queue_mean": sum(lengths) / len(lengths) if lengths else 0.0, "reconciles": reconciles,
            "probes": len(probes), "start_p50": pct(start_s, 0.5), "start_p95": pct(start_s, 0.95),
            "cancels": len(cancels), "cancel_p95": pct(cancel_s, 0.95),
            "cancel_max": max(cancel_s, default=float("nan")),
            "problems": problems}


def aware(value: dt.datetime) -> dt.datetime:
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)


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


def show_load(label: str, m: dict) -> None:
    print(f"{label:<22} {m['long_runs']} unfinished runs for {m['seconds']:.0f} s: queue length max {m['queue_max']}, "
          f"mean {m['queue_mean']:.0f}; {m['reconciles'] / m['seconds']:.1f} reconciles/s")
    print(f"{'':<22} new run in another project -> started: p50 {m['start_p50']:.2f} s, p95 {m['start_p95']:.2f} s "
          f"({m['probes']} runs); cancel -> cancelled: p95 {m['cancel_p95']:.2f} s, max {m['cancel_max']:.2f} s "
          f"({m['cancels']} cancels)")
    print(f"{'':<22} cancel stages: {m['cancel_stages']}")
    for line in m["cancel_slow"]:
        print(f"{'':<22} slow cancel {line}")
    for problem in m["problems"]:
        print(f"{'':<22} PROBLEM {problem}")


def verdict(ok: bool, broken: bool) -> str:
    return "BROKEN" if broken else "MET" if ok else "MISSED"


def clear(app) -> None:
    from myapp.extensions import db

    with app.app_context():
        db.session.execute(db.text("DELETE FROM project"))  # each phase starts clean
        db.session.commit()


def main() -> int:
    args = parse_args()
    name = f"myapp_ctl_{uuid.uuid4().hex[:8]}"
    os.environ.update(MYAPP_HOME=tempfile.mkdtemp())
    for variable in ("REDIS_URL", "DATABASE_URL"):
        os.environ.pop(variable, None)
    if args.db == "postgresql":
        os.environ["DATABASE_URL"] = args.pg.rsplit("/", 1)[0] + f"/{name}"
        admin_sql(args.pg, f'CREATE DATABASE "{name}"')
    try:
        from myapp.app import create_app
        from myapp.backends import registry
        from myapp.extensions import db
        from myapp.models.migrate import upgrade
        from tests.fake_backend import FakeBackend

        app = create_app()
        with app.app_context():
            upgrade()
        counter = TransitionCounter()
        counter.install()
        key = ("default", app.config["MYAPP_BACKEND"])
        backend = registry._backends[key] = FakeBackend()
        throughput_phase, load_phase = "throughput" in args.phases, "load" in args.phases
        base = None
        if throughput_phase:
            baseline_ids = seed(app, max(10, args.runs // 10), args.tasks)
            counter.take()  # seeding changes no state; start from zero all the same
            base = run_inline(app, baseline_ids, args.tasks, counter, backend)
        results: dict[str, tuple[dict | None, dict | None]] = {}
        for broker in args.brokers:
            throughput = load = None
            if throughput_phase:
                clear(app)
                backend = registry._backends[key] = FakeBackend()
                run_ids = seed(app, args.runs, args.tasks, f"bench-{broker}")
                counter.take()
                throughput = run_celery(app, run_ids, args, counter, backend, broker)
            if load_phase:
                clear(app)
                backend = registry._backends[key] = FakeBackend()
                load = run_load(app, args, backend, broker)
            results[broker] = throughput, load
        print(f"{args.runs} runs x {args.tasks} tasks, then {args.long_runs} unfinished runs for {args.minutes:g} min; "
              f"{args.db}; {args.workers} Celery worker threads; tick {app.config['MYAPP_TICK_SECONDS']:g} s; "
              f"{os.cpu_count()} cpus; phases {' '.join(args.phases)}; action lane {app.config['MYAPP_ACTION_LANE']}")
        broken = False
        if base is not None:
            show("baseline (inline loop)", base)
            broken |= bool(base["problems"])
        for broker, (throughput, load) in results.items():
            if throughput is not None and base is not None:
                ratio = throughput["transitions"] / throughput["seconds"] / (base["transitions"] / base["seconds"])
                show(f"Celery, {broker}", throughput)
                print(f"{'':<22} throughput vs baseline: {ratio:.2f}x; queue length max {throughput['queue_max']}")
                throughput["ratio"] = ratio
                broken |= bool(throughput["problems"])
            if load is not None:
                show_load(f"load, {broker}", load)
                broken |= bool(load["problems"])
        for broker, (throughput, load) in results.items():
            if load is None:
                continue
            bad = bool(load["problems"] or (throughput or {}).get("problems"))
            bound = args.long_runs + 2 * load["probes"]  # one pending reconcile per run, plus user actions
            print(f"target {broker}: queue length <= {bound} (one per unfinished run): "
                  f"{verdict(load['queue_max'] <= bound, bad)} (max {load['queue_max']})")
            print(f"target {broker}: new run starts p95 <= {TARGET_START_S:g} s: "
                  f"{verdict(load['start_p95'] <= TARGET_START_S, bad)} ({load['start_p95']:.2f} s)")
            print(f"target {broker}: cancel takes effect <= {TARGET_CANCEL_S:g} s: "
                  f"{verdict(load['cancel_max'] <= TARGET_CANCEL_S, bad)} (max {load['cancel_max']:.2f} s)")
        throughput = results.get("redis", (None, None))[0]
        if throughput is not None:
            bad = bool(throughput["problems"])
            print(f"target redis: p95 upstream done -> submitted <= {TARGET_P95_MS:.0f} ms: "
                  f"{verdict(throughput['p95'] <= TARGET_P95_MS, bad)} ({throughput['p95']:.1f} ms)")
            print(f"target redis: throughput >= {TARGET_RATIO}x baseline: "
                  f"{verdict(throughput['ratio'] >= TARGET_RATIO, bad)} ({throughput['ratio']:.2f}x)")
        with app.app_context():
            db.engine.dispose()
        return 1 if broken else 0
    finally:
        if args.db == "postgresql":
            admin_sql(args.pg, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    sys.exit(main())
