"""Looks at experiments asked of the workers (``myapp.look_experiment``), and the hooks a look uses to
start and cancel its trials' runs.

A trial's run that ends asks for a look at once (an event, always sent: looks are serialized by the
experiment's row lock and idempotent); the periodic looks of a pruned experiment (its trials' intermediate
values) and beat's safety net are de-duplicated like run reconciles: `look_requested_at` is set where it
was NULL and only the call that set it sends."""
from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa

from ..extensions import db
from ..models import Experiment, ExperimentState, utcnow
from ..shared import reconcile_requests
from .driver import Hooks

LOOK = "myapp.look_experiment"
STALE = dt.timedelta(seconds=30)  # a pending look this old may have been lost with a worker


def send(celery: Any, experiment_id: int, queue: str, countdown: float | None = None) -> None:
    celery.send_task(LOOK, args=[experiment_id], queue=queue, countdown=countdown)


def trial_ended(celery: Any, experiment_id: int) -> None:
    """A trial's run ended: look at once (the next trial starts from there), on the actions queue."""
    celery.send_task(LOOK, args=[experiment_id, False], queue=reconcile_requests.ACTIONS_QUEUE)


def request(celery: Any, experiment_ids: Iterable[int], countdown: float | None = None,
            now: dt.datetime | None = None) -> list[int]:
    """Ask for one look at each running experiment that has none pending; commits."""
    ids = sorted(set(experiment_ids))
    if not ids:
        return []
    claimed = _claim(sa.and_(Experiment.id.in_(ids), Experiment.look_requested_at.is_(None)), now or utcnow())
    for experiment_id in claimed:
        send(celery, experiment_id, reconcile_requests.BACKGROUND_QUEUE, countdown)
    return claimed


def request_due(celery: Any, now: dt.datetime | None = None) -> list[int]:
    """Beat: the running experiments whose next look is due, and those whose request is old (lost)."""
    now = now or utcnow()
    due = sa.and_(Experiment.next_look_at <= now,
                  sa.or_(Experiment.look_requested_at.is_(None), Experiment.look_requested_at < now - STALE))
    claimed = _claim(due, now)
    for experiment_id in claimed:
        send(celery, experiment_id, reconcile_requests.BACKGROUND_QUEUE)
    return claimed


def _claim(where: Any, now: dt.datetime) -> list[int]:
    ids = list(db.session.scalars(
        sa.update(Experiment).where(Experiment.state == ExperimentState.RUNNING, where)
        .values(look_requested_at=now).returning(Experiment.id).execution_options(synchronize_session=False)))
    db.session.commit()
    return ids


def hooks(celery: Any) -> Hooks:
    """Trials' runs start like runs the API creates (the actions queue) and are cancelled the same way."""
    def start_runs(run_ids: list[int]) -> None:
        reconcile_requests.request(celery, run_ids, reconcile_requests.ACTIONS_QUEUE)

    def cancel_runs(run_ids: list[int], reason: str) -> None:
        for run_id in run_ids:
            celery.send_task("myapp.cancel_run", args=[run_id, reason], queue=reconcile_requests.ACTIONS_QUEUE)

    return Hooks(start_runs=start_runs, cancel_runs=cancel_runs)
