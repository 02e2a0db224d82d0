"""An attempt's calls to its backend, the part of the run controller (a mixin of RunController) that talks to a
backend: submitting a queued attempt (once its cluster is enabled, its backoff over and its resource group
admits it, with the run's token Secret put first) and polling an active one (its timeout, the backend's state
mapped to the task run's by TASK_STATE_OF_JOB, outputs, metrics once it ends, and its cleanup after the
pass's commit: attempt_cleanup.py); a failing call is tried again with backoff, and fails the attempt after
the configured number of tries.
"""
from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING

import sqlalchemy as sa
from flask import current_app

from ..admission.gate import admit as admit_to_group
from ..backends import DISRUPTIONS, Backend, BackendError, JobRef, JobState, LogArchive, PermanentBackendError, Status
from ..extensions import db
from ..models import InvalidTransition, Pipeline, PipelineRun, Project, RunToken, Task, TaskRun, TaskState
from ..outputs import store as outputs_store
from . import attempt_cleanup
from .scheduling import disabled_cluster
from .timers import aware, failures

log = logging.getLogger(__name__)
MAX_SAMPLES = attempt_cleanup.MAX_SAMPLES
SERVICE_KINDS = frozenset({"Deployment", "Notebook"})
BACKOFF_MAX = 60.0  # seconds between two tries of a failing backend call, at most
# What a backend reports, as the state the task run takes: the one place the two enums meet.
TASK_STATE_OF_JOB: dict[JobState, TaskState] = {
    JobState.PENDING: TaskState.PENDING,
    JobState.WAITING: TaskState.WAITING,
    JobState.RUNNING: TaskState.RUNNING,
    JobState.SUCCEEDED: TaskState.SUCCEEDED,
    JobState.FAILED: TaskState.FAILED,
    JobState.CANCELLED: TaskState.CANCELLED,
}


def project_kept(project_id: int) -> bool:
    """Whether the project is there and no delete of it is under way, holding a share of its row until this
    transaction ends (PostgreSQL: FOR SHARE). A project's delete (api/projects.py) takes its row (FOR NO KEY
    UPDATE) before it reads what its runs started: it waits for a submission that holds the share to commit,
    and then sees its job; a submission that finds the row taken skips it (it never waits: it holds its run's
    row, which the delete takes next) and the delete takes the run along. On SQLite the one writer orders
    the two."""
    return db.session.scalar(sa.select(Project.id).where(Project.id == project_id)
                             .with_for_update(read=True, skip_locked=True)) is not None


