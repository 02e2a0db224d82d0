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

RunController is assembled from its parts: this module holds the pass itself (the lock, the run policy, the
DAG's decisions, new attempts and the run's end); backend_calls.py submits and polls attempts, timers.py says
when the run next needs a look, run_token_secrets.py puts and removes the run's token Secrets.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Callable

import sqlalchemy as sa
from sqlalchemy.orm import defer
from sqlalchemy.orm.attributes import set_committed_value

from ..auth import run_tokens
from ..backends import Backend, JobRef, LogArchive
from ..extensions import db
from ..models import (
    Edge,
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
from ..outputs import checkpoints
from ..outputs import declarations as outputs
from ..outputs import store as outputs_store
from ..outputs.refs import upstream_paths
from ..rendering import RenderError
from .backend_calls import BackendCalls
from .dag import Decision, decide, run_outcome
from .macros import macro_values, substitute
from .manifests import render_task
from .run_token_secrets import RunTokenSecrets
from .scheduling import admission, disabled_cluster, project_full, run_task_ids
from .timers import IDLE_RECHECK, Timers, aware, failures, retry_due
from .trials import without_serving

PREEMPTED = "preempted"  # TaskRun.cause of an attempt admission stopped (beside myapp.backends.DISRUPTIONS)
MAX_PASSES = 20  # a pass that changed something is followed by another, up to this many
BackendFor = Callable[[Task], Backend]


class RunController(Timers, BackendCalls, RunTokenSecrets):
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
        self._to_clean: list[tuple[int, JobRef, Backend, bool]] = []
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
        self._to_clean.clear()
        self._created.clear()
        self._tokens_put.clear()
        self._held = []  # expired by the last commit
        self._project_held = False
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
        self._tell_taskfailures()
        if self._created:
            self._submit_created(run_id)
        self._clean_ended()
        return changed

    def _submit_created(self, run_id: int) -> None:
        """Submit the attempts this pass created, now that their rows are committed, under the run lock
        taken again: a downstream task reaches its backend in the pass that saw its upstream finish, not
        one pass later. A crash before this commit leaves queued rows the next pass submits (the backend
        adopts a job it already has); a cancel that came in between has cancelled them: nothing is sent."""
        created, self._created = self._created, set()
        run = self._lock(run_id)
        if run is not None and not run.is_finished:
            # The created attempts with their tasks and the run's token, in one round trip, holding a share
            # of the project's row (backend_calls.project_kept): none if a delete of the project has it.
            rows = db.session.execute(
                sa.select(TaskRun, Task, RunToken).join(Task, Task.id == TaskRun.task_id)
                .join(Project, Project.id == TaskRun.project_id)
                .outerjoin(RunToken, RunToken.pipeline_run_id == TaskRun.pipeline_run_id)
                .where(TaskRun.pipeline_run_id == run_id, TaskRun.task_id.in_({t for t, _ in created}))
                .order_by(TaskRun.task_id, TaskRun.attempt)
                .with_for_update(of=Project, read=True, skip_locked=True)).all()
            self._project_held = bool(rows)
            for attempt, task, token in rows:
                if (attempt.task_id, attempt.attempt) in created:
                    self._submit(run, attempt, task, token)
        db.session.commit()
        self._tell_taskfailures()

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
        if run.experiment_id is not None:  # a trial never deploys or replaces a service
            return without_serving(tasks, edges)
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
            if attempt.state == TaskState.FAILED and failures(attempt) <= task.retries:
                started.add(task_id)
                if self.now() >= retry_due(attempt, task):
                    retried |= self._start(run, task, attempt.attempt + 1, attempt.preemptions)
            elif attempt.state == TaskState.CANCELLED and attempt.preempted_at is not None:
                started.add(task_id)  # preempted (myapp/admission/gate.py): again at once, not a failure
                attempt.cause = attempt.cause or PREEMPTED
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
        self._tell_taskfailures()
        self.on_finish(run.id)
        self._clean_ended()
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
            attempt.manifests = render_task(task, run.id, attempt_no, self._args(run, task), output_dir,
                                            checkpoints.task_dir(run.id, task.name))
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
        if failures(attempt) > task.retries:
            self._failed_for_good.append(attempt)

    def _tell_taskfailures(self) -> None:
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
            run.logical_date = aware(run.started_at or self.now()).date()
        values = macro_values(ds=run.logical_date.isoformat(), run_id=str(run.id),
                              pipeline=pipeline.name, project=project.name, task=task.name, params=params)
        args = substitute(task.args, values)
        if next(outputs.references(args), None) is None:
            return args  # nothing to resolve: the upstream attempts' outputs are not read
        return outputs.resolve(args, upstream_paths(run))

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



