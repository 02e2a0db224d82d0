"""The run controller: one idempotent reconcile pass per call, all state in SQL.

Every pass starts by writing the run row (the lock that serializes controllers on one run,
on PostgreSQL and SQLite alike) and holds it until its commit. A pass creates new attempts'
rows with their manifests, commits, then takes the lock again and submits them, so an attempt
is committed before the backend sees it. Submission is idempotent per attempt (deterministic names), so a crash
between submit and its commit re-submits and the backend adopts: each attempt runs once.

The time from an upstream's end to its downstream's submission is that pass's SQL round trips, its
rendering and its commit: a pass reads the run row in the statement that locks it, reads the pipeline,
project and templates once, and commits new attempts without waiting for the log flush (see
_commit_before_submit).
"""
from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import asdict

import sqlalchemy as sa
from flask import current_app
from sqlalchemy.orm import defer
from sqlalchemy.orm.attributes import set_committed_value

from ..admission.gate import admit as admit_to_group
from ..admission.gate import recheck_after
from ..auth import run_tokens
from ..backends import Backend, BackendError, JobRef, JobState, LogArchive, PermanentBackendError
from ..extensions import cache, db
from ..models import (
    Edge,
    InvalidTransition,
    JobTemplate,
    Pipeline,
    PipelineRun,
    Project,
    RunState,
    RunToken,
    Task,
    TaskRun,
    TaskState,
    utcnow,
)
from ..models.states import TASK_ACTIVE
from ..outputs import declarations as outputs
from ..outputs import store as outputs_store
from ..outputs.refs import upstream_paths
from ..rendering import RenderError
from ..rendering.contract import run_token_secret
from .dag import Decision, decide, retry_delay, run_outcome
from .macros import macro_values, substitute
from .manifests import render_task
from .scheduling import admission, disabled_cluster, project_full, run_task_ids

log = logging.getLogger(__name__)
MAX_PASSES = 20  # a pass that changed something is followed by another, up to this many
MAX_SAMPLES = 720  # metrics samples kept per attempt (an hour at 5 s)
SERVICE_KINDS = frozenset({"Deployment", "Notebook"})
# When a run with nothing to do now needs its next look (beat requests it then: myapp/shared/reconcile_requests.py).
# An active attempt is polled after a tenth of its age, between POLL_MIN and POLL_MAX: young jobs are
# seen finishing within a tick, long ones cost a poll per POLL_MAX each.
POLL_MIN, POLL_FRACTION, POLL_MAX = 1.0, 0.1, 15.0
BACKOFF_MAX = 60.0  # seconds between two tries of a failing backend call, at most
# An active attempt on a cluster the beat watches (backends/kubernetes/watch.py): its changes request the
# run as they happen; this poll is the safety net for what a watch misses.
WATCHED_POLL = 30.0
IDLE_RECHECK = 30.0  # a run waiting for another (admission, depends_on_past): the other's end requests it sooner
# What a backend reports, as the state the task run takes: the one place the two enums meet.
TASK_STATE_OF_JOB: dict[JobState, TaskState] = {
    JobState.PENDING: TaskState.PENDING,
    JobState.WAITING: TaskState.WAITING,
    JobState.RUNNING: TaskState.RUNNING,
    JobState.SUCCEEDED: TaskState.SUCCEEDED,
    JobState.FAILED: TaskState.FAILED,
    JobState.CANCELLED: TaskState.CANCELLED,
}

BackendFor = Callable[[Task], Backend]


