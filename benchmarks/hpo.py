"""Hyperparameter search (myapp/experiments) against the same search run by Optuna alone, or by hand.

    .venv/bin/python benchmarks/hpo.py            # full: minutes
    .venv/bin/python benchmarks/hpo.py --quick    # a few trials of each: it runs, its figures mean little

Every trial is a real run of a pipeline of one `python` task on the local backend (sandboxed processes),
driven in this process by the experiment driver and the run controller (myapp/experiments/inprocess.py,
what `myapp experiment run --wait` does without workers), on a fresh SQLite platform in a temporary
MYAPP_HOME.

  parity    TPE with a fixed seed, one trial at a time, Branin as the task: the parameters the platform
            asked == those Optuna alone asks for the same study told the same values (a list compare)
  quality   TPE vs random search on Branin, the best value after N trials averaged over seeds, and the gap
            to the known optimum (0.397887) as trials accrue: TPE's best beats random's
  overhead  N trials of a task sleeping S seconds, 4 at once: wall time / the same N commands run by hand
            in a pool of 4 (target <= 1.15)
  pruning   24 trials of a learning curve (20 steps of 1 s, a known family with seeded noise), 4 at once,
            random search (the same parameters asked with and without pruning): trial-seconds with median
            pruning / without (target <= 0.6), best final value within 2 %

Prints "target <name>: MET|MISSED ..." per figure; exits 1 if the benchmark broke (a trial failed, a
platform error), never for a missed target.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import sqlalchemy as sa

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

BRANIN = """
import json, math, os
x1, x2 = float("{{ params.x1 }}"), float("{{ params.x2 }}")
value = ((x2 - 5.1 / (4 * math.pi ** 2) * x1 ** 2 + 5 / math.pi * x1 - 6) ** 2
         + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x1) + 10)
with open(os.path.join(os.environ["MYAPP_OUTPUT_DIR"], "metrics.jsonl"), "w") as fh:
    fh.write(json.dumps({"step": 0, "name": "value", "value": value}) + "\\n")
"""
SLEEP = """
import json, os, time
time.sleep(float("{{ params.seconds }}"))
with open(os.path.join(os.environ["MYAPP_OUTPUT_DIR"], "metrics.jsonl"), "w") as fh:
    fh.write(json.dumps({"step": 0, "name": "value", "value": float("{{ params.x }}")}) + "\\n")
"""
# A learning curve from a known family: final value (x-0.3)^2 + (y-0.7)^2 + 0.05, approached as exp(-step/4)
# from 1.5 above it, with seeded noise; one line per step, a step every `pause` seconds.
CURVE = """
import json, math, os, random, time
x, y = float("{{ params.x }}"), float("{{ params.y }}")
steps, pause = int("{{ params.steps }}"), float("{{ params.pause }}")
final = (x - 0.3) ** 2 + (y - 0.7) ** 2 + 0.05
noise = random.Random(f"{x}:{y}")
with open(os.path.join(os.environ["MYAPP_OUTPUT_DIR"], "metrics.jsonl"), "w") as fh:
    for step in range(steps):
        time.sleep(pause)
        value = final + 1.5 * math.exp(-step / 4) + noise.gauss(0, 0.005)
        fh.write(json.dumps({"step": step, "name": "value", "value": value}) + "\\n")
        fh.flush()
