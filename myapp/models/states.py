"""Run state machines: which transitions are legal, and the timestamps they set."""
from __future__ import annotations

import enum


class RunState(str, enum.Enum):
    QUEUED = "queued"
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"


class TaskState(str, enum.Enum):
    QUEUED = "queued"          # created, waiting for upstream tasks
    PENDING = "pending"        # submitted to the backend, not running yet
    WAITING = "waiting"        # waiting for resources (quota, unschedulable, gang)
    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    CANCELLED = "cancelled"
    SKIPPED = "skipped"
    UPSTREAM_FAILED = "upstream_failed"


RUN_TERMINAL = frozenset({RunState.SUCCEEDED, RunState.FAILED, RunState.CANCELLED})
TASK_TERMINAL = frozenset(
    {TaskState.SUCCEEDED, TaskState.FAILED, TaskState.CANCELLED, TaskState.SKIPPED,
     TaskState.UPSTREAM_FAILED}
)
# States in which a task occupies the backend (counted against quotas, cancellable there).
TASK_ACTIVE = frozenset({TaskState.PENDING, TaskState.WAITING, TaskState.RUNNING})

RUN_TRANSITIONS: dict[RunState, frozenset[RunState]] = {
    RunState.QUEUED: frozenset({RunState.RUNNING, RunState.CANCELLED, RunState.FAILED}),
    RunState.RUNNING: frozenset({RunState.SUCCEEDED, RunState.FAILED, RunState.CANCELLED}),
}

_T = TaskState
TASK_TRANSITIONS: dict[TaskState, frozenset[TaskState]] = {
    _T.QUEUED: frozenset({_T.PENDING, _T.CANCELLED, _T.SKIPPED, _T.UPSTREAM_FAILED, _T.FAILED}),
    _T.PENDING: frozenset({_T.WAITING, _T.RUNNING, _T.SUCCEEDED, _T.FAILED, _T.CANCELLED}),
    _T.WAITING: frozenset({_T.PENDING, _T.RUNNING, _T.SUCCEEDED, _T.FAILED, _T.CANCELLED}),
    _T.RUNNING: frozenset({_T.WAITING, _T.SUCCEEDED, _T.FAILED, _T.CANCELLED}),
}


class InvalidTransition(ValueError):
    def __init__(self, kind: str, current: enum.Enum, new: enum.Enum):
        super().__init__(f"{kind} cannot go from {current.value} to {new.value}")
        self.current = current
        self.new = new
