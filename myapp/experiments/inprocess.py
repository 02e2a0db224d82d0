"""An experiment driven in this process, without workers: `myapp experiment run NAME --wait` on a machine
with no platform running (as `myapp pipeline run --wait` drives a run), and the tests and benchmarks that
drive one pass by pass. The same driver looks and the same run controller as the workers'."""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

import sqlalchemy as sa

from ..extensions import db
from ..models import ExperimentState, Trial, TrialState
from . import driver


class Controller(Protocol):
    def reconcile(self, run_id: int) -> object: ...

    def cancel(self, run_id: int, reason: str = ...) -> None: ...


def running_runs(experiment_id: int) -> list[int]:
    return list(db.session.scalars(sa.select(Trial.pipeline_run_id).where(
        Trial.experiment_id == experiment_id, Trial.state == TrialState.RUNNING, Trial.pipeline_run_id.isnot(None))))


def drive(experiment_id: int, controller: Controller, poll: float = 0.2,
          on_look: Callable[[driver.Outcome], None] = lambda outcome: None,
          timeout: float | None = None) -> ExperimentState | None:
    """Look and reconcile the running trials' runs until the experiment ends; returns its state.
    TimeoutError after timeout seconds (None: no limit)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    def cancel_runs(run_ids: list[int], reason: str) -> None:
        for run_id in run_ids:
            controller.cancel(run_id, reason)

    hooks = driver.Hooks(cancel_runs=cancel_runs)
    while True:
        outcome = driver.look(experiment_id, hooks)
        on_look(outcome)
        if outcome.state != ExperimentState.RUNNING:
            return outcome.state
        for run_id in running_runs(experiment_id):
            controller.reconcile(run_id)
        db.session.commit()
        if deadline is not None and time.monotonic() > deadline:
            raise TimeoutError(f"experiment {experiment_id} still running after {timeout} s")
        time.sleep(poll)
