"""What a model version registered from a run records of that run: the run's parameters (the pipeline's
defaults, the run's values over them), the last value of each metric its tasks reported (``metrics.jsonl`` or
``POST /api/v1/task_run/{id}/reported_metrics``), and each such metric's values per step (its curve).

When two tasks report a metric of the same name, the task that made the model wins: the task whose outputs
folder holds the model's file, else the tasks the registering task depends on (the demo's ``register`` after
``train``); between other tasks, the one that finished later. Metrics and parameters given in the registration
call win over all of them (``merge``). Pure over rows: the caller reads them (``summarize_run``).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from ..extensions import db
from ..models import Edge, Pipeline, PipelineRun, Task, TaskRun

MAX_POINTS = 1000  # per metric curve kept on a version; a longer one is thinned evenly (first and last kept)
MAX_METRICS = 200  # metric names kept on a version


@dataclass
class RunSummary:
    params: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    # name -> [{"step", "value"}] by step, the values of the task whose last value is in `metrics`.
    history: dict[str, list[dict[str, float]]] = field(default_factory=dict)


def curves(reported: Iterable[Mapping[str, Any]]) -> dict[str, dict[int, float]]:
    """[{"step", "name", "value"}] in the order reported -> name -> step -> value (a later report of a step wins)."""
    out: dict[str, dict[int, float]] = {}
    for record in reported:
        out.setdefault(record["name"], {})[int(record["step"])] = float(record["value"])
    return out


def thinned(points: list[tuple[int, float]], limit: int = MAX_POINTS) -> list[tuple[int, float]]:
    """At most `limit` points, evenly spread, the first and the last kept."""
    if len(points) <= limit:
        return points
    last = len(points) - 1
    picks = sorted({round(i * last / (limit - 1)) for i in range(limit)})
    return [points[i] for i in picks]


def summarize(tasks_weakest_first: list[list[Mapping[str, Any]]]) -> tuple[dict[str, float],
                                                                            dict[str, list[dict[str, float]]]]:
    """The last value and the curve of each metric over the tasks' reports, a later task's winning a name
    they share (the caller orders them weakest first)."""
    winner: dict[str, dict[int, float]] = {}
    for reported in tasks_weakest_first:
        winner.update(curves(reported))
    names = sorted(winner)[:MAX_METRICS]
    metrics, history = {}, {}
    for name in names:
        points = sorted(winner[name].items())
        metrics[name] = points[-1][1]  # the value at the last step reported
        history[name] = [{"step": step, "value": value} for step, value in thinned(points)]
    return metrics, history


def holds(output_dir: str | None, uri: str) -> bool:
    """Is the model file `uri` inside the attempt's outputs folder ("<run>/<task>/<attempt>"), as the job saw it
    (under /myapp/outputs) or as the platform or an S3 store keeps it (under a prefix of their own)?"""
    return bool(output_dir) and f"/{output_dir}/" in uri


def summarize_run(registering: TaskRun, uri: str) -> RunSummary:
    """What the run of the registering attempt records on a model version saved at `uri`."""
    run = db.session.get(PipelineRun, registering.pipeline_run_id)
    pipeline = db.session.get(Pipeline, run.pipeline_id) if run is not None else None
    if run is None or pipeline is None:
        return RunSummary()
    attempts = db.session.scalars(sa.select(TaskRun).where(TaskRun.pipeline_run_id == run.id)
                                  .order_by(TaskRun.task_id, TaskRun.attempt)).all()
    latest = {a.task_id: a for a in attempts}  # the latest attempt of each task
    upstream = set(db.session.scalars(sa.select(Edge.upstream_task_id)
                                      .where(Edge.downstream_task_id == registering.task_id)))
    names = dict(db.session.execute(sa.select(Task.id, Task.name).where(Task.pipeline_id == pipeline.id)).all())

    def strength(attempt: TaskRun) -> tuple[int, float, str]:
        rank = 2 if holds(attempt.output_dir, uri) else 1 if attempt.task_id in upstream else 0
        finished = attempt.finished_at.timestamp() if attempt.finished_at else float("inf")
        return rank, finished, names.get(attempt.task_id, "")

    ordered = sorted((a for a in latest.values() if a.reported_metrics), key=strength)
    metrics, history = summarize([a.reported_metrics or [] for a in ordered])
    return RunSummary(params=dict(pipeline.parameters or {}) | dict(run.parameters or {}),
                      metrics=metrics, history=history)


def merge(summary: RunSummary, metrics: Mapping[str, float], params: Mapping[str, Any]) -> RunSummary:
    """The registration call's metrics and parameters over the run's."""
    return RunSummary(params=summary.params | dict(params), metrics=summary.metrics | dict(metrics),
                      history=summary.history)