"""
BRANIN_SPACE = [{"name": "x1", "type": "float", "low": -5.0, "high": 10.0},
                {"name": "x2", "type": "float", "low": 0.0, "high": 15.0}]
BRANIN_OPTIMUM = 0.397887


class Platform:
    def __init__(self) -> None:
        os.environ["MYAPP_HOME"] = tempfile.mkdtemp(prefix="hpo-bench-")
        for variable in ("REDIS_URL", "DATABASE_URL"):
            os.environ.pop(variable, None)
        from myapp.app import create_app
        from myapp.extensions import db
        from myapp.models import Project
        from myapp.models.migrate import upgrade
        from myapp.rendering.catalog import load_catalog
        from myapp.setup_data import sync_catalog

        self.app = create_app()
        self.context = self.app.app_context()
        self.context.push()
        upgrade()
        sync_catalog(load_catalog())
        project = Project(name="bench", namespace="bench")
        db.session.add(project)
        db.session.commit()
        self.project_id = project.id
        self.count = 0

    def pipeline(self, script: str, parameters: dict[str, Any]) -> int:
        from myapp.extensions import db
        from myapp.models import JobTemplate, Pipeline, Task

        self.count += 1
        template = db.session.scalar(sa.select(JobTemplate.id).filter_by(name="python"))
        row = Pipeline(project_id=self.project_id, name=f"p{self.count}", parameters=parameters,
                       max_active_runs=100)
        db.session.add(row)
        db.session.flush()
        db.session.add(Task(project_id=self.project_id, pipeline_id=row.id, name="trial", template_id=template,
                            args={"script": script}, resources={"cpu": "100m", "memory": "256Mi"}))
        db.session.commit()
        return row.id

    def experiment(self, pipeline_id: int, **settings: Any) -> int:
        from myapp.experiments.driver import start
        from myapp.extensions import db
        from myapp.models import Experiment, utcnow

        self.count += 1
        row = Experiment(project_id=self.project_id, pipeline_id=pipeline_id, name=f"e{self.count}",
                         **({"objectives": [{"metric": "value", "direction": "minimize"}]} | settings))
        db.session.add(row)
        start(row, utcnow())
        db.session.commit()
        return row.id

    def drive(self, experiment_id: int, poll: float = 0.05) -> float:
        """Wall seconds from start to the experiment's end (it must succeed)."""
        from myapp.backends.local import LocalBackend
        from myapp.backends.registry import local_workdir
        from myapp.experiments.inprocess import drive
        from myapp.pipelines.controller import RunController

        backend = LocalBackend(local_workdir(), gpus=[], poll_interval=0.02)
        started = time.perf_counter()
        state = drive(experiment_id, RunController(lambda task: backend), poll, timeout=3600)
        elapsed = time.perf_counter() - started
        if state is None or state.value != "succeeded":
            raise SystemExit(f"experiment {experiment_id} {state}: {self.reason(experiment_id)}")
        return elapsed

    def reason(self, experiment_id: int) -> str | None:
        from myapp.extensions import db
        from myapp.models import Experiment

        return db.session.get(Experiment, experiment_id).reason

    def trials(self, experiment_id: int) -> list[Any]:
        from myapp.extensions import db
        from myapp.models import Trial

        return list(db.session.scalars(sa.select(Trial).filter_by(experiment_id=experiment_id).order_by(Trial.number)))

    def task_seconds(self, experiment_id: int) -> float:
        """The trials' task time: each attempt's running time, summed."""
        from myapp.extensions import db
        from myapp.models import PipelineRun, TaskRun

        rows = db.session.execute(sa.select(TaskRun.started_at, TaskRun.finished_at).join(
            PipelineRun, PipelineRun.id == TaskRun.pipeline_run_id).where(PipelineRun.experiment_id == experiment_id))
        return sum((end - begin).total_seconds() for begin, end in rows if begin and end)


# ---- the phases ----------------------------------------------------------------------------------------
FULL = {"parity": 20, "quality_trials": 40, "quality_seeds": 5, "overhead_trials": 40, "sleep": 3.0,
        "pruning_trials": 24, "steps": 20, "pause": 1.0}
QUICK = {"parity": 3, "quality_trials": 4, "quality_seeds": 1, "overhead_trials": 4, "sleep": 0.5,
         "pruning_trials": 6, "steps": 4, "pause": 0.1}


def branin(params: dict[str, float]) -> float:
    x1, x2 = params["x1"], params["x2"]
    return ((x2 - 5.1 / (4 * math.pi ** 2) * x1 ** 2 + 5 / math.pi * x1 - 6) ** 2
            + 10 * (1 - 1 / (8 * math.pi)) * math.cos(x1) + 10)


def verdict(name: str, met: bool, text: str) -> None:
    print(f"target {name}: {'MET' if met else 'MISSED'} ({text})")