class RunController:
    def __init__(self, backend_for: BackendFor, now: Callable[[], dt.datetime] = utcnow,
                 on_finish: Callable[[int], None] = lambda run_id: None, archive: LogArchive | None = None,
                 on_task_failed: Callable[[int], None] = lambda task_run_id: None):
        self.backend_for = backend_for
        # With an archive, a finished attempt's logs are archived and its objects removed.
        self.archive = archive
        self.now = now
        self.on_finish = on_finish  # called after the commit that finished a run (webhooks)
        self._ended: set[int] = set()  # runs ended here: their token Secrets go after the commit
        # Attempts failed with no retry left (task.failed webhooks), told after the pass's commit.
        self.on_task_failed = on_task_failed
        self._failed_for_good: list[TaskRun] = []
        # Ended attempts whose outputs are on a Kubernetes claim, read after the pass's commit: the reader
        # pod takes seconds (minutes pulling its image), which must not hold the run's lock (cancels wait on it).
        self._claims_to_read: list[tuple[int, str, Backend]] = []
        # Attempts created in this pass, (task id, attempt number): submitted once their rows are committed.
        self._created: set[tuple[int, int]] = set()
        # Rows this pass reads more than once (pipeline, project, templates), referenced so that the
        # session's identity map (weak) keeps them until the pass's commit: one SELECT each, not one per use.
        self._held: list[object] = []
        # The project's namespace, read with it (immutable, so still right after the pass's commit, when the
        # rows held are expired: _submit_created puts the token Secret there without reading the project again).
        self._namespace: str | None = None
        # Backends (id) this pass has put the run's token Secret on: once each (_put_token).
        self._tokens_put: set[int] = set()

    # ---- public ---------------------------------------------------------------------------
    def reconcile(self, run_id: int) -> RunState | None:
        """Drive the run as far as it can go now; returns its state (None if it does not exist)."""
        for _ in range(MAX_PASSES):
            if not self._pass(run_id):
                break
        run = db.session.get(PipelineRun, run_id)
        state = run.state if run else None
        if run is not None and run.is_finished and run.next_reconcile_at is not None:
            run.next_reconcile_at = None  # beat never looks at it again
        db.session.commit()
        self._release_ended()
        return state

    def cancel(self, run_id: int, reason: str = "cancelled by user") -> None:
        run = self._lock(run_id)
        finished = run is not None and not run.is_finished
        if run is not None and finished:
            self._cancel_locked(run, reason)
        db.session.commit()
        self._release_ended()
        if finished:
            self.on_finish(run_id)

    def release_tokens(self) -> int:
        """Beat: what ended runs left behind (a worker that died right after the commit that ended
        one): their tokens revoked, their Secrets deleted. Returns how many runs it finished."""
        candidates = run_tokens.release_candidates()
        db.session.commit()
        return sum(self._release_token(run_id) for run_id in candidates)

    def _cancel_locked(self, run: PipelineRun, reason: str) -> None:
        for attempt in self._attempts(run).values():
            if attempt.is_finished:
                continue
            if attempt.backend_ref:
                task = db.session.get(Task, attempt.task_id)
                self.backend_for(task).cancel(JobRef.from_dict(attempt.backend_ref))
            attempt.transition(TaskState.CANCELLED, reason, self.now())
        run.transition(RunState.CANCELLED, reason, self.now())
        run.next_reconcile_at = None
        self._revoke_token(run)

    # ---- one pass -------------------------------------------------------------------------
    def _lock(self, run_id: int) -> PipelineRun | None:
        """Write the run row (the lock) and read it back fresh, in one round trip."""
        return db.session.scalar(
            sa.update(PipelineRun).where(PipelineRun.id == run_id).values(reconciled_at=self.now())
            .returning(PipelineRun).execution_options(populate_existing=True))

    def _rows(self, run: PipelineRun) -> tuple[Pipeline, Project]:
        """The run's pipeline and project, read together once per pass."""
        if not self._held:
            pipeline, project = db.session.execute(
                sa.select(Pipeline, Project).join(Project, Project.id == Pipeline.project_id)
                .where(Pipeline.id == run.pipeline_id)).one()
            self._held += [pipeline, project]
            self._namespace = project.namespace
        return self._held[0], self._held[1]  # type: ignore[return-value]

    def _project_namespace(self, run: PipelineRun) -> str:
        """The run's project's namespace (a project's namespace never changes: api/projects.py)."""
        if self._namespace is None:
            self._namespace = self._rows(run)[1].namespace
        return self._namespace

    def _admit(self, run: PipelineRun) -> str:
        """Apply the pipeline's run policy to a queued run (a started rerun keeps what succeeded
        in its source run) and the admin's limits; returns start / wait / skip. A waiting run says why."""
        pipeline = db.session.get(Pipeline, run.pipeline_id)
        cluster = disabled_cluster(run_task_ids(run))
        if cluster is not None:  # a disabled cluster takes no new runs
            return self._wait(run, f"waiting: cluster {cluster} is disabled")
        verdict, to_cancel = admission(run, pipeline)
        if verdict == "wait":
            return self._wait(run, f"waiting: pipeline {pipeline.name} runs at most {pipeline.max_active_runs} "
                                   "at once (max_active_runs)")
        if verdict == "skip":
            run.transition(RunState.CANCELLED, "skipped: the previous run is still going", self.now())
        elif verdict == "start":
            for other in to_cancel:
                older = self._lock(other)  # newer runs lock older ones only: no lock cycles
                if older is not None and not older.is_finished:
                    self._cancel_locked(older, f"cancelled by newer run {run.id}")
            full = project_full(run)  # the project row is locked last: see project_full
            if full is not None:
                return self._wait(run, full)
            run.transition(RunState.RUNNING, None, self.now())
            run_tokens.issue(run, self.now())  # the run's API token, before any attempt exists
            if run.rerun_of_id:
                self._copy_succeeded(run)
        return verdict

    def _wait(self, run: PipelineRun, reason: str) -> str:
        if run.reason != reason:
            run.reason = reason
        return "wait"

    def _blocked_by_past(self, run: PipelineRun, ready: tuple[int, ...]) -> set[int]:
        """depends_on_past: a task waits until it succeeded (or was skipped) in the previous run."""
        if not ready or run.only_task_id or not self._rows(run)[0].depends_on_past:
            return set()
        previous = db.session.scalar(sa.select(PipelineRun).where(
            PipelineRun.pipeline_id == run.pipeline_id, PipelineRun.id < run.id,
            PipelineRun.only_task_id.is_(None)).order_by(PipelineRun.id.desc()).limit(1))
        if previous is None:
            return set()
        past = self._attempts(previous)
        ok = {TaskState.SUCCEEDED, TaskState.SKIPPED}
        return {t for t in ready if t in past and past[t].state not in ok}

    def _copy_succeeded(self, run: PipelineRun) -> None:
        """A rerun starts from the failed tasks: what succeeded in the source run is kept as is."""
        source = db.session.get(PipelineRun, run.rerun_of_id)
        for task_id, done in self._attempts(source, whole=True).items():
            if done.state != TaskState.SUCCEEDED:
                continue
            db.session.add(TaskRun(
                project_id=run.project_id, pipeline_run_id=run.id, task_id=task_id, attempt=1,
                state=TaskState.SUCCEEDED, reason=f"succeeded in run {source.id}", manifests=done.manifests,
                backend=done.backend, backend_ref=done.backend_ref, submitted_at=done.submitted_at,
                output_dir=done.output_dir, outputs=done.outputs, reported_metrics=done.reported_metrics,
                started_at=done.started_at, finished_at=done.finished_at, exit_code=done.exit_code))

    def _attempts(self, run: PipelineRun, whole: bool = False) -> dict[int, TaskRun]:
        """The latest attempt of each task of the run. Every pass reads them all (a fifth of a pass's CPU
        under benchmarks/controller.py, much of it decoding JSON), so their largest JSON columns stay in
        the database unless needed: the manifests, read only for the queued attempts (to submit them: one
        more statement, only when there are any), and the metrics samples, only written here (a finished
        attempt keeps up to MAX_SAMPLES). whole: every column."""
        query = sa.select(TaskRun).where(TaskRun.pipeline_run_id == run.id).order_by(TaskRun.attempt)
        if not whole:
            query = query.options(defer(TaskRun.manifests), defer(TaskRun.metrics))
        latest = {row.task_id: row for row in db.session.scalars(query).all()}
        queued = {a.id: a for a in latest.values()
                  if a.state == TaskState.QUEUED and "manifests" in sa.inspect(a).unloaded}
        if queued:
            for attempt_id, manifests in db.session.execute(
                    sa.select(TaskRun.id, TaskRun.manifests).where(TaskRun.id.in_(list(queued)))):
                set_committed_value(queued[attempt_id], "manifests", manifests)
        return latest

    def _pass(self, run_id: int) -> bool:
        """One pass under the run-row lock; True if it changed something (another may go further)."""
        self._failed_for_good.clear()  # what a failed pass recorded was rolled back
        self._claims_to_read.clear()
        self._created.clear()
        self._tokens_put.clear()
        self._held = []  # expired by the last commit
        self._namespace = None
        run = self._lock(run_id)
        if run is None or run.is_finished:
            if run is not None:  # ended by a pass that died before its Secrets went: finish that
                self._ended.add(run.id)
            db.session.commit()
            return False
        changed = False
        if run.state == RunState.QUEUED:
            verdict = self._admit(run)
            if verdict != "start":
                return self._not_started(run, verdict)
            changed = True
        tasks, edges = self._load_dag(run)
        attempts = self._attempts(run)
        changed |= self._advance_attempts(run, tasks, attempts)
        final, started, retried = self._retry_due_attempts(run, tasks, attempts)
        changed |= retried
        decision = decide(list(tasks), {t.id: t.trigger_rule for t in tasks.values()}, edges, final, started)
        decided = self._apply_decision(run, decision)
        final |= decided
        changed |= bool(decided)
        changed |= self._start_ready(run, tasks, decision.ready)
        if self._finish_run(run, tasks, final):
            return False
        # Changed: another pass follows (or, past MAX_PASSES, the task requests one at once).
        run.next_reconcile_at = self.now() if changed else self._next_look(tasks, attempts)
        if self._created:
            _commit_before_submit()
        else:
            db.session.commit()
        self._tell_task_failures()
        if self._created:
            self._submit_created(run_id)
        return changed

    def _submit_created(self, run_id: int) -> None:
        """Submit the attempts this pass created, now that their rows are committed, under the run lock
        taken again: a downstream task reaches its backend in the pass that saw its upstream finish, not
        one pass later. A crash before this commit leaves queued rows the next pass submits (the backend
        adopts a job it already has); a cancel that came in between has cancelled them: nothing is sent."""
        created, self._created = self._created, set()
        run = self._lock(run_id)
        if run is not None and not run.is_finished:
            rows = db.session.execute(  # the created attempts with their tasks and the run's token, in one round trip
                sa.select(TaskRun, Task, RunToken).join(Task, Task.id == TaskRun.task_id)
                .outerjoin(RunToken, RunToken.pipeline_run_id == TaskRun.pipeline_run_id)
                .where(TaskRun.pipeline_run_id == run_id, TaskRun.task_id.in_({t for t, _ in created}))
                .order_by(TaskRun.task_id, TaskRun.attempt)).all()
            for attempt, task, token in rows:
                if (attempt.task_id, attempt.attempt) in created:
                    self._submit(run, attempt, task, token)
        db.session.commit()
        self._tell_task_failures()

    def _next_look(self, tasks: dict[int, Task], attempts: dict[int, TaskRun]) -> dt.datetime:
        """When a run where nothing changed this pass next needs a look: the next poll of an active
        attempt, a timeout, a failed submit to try again, a retry's backoff; else IDLE_RECHECK."""
        now = self.now()
        times = [now + dt.timedelta(seconds=IDLE_RECHECK)]
        for attempt in attempts.values():
            task = tasks[attempt.task_id]
            if attempt.state in TASK_ACTIVE:
                since = _aware(attempt.submitted_at or attempt.created_at)
                age = (now - since).total_seconds()
                poll = WATCHED_POLL if self._watched(task) else min(POLL_MAX, max(POLL_MIN, age * POLL_FRACTION))
                times.append(now + dt.timedelta(seconds=poll))
                if task.timeout:
                    times.append(since + dt.timedelta(seconds=task.timeout))
            elif attempt.state == TaskState.QUEUED:
                waiting = recheck_after(attempt)  # waiting for its resource group: not every second
                times.append(now + dt.timedelta(seconds=waiting) if waiting is not None else
                             max(now + dt.timedelta(seconds=POLL_MIN), _aware(attempt.backend_retry_at or now)))
            elif attempt.state == TaskState.FAILED and _failures(attempt) <= task.retries and attempt.finished_at:
                times.append(_aware(attempt.finished_at)
                             + dt.timedelta(seconds=retry_delay(task.retry_delay, _failures(attempt))))
        return min(times)

    def _watched(self, task: Task) -> bool:
        """Does the beat watch the cluster this task runs on (its mark in the shared cache is fresh:
        tasks.watch_clusters)? Its job's changes then request the run as they happen."""
        if task.resource_group_id is None:
            return False  # the default backend: local jobs report through their markers
        key = getattr(self.backend_for(task), "watch_key", None)
        return bool(key) and cache.get(key) is not None

    def _not_started(self, run: PipelineRun, verdict: str) -> bool:
        """A queued run that waits, or was skipped (finished: webhooks, and no further pass)."""
        run.next_reconcile_at = None if verdict == "skip" else self.now() + dt.timedelta(seconds=IDLE_RECHECK)
        db.session.commit()
        if verdict == "skip":
            self.on_finish(run.id)
        return verdict == "skip"

    def _load_dag(self, run: PipelineRun) -> tuple[dict[int, Task], list[tuple[int, int]]]:
        """The tasks and edges this run executes: the pipeline's, or one task alone for a debug run."""
        if run.only_task_id:  # debug: the one task alone, its upstream ignored
            return {run.only_task_id: db.session.get(Task, run.only_task_id)}, []
        tasks = {t.id: t for t in db.session.scalars(sa.select(Task).where(Task.pipeline_id == run.pipeline_id))}
        edges = [tuple(e) for e in db.session.execute(
            sa.select(Edge.upstream_task_id, Edge.downstream_task_id).where(Edge.pipeline_id == run.pipeline_id))]
        return tasks, edges

    def _advance_attempts(self, run: PipelineRun, tasks: dict[int, Task], attempts: dict[int, TaskRun]) -> bool:
        """Poll the backend for active attempts, submit the queued ones."""
        changed = False
        for attempt in list(attempts.values()):
            task = tasks[attempt.task_id]
            if attempt.state in TASK_ACTIVE:
                changed |= self._poll(run, attempt, task)
            elif attempt.state == TaskState.QUEUED:
                changed |= self._submit(run, attempt, task)
        return changed

    def _retry_due_attempts(self, run: PipelineRun, tasks: dict[int, Task], attempts: dict[int, TaskRun]
                            ) -> tuple[dict[int, TaskState], set[int], bool]:
        """Start the next attempt of failed tasks whose backoff is over. Returns the final states
        (a failure with retries left is not final), the started tasks and whether it retried any."""
        final: dict[int, TaskState] = {}
        started: set[int] = set()
        retried = False
        for task_id, attempt in attempts.items():
            task = tasks[task_id]
            if attempt.state == TaskState.FAILED and _failures(attempt) <= task.retries:
                started.add(task_id)
                assert attempt.finished_at is not None  # set by every transition into FAILED
                due = attempt.finished_at + dt.timedelta(seconds=retry_delay(task.retry_delay, _failures(attempt)))
                if self.now() >= _aware(due):
                    retried |= self._start(run, task, attempt.attempt + 1, attempt.preemptions)
            elif attempt.state == TaskState.CANCELLED and attempt.preempted_at is not None:
                started.add(task_id)  # preempted (myapp/admission/gate.py): again at once, not a failure
                retried |= self._start(run, task, attempt.attempt + 1, attempt.preemptions + 1)
            elif attempt.is_finished:
                final[task_id] = attempt.state
            else:
                started.add(task_id)
        return final, started, retried

    def _apply_decision(self, run: PipelineRun, decision: Decision) -> dict[int, TaskState]:
        """Record the tasks the trigger rules settled without running them; returns their states."""
        decided: dict[int, TaskState] = {}
        for task_id, state in [(t, TaskState.UPSTREAM_FAILED) for t in decision.upstream_failed] + \
                              [(t, TaskState.SKIPPED) for t in decision.skipped]:
            row = TaskRun(project_id=run.project_id, pipeline_run_id=run.id, task_id=task_id, attempt=1,
                          state=TaskState.QUEUED, manifests=[])
            db.session.add(row)
            row.transition(state, "an upstream task failed" if state == TaskState.UPSTREAM_FAILED
                           else "skipped by its trigger rule", self.now())
            decided[task_id] = state
        return decided

    def _start_ready(self, run: PipelineRun, tasks: dict[int, Task], ready: tuple[int, ...]) -> bool:
        """First attempts of the tasks whose upstream allows them (and, with depends_on_past, the past)."""
        changed = False
        blocked = self._blocked_by_past(run, ready)
        for task_id in ready:
            if task_id not in blocked:
                changed |= self._start(run, tasks[task_id], 1)
        return changed

    def _finish_run(self, run: PipelineRun, tasks: dict[int, Task], final: dict[int, TaskState]) -> bool:
        """Finish the run once every task is final: commit, then webhooks. True if it finished."""
        outcome = run_outcome(final, list(tasks))
        if outcome is None:
            return False
        state = RunState.SUCCEEDED if outcome == TaskState.SUCCEEDED else RunState.FAILED
        failed = sorted(tasks[t].name for t, s in final.items() if s == TaskState.FAILED)
        run.transition(state, f"failed tasks: {', '.join(failed)}" if failed else None, self.now())
        run.next_reconcile_at = None
        self._revoke_token(run)
        db.session.commit()
        self._tell_task_failures()
        self.on_finish(run.id)
        return True

    # ---- steps ------------------------------------------------------------------------------
    def _start(self, run: PipelineRun, task: Task, attempt_no: int, preemptions: int = 0) -> bool:
        """Create the attempt's row with its manifests; it is submitted after this pass's commit
        (_submit_created), so the attempt exists before the backend hears of it."""
        attempt = TaskRun(project_id=run.project_id, pipeline_run_id=run.id, task_id=task.id,
                          attempt=attempt_no, state=TaskState.QUEUED, manifests=[], preemptions=preemptions,
                          output_dir=(output_dir := outputs.attempt_dir(run.id, task.name, attempt_no)))
        self._rows(run)
        self._held.append(db.session.get(JobTemplate, task.template_id))  # render_task gets it again
        try:  # rendered before the row joins the session: one INSERT with its manifests, not INSERT + UPDATE
            attempt.manifests = render_task(task, run.id, attempt_no, self._args(run, task), output_dir)
        except RenderError as exc:
            db.session.add(attempt)
            attempt.transition(TaskState.FAILED, f"cannot render: {exc}", self.now())
            self._failed(attempt, task)
            return True
        db.session.add(attempt)
        self._created.add((task.id, attempt_no))
        return True

    def _failed(self, attempt: TaskRun, task: Task) -> None:
        """An attempt has just failed; with no retry left, the task has failed for good (task.failed)."""
        if _failures(attempt) > task.retries:
            self._failed_for_good.append(attempt)

    def _tell_task_failures(self) -> None:
        """After a commit: the task.failed webhooks, and the outputs left on claims read (outside the lock)."""
        for attempt in self._failed_for_good:
            self.on_task_failed(attempt.id)
        self._failed_for_good.clear()
        pending, self._claims_to_read = self._claims_to_read, []
        for attempt_id, namespace, backend in pending:
            ended = db.session.get(TaskRun, attempt_id)
            if ended is not None:
                outputs_store.record(ended, namespace, backend)
                db.session.commit()

    def _args(self, run: PipelineRun, task: Task) -> dict:
        pipeline, project = self._rows(run)
        params = pipeline.parameters | run.parameters
        if run.logical_date is None:  # a manual run's logical date is its start date, as in Airflow
            run.logical_date = _aware(run.started_at or self.now()).date()
        values = macro_values(ds=run.logical_date.isoformat(), run_id=str(run.id),
                              pipeline=pipeline.name, project=project.name, task=task.name, params=params)
        args = substitute(task.args, values)
        if next(outputs.references(args), None) is None:
            return args  # nothing to resolve: the upstream attempts' outputs are not read
        return outputs.resolve(args, upstream_paths(run))

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
        if attempt.backend_retry_at is not None and self.now() < _aware(attempt.backend_retry_at):
            return False
        if not admit_to_group(attempt, task, self.now(), self.backend_for, self.archive):
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

    # ---- the run's platform API token (myapp/auth/run_tokens.py) -------------------------------------
    def _put_token(self, run: PipelineRun, attempt: TaskRun, backend: Backend, token: RunToken | None = None) -> None:
        """The run's token Secret, where an attempt that mounts it runs, before it is submitted
        (the local backend reads it at submit). Put again by every pass that submits such an attempt:
        idempotent, the same token, and there even if an earlier put was lost with a crashed worker;
        once per backend in a pass however many attempts it submits (a read of the token row, a
        signature and a backend call each)."""
        if id(backend) in self._tokens_put or not run_tokens.mounts_token(attempt.manifests, run.id):
            return
        # The row _submit_created read with the attempts (under the same lock), else read (or, for a run
        # started before run tokens existed, made) now.
        row = token if token is not None else run_tokens.issue(run, self.now())
        namespace = self._project_namespace(run)  # not read again after the commit of new attempts
        backend.put_secret(namespace, run_token_secret(run.id), run_tokens.secret_data(row))
        self._tokens_put.add(id(backend))

    def _revoke_token(self, run: PipelineRun) -> None:
        """In the transaction that ends the run: from its commit on, the API refuses the token."""
        run_tokens.revoke(run.id, self.now())
        self._ended.add(run.id)

    def _release_ended(self) -> None:
        for run_id in sorted(self._ended):
            self._release_token(run_id)
        self._ended.clear()

    def _release_token(self, run_id: int) -> bool:
        """Delete an ended run's token Secret wherever its attempts mounted it, then mark it released.
        Idempotent; on a backend error the beat tick's release_tokens tries again. True when done."""
        row = db.session.scalar(sa.select(RunToken).where(RunToken.pipeline_run_id == run_id))
        run = db.session.get(PipelineRun, run_id)
        if row is None or row.released_at is not None or run is None:
            db.session.commit()
            return row is None or row.released_at is not None
        if not run.is_finished and row.revoked_at is None:
            db.session.commit()
            return False  # still active: its jobs need it
        if row.revoked_at is None:  # ended by a path that did not revoke
            row.revoked_at = self.now()
        namespace = db.session.get(Project, run.project_id).namespace
        backends: dict[int, Backend] = {}
        for attempt in db.session.scalars(sa.select(TaskRun).where(TaskRun.pipeline_run_id == run_id)):
            if run_tokens.mounts_token(attempt.manifests, run_id):
                backend = self.backend_for(db.session.get(Task, attempt.task_id))
                backends[id(backend)] = backend
        try:
            for backend in backends.values():
                backend.delete_secret(namespace, run_token_secret(run_id))
        except BackendError as exc:
            log.warning("run %s: token Secret not deleted yet: %s", run_id, exc)
            db.session.commit()  # the revocation stands
            return False
        row.released_at = self.now()
        db.session.commit()
        return True

    def _poll(self, run: PipelineRun, attempt: TaskRun, task: Task) -> bool:
        backend = self.backend_for(task)
        assert attempt.backend_ref is not None  # active attempts were submitted: _submit stored it
        ref = JobRef.from_dict(attempt.backend_ref)
        if task.timeout and attempt.submitted_at:
            elapsed = (self.now() - _aware(attempt.submitted_at)).total_seconds()
            if elapsed > task.timeout:
                backend.cancel(ref)
                attempt.transition(TaskState.FAILED, f"timed out after {task.timeout}s", self.now())
                self._failed(attempt, task)
                return True
        if attempt.backend_retry_at is not None and self.now() < _aware(attempt.backend_retry_at):
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
            self._failed(attempt, task)
        if attempt.is_finished and outputs_store.on_claim(attempt):
            self._claims_to_read.append((attempt.id, self._rows(run)[1].namespace, backend))
        elif attempt.is_finished:
            outputs_store.record(attempt, self._rows(run)[1].namespace, backend)
        if attempt.is_finished and self.archive is not None:
            try:
                attempt.metrics = [asdict(sample) for sample in backend.metrics(ref)][-MAX_SAMPLES:]
                backend.cleanup(ref, self.archive)
            except BackendError as exc:  # the outcome stands; say what was left behind
                attempt.reason = f"{attempt.reason or attempt.state.value} (cleanup failed: {exc})"
        return True


def _commit_before_submit() -> None:
    """Commit the attempts a pass created without waiting for PostgreSQL to flush its log (a
    synchronous commit costs a disk flush, 4-15 ms here, most of the time between an upstream's end and
    its downstream's submission): _submit_created's commit follows at once, and the log is flushed in
    order, so that one makes both durable. Should the database crash between the two, the rows are
    created again by a later pass under the same job names and the backend adopts what it has, as after
    a worker crash there."""
    if db.session.get_bind().dialect.name == "postgresql":
        db.session.execute(sa.text("SET LOCAL synchronous_commit = off"))
    db.session.commit()


def _failures(attempt: TaskRun) -> int:
    """Failed attempts of the task up to this one: its preempted attempts do not count against retries."""
    return attempt.attempt - (attempt.preemptions or 0)


def _aware(value: dt.datetime) -> dt.datetime:
    """SQLite hands back naive datetimes; everything we store is UTC."""
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)

