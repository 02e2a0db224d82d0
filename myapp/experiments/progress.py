"""What a trial's tasks reported: the objective metrics, read from its run's attempts.

While an attempt runs its metrics are read live (its ``metrics.jsonl`` in the outputs folder, or the
S3-compatible store, and those it posted to the API: ``outputs.store.current``); once it has ended,
from what the controller kept with the task run. The same reads as the run view's. An attempt on a
Kubernetes claim (no S3 store) has its metrics.jsonl copied here while it runs (``refresh_claims``, before
the look takes its lock: a reader pod takes seconds, so the running trials' are read at once;
``outputs/live.py``)."""
from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from flask import current_app

from ..backends import BackendError
from ..backends import registry as backends
from ..extensions import db
from ..models import PipelineRun, Project, Task, TaskRun, TaskState, Trial, TrialState
from ..outputs import live as outputs_live
from ..outputs import store as outputs_store

MAX_CLAIM_READERS = 8  # reader pods at once for one look at an experiment


@dataclass(frozen=True)
class Progress:
    series: list[list[float]]  # [[step, value]] of the first objective's metric, by step
    finals: dict[str, float]  # each objective metric's last reported value


def latest_attempts(run_id: int) -> list[TaskRun]:
    rows = db.session.scalars(sa.select(TaskRun).where(TaskRun.pipeline_run_id == run_id)
                              .order_by(TaskRun.task_id, TaskRun.attempt)).all()
    return list({row.task_id: row for row in rows}.values())


def metrics_of(attempt: TaskRun, namespace: str) -> list[dict[str, Any]]:
    if attempt.reported_metrics is not None and attempt.is_finished:
        return attempt.reported_metrics
    now = outputs_store.current(attempt, namespace)[1]
    if not attempt.is_finished and outputs_store.on_claim(attempt):  # its file as last read off the claim first
        return outputs_live.read(attempt, namespace) + now
    return now


def read(run_id: int, project_id: int, metrics: Sequence[str]) -> Progress:
    namespace = db.session.get(Project, project_id).namespace
    by_step: dict[int, float] = {}
    finals: dict[str, float] = {}
    for attempt in latest_attempts(run_id):
        for record in metrics_of(attempt, namespace):
            name = record["name"]
            if name not in metrics:
                continue
            finals[name] = record["value"]
            if name == metrics[0]:
                by_step[int(record["step"])] = record["value"]
    return Progress([[step, by_step[step]] for step in sorted(by_step)], finals)


def refresh_claims(experiment_id: int) -> int:
    """Copy the running trials' metrics off their Kubernetes claims (each at most once a pace); ends the
    read's transaction (no lock is held while reader pods run). Returns how many were copied."""
    rows = db.session.execute(
        sa.select(TaskRun, Project.namespace).join(PipelineRun, TaskRun.pipeline_run_id == PipelineRun.id)
        .join(Trial, Trial.pipeline_run_id == PipelineRun.id).join(Project, Project.id == TaskRun.project_id)
        .where(Trial.experiment_id == experiment_id, Trial.state == TrialState.RUNNING,
               TaskRun.state == TaskState.RUNNING, TaskRun.backend == "kubernetes")).all()
    due = []
    for attempt, namespace in rows:
        if outputs_store.on_claim(attempt):
            try:
                backend = backends.backend_for(db.session.get(Task, attempt.task_id))
            except BackendError:  # its cluster cannot be reached as configured: the run controller says why
                continue
            due.append((attempt, namespace, backend))
    copied = read_claims(due)
    db.session.commit()
    return copied


def read_claims(due: Sequence[tuple[TaskRun, str, object]]) -> int:
    """``outputs.live.refresh`` for each (attempt, namespace, backend), up to MAX_CLAIM_READERS at once: each
    read waits seconds for its reader pod, so one after another a look at many running trials would take
    that many times as long. The attempts are loaded already; the threads read their columns, no session."""
    if len(due) <= 1:
        return sum(outputs_live.refresh(*item) for item in due)
    app = current_app._get_current_object()  # type: ignore[attr-defined]

    def refresh(item: tuple[TaskRun, str, object]) -> bool:
        with app.app_context():
            return outputs_live.refresh(*item)

    with ThreadPoolExecutor(max_workers=min(MAX_CLAIM_READERS, len(due)),
                            thread_name_prefix="claim-reader") as pool:
        return sum(pool.map(refresh, due))
