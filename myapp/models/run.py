"""PipelineRun and TaskRun: the history of what ran, with state machines and manifests."""
from __future__ import annotations

import datetime as dt
import enum
from typing import Any

import sqlalchemy as sa
from flask_appbuilder import Model
from sqlalchemy.orm import Mapped, mapped_column

from .base import IdMixin, JSONType, enum_column, project_fk, utcnow
from .states import (
    RUN_TERMINAL,
    RUN_TRANSITIONS,
    TASK_ACTIVE,
    TASK_TERMINAL,
    TASK_TRANSITIONS,
    InvalidTransition,
    RunState,
    TaskState,
)


class RunTrigger(str, enum.Enum):
    MANUAL = "manual"
    SCHEDULE = "schedule"
    BACKFILL = "backfill"
    DEBUG = "debug"


class _Stateful:
    """started_at is set on the first active state, finished_at on a terminal one."""

    state: Any
    reason: str | None
    started_at: dt.datetime | None
    finished_at: dt.datetime | None
    _transitions: dict
    _terminal: frozenset
    _active: frozenset

    def transition(self, new, reason: str | None = None, now: dt.datetime | None = None) -> None:
        if new == self.state:
            return
        if new not in self._transitions.get(self.state, frozenset()):
            raise InvalidTransition(type(self).__name__, self.state, new)
        now = now or utcnow()
        if new in self._active and self.started_at is None:
            self.started_at = now
        if new in self._terminal:
            self.finished_at = now
        self.state = new
        self.reason = reason

    @property
    def is_finished(self) -> bool:
        return self.state in self._terminal


class PipelineRun(IdMixin, _Stateful, Model):
    __tablename__ = "pipeline_run"
    __table_args__ = (
        # One run per key: a scheduled date or a client's idempotency key.
        sa.UniqueConstraint("pipeline_id", "run_key"),
        sa.UniqueConstraint("project_id", "id"),
        project_fk("pipeline"),
        sa.Index("ix_pipeline_run_project_id_id", "project_id", "id"),
        sa.Index("ix_pipeline_run_pipeline_state", "pipeline_id", "state"),
        sa.Index("ix_pipeline_run_project_state_id", "project_id", "state", "id"),
        sa.Index("ix_pipeline_run_next_reconcile_at", "next_reconcile_at"),
    )
    _transitions = RUN_TRANSITIONS
    _terminal = RUN_TERMINAL
    _active = frozenset({RunState.RUNNING})

    project_id: Mapped[int] = mapped_column(sa.Integer, nullable=False)
    pipeline_id: Mapped[int] = mapped_column(sa.Integer, nullable=False)
    run_key: Mapped[str] = mapped_column(sa.String(128), nullable=False)
    state: Mapped[RunState] = mapped_column(
        enum_column(RunState, "run_state"), default=RunState.QUEUED, nullable=False
    )
    reason: Mapped[str | None] = mapped_column(sa.Text)
    trigger: Mapped[RunTrigger] = mapped_column(
        enum_column(RunTrigger, "run_trigger"), default=RunTrigger.MANUAL, nullable=False
    )
    # The logical date ({{ ds }}) of scheduled and backfilled runs.
    logical_date: Mapped[dt.date | None] = mapped_column(sa.Date)
    # Values of the pipeline's parameters for this run (the pipeline's `parameters` fill the rest).
    parameters: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict, nullable=False)
    # A rerun keeps the source run's succeeded tasks and runs the rest again.
    rerun_of_id: Mapped[int | None] = mapped_column(sa.ForeignKey("pipeline_run.id", ondelete="SET NULL"))
    # A debug run of one task alone, its upstream tasks ignored.
    only_task_id: Mapped[int | None] = mapped_column(sa.ForeignKey("task.id", ondelete="CASCADE"))
    # A trial of an experiment (myapp/experiments): which one, and its number there. No foreign key (the
    # column was added in place, without rebuilding the table); ids are never reused, and deleting an
    # experiment clears these.
    experiment_id: Mapped[int | None] = mapped_column(sa.Integer, index=True)
    trial_number: Mapped[int | None] = mapped_column(sa.Integer)
    # Written first by every reconcile pass: the row lock that serializes controllers on one run.
    reconciled_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    # A reconcile is queued for the run (set only where it was NULL, cleared when one starts): at
    # most one pending per run, whatever the broker (myapp/shared/reconcile_requests.py).
    reconcile_requested_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    # When beat should next look at the run (the controller's timer: next poll, a retry's backoff,
    # a timeout); NULL once it has finished. A new run is due at once.
    next_reconcile_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True), default=utcnow)
    created_by_id: Mapped[int | None] = mapped_column(sa.ForeignKey("ab_user.id", ondelete="SET NULL"))
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow, nullable=False)
    started_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    finished_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))