class BackendCalls:
    """Submit and poll attempts; RunController holds the state these read and write."""
    backend_for: Callable[[Task], Backend]
    _project_held: bool  # this transaction holds a share of the run's project's row (project_kept)
    archive: LogArchive | None
    now: Callable[[], dt.datetime]
    _claims_to_read: list[tuple[int, str, Backend]]
    # attempts this pass ended (and whether their job still runs: preempted): cleaned up after its commit
    _to_clean: list[tuple[int, JobRef, Backend, bool]]

    if TYPE_CHECKING:
        def _rows(self, run: PipelineRun) -> tuple[Pipeline, Project]: ...
        def _failed(self, attempt: TaskRun, task: Task) -> None: ...
        def _put_token(self, run: PipelineRun, attempt: TaskRun, backend: Backend,
                       token: RunToken | None = None) -> None: ...

    def _submit(self, run: PipelineRun, attempt: TaskRun, task: Task, token: RunToken | None = None) -> bool:
        """Submit a queued attempt, unless its cluster is disabled (it waits, saying so) or the backoff
        after a failed try is not over. An error that cannot pass (PermanentBackendError) fails the
        attempt at once; another is tried MYAPP_SUBMIT_ATTEMPTS times, then fails it with the reason."""
        if attempt.state != TaskState.QUEUED or not attempt.manifests:
            return False
        cluster = disabled_cluster([task.id]) if task.resource_group_id is not None else None
        if cluster is not None:
            if attempt.reason != (reason := f"waiting: cluster {cluster} is disabled"):
                attempt.reason = reason
            return False
        if attempt.backend_retry_at is not None and self.now() < aware(attempt.backend_retry_at):
            return False
        if not self._project_held:  # once per transaction
            if not project_kept(run.project_id):
                return False  # its project is being deleted: the delete takes the run with it, nothing is sent
            self._project_held = True
        if not admit_to_group(attempt, task, self.now(), self.backend_for, self._preempted):
            return False  # its resource group has no room for it yet: its reason and queue position say why
        try:
            backend = self.backend_for(task)
            self._put_token(run, attempt, backend, token)
            ref = backend.submit(attempt.manifests)
        except PermanentBackendError as exc:
            attempt.transition(TaskState.FAILED, f"cannot run: {exc}", self.now())
            self._failed(attempt, task)
            return True
        except BackendError as exc:
            log.warning("run %s task %s attempt %s: submit: %s", run.id, task.name, attempt.attempt, exc)
            return self._backend_failed(attempt, task, "submit", exc, current_app.config["MYAPP_SUBMIT_ATTEMPTS"])
        attempt.backend_errors, attempt.backend_retry_at = 0, None
        attempt.backend_ref = ref.as_dict()
        attempt.backend = ref.backend
        attempt.submitted_at = self.now()
        attempt.transition(TaskState.PENDING, None, self.now())
        return True

    def _backend_failed(self, attempt: TaskRun, task: Task, call: str, exc: BackendError, tries: int) -> bool:
        """A backend call of this attempt failed again: wait MYAPP_BACKEND_RETRY_SECONDS, doubling up to
        BACKOFF_MAX, before the next try; the tries-th failure in a row fails the attempt. True if it did."""
        attempt.backend_errors += 1
        if attempt.backend_errors >= tries:
            attempt.backend_retry_at = None
            attempt.transition(TaskState.FAILED, f"{call} failed after {attempt.backend_errors} tries: {exc}",
                               self.now())
            self._failed(attempt, task)
            return True
        delay = min(BACKOFF_MAX, current_app.config["MYAPP_BACKEND_RETRY_SECONDS"] * 2 ** (attempt.backend_errors - 1))
        attempt.backend_retry_at = self.now() + dt.timedelta(seconds=delay)
        attempt.reason = f"{call} failed (try {attempt.backend_errors} of {tries}), next in {delay:g} s: {exc}"
        return False

    def _poll(self, run: PipelineRun, attempt: TaskRun, task: Task) -> bool:
        backend = self.backend_for(task)
        assert attempt.backend_ref is not None  # active attempts were submitted: _submit stored it
        ref = JobRef.from_dict(attempt.backend_ref)
        if task.timeout and attempt.submitted_at:
            elapsed = (self.now() - aware(attempt.submitted_at)).total_seconds()
            if elapsed > task.timeout:
                backend.cancel(ref)
                attempt.transition(TaskState.FAILED, f"timed out after {task.timeout}s", self.now())
                self._failed(attempt, task)
                return True
        if attempt.backend_retry_at is not None and self.now() < aware(attempt.backend_retry_at):
            return False  # backing off after failed polls
        try:
            status = backend.status(ref)
        except BackendError as exc:
            if not self._backend_failed(attempt, task, "status", exc, current_app.config["MYAPP_STATUS_ATTEMPTS"]):
                return False
            try:  # failed here: it must not go on running unseen (a retry would run beside it)
                backend.cancel(ref)
            except BackendError as cancel_error:
                attempt.reason = f"{attempt.reason} (cancel failed too: {cancel_error})"
            return True
        if attempt.backend_errors:
            attempt.backend_errors, attempt.backend_retry_at = 0, None
        new = TASK_STATE_OF_JOB[status.state]
        if new == TaskState.RUNNING and ref.primary.kind in SERVICE_KINDS:
            # A service task is done when it serves; it keeps running after the run ends.
            attempt.transition(TaskState.SUCCEEDED, f"serving at {status.url}" if status.url else "serving",
                               self.now())
            return True
        if new == attempt.state:
            if status.reason and status.reason != attempt.reason:
                attempt.reason = status.reason
            return False
        try:
            attempt.transition(new, status.reason or None, self.now())
        except InvalidTransition:
            log.warning("ignoring %s -> %s for task run %s", attempt.state.value, new.value, attempt.id)
            return False
        if status.exit_code is not None:
            attempt.exit_code = status.exit_code
        if new == TaskState.FAILED:
            if status.cause in DISRUPTIONS:
                self._disrupted(attempt, task, backend, ref, status)
            self._failed(attempt, task)
        if attempt.is_finished and outputs_store.on_claim(attempt):
            self._claims_to_read.append((attempt.id, self._rows(run)[1].namespace, backend))
        elif attempt.is_finished:
            outputs_store.record(attempt, self._rows(run)[1].namespace, backend)
        if attempt.is_finished and self.archive is not None:
            try:
                attempt.metrics = [asdict(sample) for sample in backend.metrics(ref)][-MAX_SAMPLES:]
            except BackendError as exc:  # the outcome stands; say what was left behind
                attempt.reason = f"{attempt.reason or attempt.state.value} (cleanup failed: {exc})"
            else:  # its log is archived after this pass's commit, not while it holds the run (attempt_cleanup)
                attempt_cleanup.take(attempt, self.now())
                self._to_clean.append((attempt.id, ref, backend, False))
        return True

    def _preempted(self, victim: TaskRun, task: Task) -> None:
        """Admission ended a running attempt of another run to make room (its run's row held by this
        transaction): its job is stopped after the commit, by clean_ended, never while the rows are held."""
        if victim.backend_ref:
            attempt_cleanup.take(victim, self.now())
            self._to_clean.append((victim.id, JobRef.from_dict(victim.backend_ref), self.backend_for(task), True))

    def _clean_ended(self) -> None:
        """After the pass's commit: the cleanups of the attempts it ended (each then commits its own mark)."""
        pending, self._to_clean = self._to_clean, []
        if pending:
            db.session.commit()  # ends a read begun since (on_finish's): no snapshot kept while logs are copied
        for attempt_id, ref, backend, stop in pending:
            attempt_cleanup.clean(attempt_id, ref, backend, self.archive, stop)

    def _disrupted(self, attempt: TaskRun, task: Task, backend: Backend, ref: JobRef, status: Status) -> None:
        """The machine ended the attempt (a replica killed, a pod evicted, a node lost): what is left of its
        gang is stopped (a rank alone waits forever), the cause and the lost nodes are kept, and the reason says
        what follows: the next attempt starts the whole gang again from the task's checkpoint, off those nodes
        (a failure: it counts against the task's retries, myapp/pipelines/timers.failures)."""
        attempt.cause = status.cause
        attempt.lost_nodes = list(status.lost_nodes) or None
        failed = failures(attempt)
        if failed <= task.retries:
            follows = (f"the whole gang restarts from its checkpoint (failure {failed} of the "
                       f"{task.retries + 1} its retries allow)")
        else:
            follows = f"no retry left (failure {failed}; retries: {task.retries})"
        attempt.reason = f"{status.reason}: {follows}"
        try:
            backend.cancel(ref)
        except BackendError as exc:
            attempt.reason = f"{attempt.reason} (stopping the rest of the gang failed: {exc})"