def parity(platform: Platform, trials: int) -> None:
    import optuna

    from myapp.experiments.study import Settings, distributions, make_sampler

    experiment = platform.experiment(platform.pipeline(BRANIN, {"x1": 0.0, "x2": 0.0}), search_space=BRANIN_SPACE,
                                     algorithm="tpe", seed=42, max_trials=trials, parallel_trials=1)
    platform.drive(experiment)
    asked = [t.parameters for t in platform.trials(experiment)]
    settings = Settings("alone", BRANIN_SPACE, [{"metric": "value", "direction": "minimize"}], "tpe", 42)
    study = optuna.create_study(sampler=make_sampler(settings))
    alone = []
    for _ in range(trials):
        trial = study.ask(distributions(BRANIN_SPACE))
        study.tell(trial, branin(trial.params))
        alone.append(trial.params)
    for number, (ours, theirs) in enumerate(zip(asked, alone, strict=True)):
        print(f"  trial {number:2d}  platform {ours}  optuna {theirs}  {'==' if ours == theirs else '!='}")
    same = sum(a == b for a, b in zip(asked, alone, strict=True))
    verdict("parity", asked == alone, f"{same}/{trials} trials asked the same parameters as Optuna alone")


def quality(platform: Platform, trials: int, seeds: int) -> None:
    pipeline = platform.pipeline(BRANIN, {"x1": 0.0, "x2": 0.0})
    best: dict[str, list[list[float]]] = {"tpe": [], "random": []}
    for seed in range(seeds):
        for algorithm in best:
            experiment = platform.experiment(pipeline, search_space=BRANIN_SPACE, algorithm=algorithm, seed=seed,
                                             max_trials=trials, parallel_trials=4)
            platform.drive(experiment)
            values = [t.values[0] for t in platform.trials(experiment)]
            best[algorithm].append([min(values[:n]) for n in range(1, len(values) + 1)])
    marks = sorted({min(trials, n) for n in (trials // 4, trials // 2, trials)} - {0})
    for algorithm, runs in best.items():
        gaps = [statistics.mean(r[n - 1] for r in runs) - BRANIN_OPTIMUM for n in marks]
        shown = ", ".join(f"{n}: {g:.4f}" for n, g in zip(marks, gaps, strict=True))
        print(f"  {algorithm:6s} gap to the optimum after {shown}")
    tpe, rnd = (statistics.mean(r[-1] for r in best[k]) for k in ("tpe", "random"))
    verdict("quality", tpe < rnd, f"best after {trials} trials over {seeds} seeds: TPE {tpe:.4f} / random {rnd:.4f}"
            f" = {tpe / rnd:.3f} ratio")


def overhead(platform: Platform, trials: int, seconds: float, workers: bool) -> None:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    command = [sys.executable, "-c", f"import time; time.sleep({seconds})"]
    started = time.perf_counter()
    with ThreadPoolExecutor(4) as pool:
        done = list(pool.map(lambda _: subprocess.run(command, env=env, check=False).returncode, range(trials)))
    by_hand = time.perf_counter() - started
    if any(done):
        raise SystemExit("a command by hand failed")
    experiment = platform.experiment(platform.pipeline(SLEEP, {"seconds": seconds, "x": 0.0}),
                                     search_space=[{"name": "x", "type": "float", "low": 0.0, "high": 1.0}],
                                     algorithm="random", seed=0, max_trials=trials, parallel_trials=4)
    ours = platform.drive(experiment)
    ratio = ours / by_hand
    verdict("overhead", ratio <= 1.15, f"{trials} trials of {seconds:g} s, 4 at once: platform {ours:.1f} s / "
            f"by hand {by_hand:.1f} s = {ratio:.3f} ratio, target <= 1.15")
    if workers:
        through_workers(platform, trials, seconds, by_hand)


def through_workers(platform: Platform, trials: int, seconds: float, by_hand: float) -> None:
    """The same trials through the platform's processes: a Celery worker (the platform's concurrency, 2)
    and beat (its tick, and local jobs' ends as events) on the embedded broker; from the start request to
    the experiment's end, once the worker answers."""
    from myapp.extensions import db
    from myapp.models import Experiment, WorkerHeartbeat

    log = open(Path(os.environ["MYAPP_HOME"]) / "processes.log", "a")  # noqa: SIM115 - the processes' lifetime
    celery = [sys.executable, "-m", "celery", "-A", "myapp.worker:celery"]
    processes = [subprocess.Popen([*celery, "worker", "-l", "warning", "--concurrency", "2"], stdout=log,
                                  stderr=subprocess.STDOUT),
                 subprocess.Popen([*celery, "beat", "-l", "warning"], stdout=log, stderr=subprocess.STDOUT)]
    try:
        sender = platform.app.extensions["celery"]
        sender.send_task("myapp.heartbeat", args=["hpo-bench"])
        deadline = time.monotonic() + 120
        while db.session.scalar(sa.select(WorkerHeartbeat.id).filter_by(hostname="hpo-bench")) is None:
            db.session.rollback()
            if time.monotonic() > deadline:
                raise SystemExit("the worker did not answer in 120 s")
            time.sleep(0.2)
        experiment = platform.experiment(platform.pipeline(SLEEP, {"seconds": seconds, "x": 0.0}),
                                         search_space=[{"name": "x", "type": "float", "low": 0.0, "high": 1.0}],
                                         algorithm="random", seed=0, max_trials=trials, parallel_trials=4)
        started = time.perf_counter()
        sender.send_task("myapp.look_experiment", args=[experiment])
        while True:
            db.session.rollback()
            state = db.session.get(Experiment, experiment).state.value
            if state != "running":
                break
            time.sleep(0.05)
        ours = time.perf_counter() - started
    finally:
        for process in processes:
            process.terminate()
            process.wait(30)
        log.close()
    if state != "succeeded":
        raise SystemExit(f"experiment through the workers {state}: {platform.reason(experiment)}")
    ratio = ours / by_hand
    verdict("overhead-workers", ratio <= 1.15, f"the same through a worker and beat: {ours:.1f} s / by hand "
            f"{by_hand:.1f} s = {ratio:.3f} ratio, target <= 1.15")


def pruning(platform: Platform, trials: int, steps: int, pause: float) -> None:
    pipeline = platform.pipeline(CURVE, {"x": 0.0, "y": 0.0, "steps": steps, "pause": pause})
    space = [{"name": "x", "type": "float", "low": 0.0, "high": 1.0},
             {"name": "y", "type": "float", "low": 0.0, "high": 1.0}]
    results = {}
    for early_stopping in (None, {"kind": "median", "startup_trials": 4, "warmup_steps": 2}):
        experiment = platform.experiment(pipeline, search_space=space, algorithm="random", seed=7,
                                         max_trials=trials, parallel_trials=4, early_stopping=early_stopping)
        platform.drive(experiment)
        rows = platform.trials(experiment)
        complete = [t.values[0] for t in rows if t.state.value == "complete"]
        pruned = [t.pruned_step for t in rows if t.state.value == "pruned"]
        results[bool(early_stopping)] = (platform.task_seconds(experiment), min(complete), pruned)
    (plain, plain_best, _), (median, median_best, pruned) = results[False], results[True]
    ratio, off = median / plain, (median_best - plain_best) / abs(plain_best)
    print(f"  without pruning: {plain:.1f} trial-seconds, best {plain_best:.4f}; with median pruning: "
          f"{median:.1f} trial-seconds, best {median_best:.4f}, {len(pruned)} pruned at steps {sorted(pruned)}")
    verdict("pruning", ratio <= 0.6 and off <= 0.02, f"trial-seconds {median:.1f} / {plain:.1f} = {ratio:.3f} ratio "
            f"(target <= 0.6), best final value {100 * off:+.2f} % (target within 2 %)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small versions of each phase")
    parser.add_argument("--phases", default="parity,quality,overhead,pruning")
    parser.add_argument("--workers", action="store_true",
                        help="overhead also through a Celery worker and beat (the platform's processes)")
    args = parser.parse_args()
    sizes = QUICK if args.quick else FULL
    platform = Platform()
    phases = args.phases.split(",")
    for phase in phases:
        started = time.perf_counter()
        print(f"{phase}:")
        if phase == "parity":
            parity(platform, sizes["parity"])
        elif phase == "quality":
            quality(platform, sizes["quality_trials"], sizes["quality_seeds"])
        elif phase == "overhead":
            overhead(platform, sizes["overhead_trials"], sizes["sleep"], args.workers)
        elif phase == "pruning":
            pruning(platform, sizes["pruning_trials"], sizes["steps"], sizes["pause"])
        print(f"  ({time.perf_counter() - started:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