class TaskRun(IdMixin, _Stateful, Model):
    __tablename__ = "task_run"
    __table_args__ = (
        # Exactly one row per task attempt: the backbone of "submitted exactly once".
        sa.UniqueConstraint("pipeline_run_id", "task_id", "attempt"),
        sa.ForeignKeyConstraint(
            ["project_id", "pipeline_run_id"],
            ["pipeline_run.project_id", "pipeline_run.id"],
            ondelete="CASCADE",
        ),
        sa.Index("ix_task_run_project_id_id", "project_id", "id"),
        # Lists filtered by state (and their counts) stay index-only at 100k+ rows.
        sa.Index("ix_task_run_project_state_id", "project_id", "state", "id"),
        # Admission reads the unfinished attempts of every project (myapp/admission/gate.py).
        sa.Index("ix_task_run_state", "state"),
    )
    _transitions = TASK_TRANSITIONS
    _terminal = TASK_TERMINAL
    _active = TASK_ACTIVE

    project_id: Mapped[int] = mapped_column(sa.Integer, nullable=False)
    pipeline_run_id: Mapped[int] = mapped_column(sa.Integer, nullable=False, index=True)
    task_id: Mapped[int] = mapped_column(sa.ForeignKey("task.id", ondelete="CASCADE"), nullable=False, index=True)
    attempt: Mapped[int] = mapped_column(sa.Integer, default=1, nullable=False)
    state: Mapped[TaskState] = mapped_column(
        enum_column(TaskState, "task_state"), default=TaskState.QUEUED, nullable=False
    )
    reason: Mapped[str | None] = mapped_column(sa.Text)
    backend: Mapped[str | None] = mapped_column(sa.String(32))
    # The exact manifests submitted for this attempt (audit and run history).
    manifests: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list, nullable=False)
    exit_code: Mapped[int | None] = mapped_column(sa.Integer)
    # CPU, memory and GPU samples written back when the attempt finishes (run history).
    metrics: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONType)
    # Its folder on the project's outputs volume ("<run>/<task>/<attempt>", myapp/outputs/declarations.py); a
    # rerun's copy of a succeeded attempt keeps its source's. NULL: it mounts none.
    output_dir: Mapped[str | None] = mapped_column(sa.String(255))
    # What it wrote there, listed when it finished: [{"path", "size"}] (myapp/outputs/store.py).
    outputs: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONType)
    # What it reported in metrics.jsonl: [{"step", "name", "value"}].
    reported_metrics: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONType)
    # Where the backend runs it (myapp.backends.JobRef.as_dict()); set once submitted.
    backend_ref: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    # Consecutive failed backend calls (submit, or status once submitted) and when to try again:
    # bounded retries with backoff (myapp/pipelines/backend_calls.py), then the attempt fails.
    backend_errors: Mapped[int] = mapped_column(sa.Integer, default=0, server_default="0", nullable=False)
    backend_retry_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    # Admission to its resource group (myapp/admission/gate.py): the place in the group's queue while it
    # waits (its reason says why), where it was placed (node -> GPUs) once admitted, how many earlier
    # attempts of the task were preempted (they do not count as failures), and when this one was.
    queue_position: Mapped[int | None] = mapped_column(sa.Integer)
    placement: Mapped[dict[str, int] | None] = mapped_column(JSONType)
    # What its manifests request, all replicas ({gpus, cpu_millicores, memory_bytes}): admission reads
    # this, not the manifests, of every unfinished attempt of a group at each decision.
    requests: Mapped[dict[str, int] | None] = mapped_column(JSONType)
    preemptions: Mapped[int] = mapped_column(sa.Integer, default=0, server_default="0", nullable=False)
    preempted_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    # Why it ended when the machine, not the program, ended it (myapp.backends.DISRUPTIONS: replica-lost,
    # evicted, node-lost; "preempted" for admission's preemptions); NULL otherwise. A disruption is a failure
    # (it counts against the task's retries), a preemption is not. The nodes it lost, kept off by the next.
    cause: Mapped[str | None] = mapped_column(sa.String(32))
    lost_nodes: Mapped[list[str] | None] = mapped_column(JSONType)
    # Its cleanup (log archived, job removed), done after the commit that ended it and then NULL: due again
    # from then if the worker that took it died first (myapp/pipelines/attempt_cleanup.py).
    cleanup_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True), index=True)
    created_at: Mapped[dt.datetime] = mapped_column(sa.DateTime(timezone=True), default=utcnow, nullable=False)
    submitted_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    started_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))
    finished_at: Mapped[dt.datetime | None] = mapped_column(sa.DateTime(timezone=True))

    def transition(self, new: TaskState, reason: str | None = None, now: dt.datetime | None = None) -> None:
        super().transition(new, reason, now)
        if self.state != TaskState.QUEUED and self.queue_position is not None:
            self.queue_position = None  # a place in its group's queue only while it waits there
