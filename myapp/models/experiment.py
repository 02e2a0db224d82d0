"""Hyperparameter search: an experiment over a pipeline's parameters and its trials (each trial one run).

The rows are the source of truth a sampler is rebuilt from (myapp/experiments/study.py): every trial's
parameters, values, intermediate values and the sampler's own notes (system_attrs), and the experiment's
random state after its last ask or tell."""
from __future__ import annotations

import datetime as dt
import enum
from typing import Any

import sqlalchemy as sa
from flask_appbuilder import Model
from sqlalchemy.orm import Mapped, mapped_column

from .base import IdMixin, JSONType, enum_column, project_fk, utcnow


class ExperimentState(str, enum.Enum):
    CREATED = "created"      # stored (API, `myapp experiment apply`), not started
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


EXPERIMENT_TERMINAL = frozenset({ExperimentState.SUCCEEDED, ExperimentState.FAILED, ExperimentState.CANCELLED})


class TrialState(str, enum.Enum):
    """Optuna's trial states, as the platform keeps them (a pruned trial is not a failed one)."""

    RUNNING = "running"
    COMPLETE = "complete"
    PRUNED = "pruned"
    FAILED = "failed"
    CANCELLED = "cancelled"  # stopped by the experiment's cancel or its end, never told to the sampler


class Experiment(IdMixin, Model):
    __tablename__ = "experiment"
    __table_args__ = (
        sa.UniqueConstraint("project_id", "name"),
        sa.UniqueConstraint("project_id", "id"),  # target of the trials' composite key
        project_fk("pipeline"),
        sa.Index("ix_experiment_state_next_look_at", "state", "next_look_at"),
    )

    project_id: Mapped[int] = mapped_column(sa.Integer, nullable=False, index=True)
    pipeline_id: Mapped[int] = mapped_column(sa.Integer, nullable=False, index=True)
    name: Mapped[str] = mapped_column(sa.String(63), nullable=False)
    description: Mapped[str] = mapped_column(sa.Text, default="", nullable=False)
    # [{"name", "type": float|int|categorical, "low", "high", "log", "step", "choices"}]
    search_space: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list, nullable=False)
    # [{"metric", "direction": minimize|maximize}]: one, or several (NSGA-II)
    objectives: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list, nullable=False)
    algorithm: Mapped[str] = mapped_column(sa.String(32), default="tpe", nullable=False)
    seed: Mapped[int | None] = mapped_column(sa.Integer)
    # {"kind": median|successive_halving|hyperband, settings...}; NULL: no early stopping
    early_stopping: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    max_trials: Mapped[int] = mapped_column(sa.Integer, default=10, nullable=False)
    parallel_trials: Mapped[int] = mapped_column(sa.Integer, default=1, nullable=False)
    max_failed_trials: Mapped[int] = mapped_column(sa.Integer, default=3, nullable=False)
    time_limit_seconds: Mapped[int | None] = mapped_column(sa.Integer)
    state: Mapped[ExperimentState] = mapped_column(
        enum_column(ExperimentState, "experiment_state"), default=ExperimentState.CREATED, nullable=False)
    reason: Mapped[str | None] = mapped_column(sa.Text)
    # The sampler's random state and its study notes after the last ask or tell (study.py's snapshot).
    sampler_state: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    # At most one pending look per experiment (driver.request), and when beat should next look.
    look_requested_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    next_look_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    # Written first by every look: the row lock that serializes drivers on one experiment.
    looked_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    created_by_id: Mapped[int | None] = mapped_column(sa.ForeignKey("ab_user.id", ondelete="SET NULL"))
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow, nullable=False)
    started_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    finished_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))

    @property
    def is_finished(self) -> bool:
        return self.state in EXPERIMENT_TERMINAL


class Trial(IdMixin, Model):
    __tablename__ = "trial"
    __table_args__ = (
        # Claimed once: a trial number exists once per experiment, created with its run in one transaction.
        sa.UniqueConstraint("experiment_id", "number"),
        project_fk("experiment"),
    )

    project_id: Mapped[int] = mapped_column(sa.Integer, nullable=False, index=True)
    experiment_id: Mapped[int] = mapped_column(sa.Integer, nullable=False, index=True)
    number: Mapped[int] = mapped_column(sa.Integer, nullable=False)  # Optuna's trial number, from 0
    parameters: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict, nullable=False)
    state: Mapped[TrialState] = mapped_column(
        enum_column(TrialState, "trial_state"), default=TrialState.RUNNING, nullable=False)
    reason: Mapped[str | None] = mapped_column(sa.Text)
    values: Mapped[list[float] | None] = mapped_column(JSONType)  # the objectives' final values, in order
    # [[step, value]] of the first objective's metric, as the trial's tasks reported it while running
    intermediate: Mapped[list[list[float]]] = mapped_column(JSONType, default=list, nullable=False)
    pruned_step: Mapped[int | None] = mapped_column(sa.Integer)
    system_attrs: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict, nullable=False)
    # The trial's run (pipeline_run.experiment_id and trial_number point back); ids are never reused.
    pipeline_run_id: Mapped[int | None] = mapped_column(sa.Integer, index=True)
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow, nullable=False)
    finished_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
