"""The experiment driver: one look at an experiment per call, all state in SQL.

A look writes the experiment row first (the lock that serializes drivers, as the run controller does
with runs), reads what its running trials' runs reported, tells the sampler what ended, prunes, ends the
experiment when its budget says so, and asks for new trials up to its parallel budget. A new trial is
claimed with its run in the look's transaction (the trial number is unique per experiment, the run key
per pipeline): a worker killed before the commit leaves neither, after it both, and the run is an
ordinary run the run controller drives (admission, quotas, retries, cancel) and beat finds again.
What the look decided for the runs (start these, cancel those) is sent after its commit (``Hooks``).
"""
from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import sqlalchemy as sa

from ..extensions import db
from ..models import Experiment, ExperimentState, PipelineRun, RunState, Trial, TrialState, utcnow
from . import progress

if TYPE_CHECKING:
    from .study import Settings, StoredTrial, Study
from .space import grid_values

POLL_SECONDS = 1.0  # how often a pruned experiment's running trials are read
SAFETY_SECONDS = 30.0  # without pruning, trials' ends are events; beat looks this often anyway


@dataclass
class Hooks:
    """What a look asks of the run controller, after its commit."""

    start_runs: Callable[[list[int]], None] = lambda run_ids: None
    cancel_runs: Callable[[list[int], str], None] = lambda run_ids, reason: None
    now: Callable[[], dt.datetime] = utcnow


@dataclass
class Outcome:
    state: ExperimentState | None = None
    started: list[int] = field(default_factory=list)
    cancelled: list[int] = field(default_factory=list)


def settings_of(experiment: Experiment) -> Settings:
    from .study import Settings

    return Settings(f"experiment-{experiment.id}", experiment.search_space, experiment.objectives,
                    experiment.algorithm, experiment.seed, experiment.early_stopping)


def stored(trial: Trial) -> StoredTrial:
    from .study import StoredTrial

    return StoredTrial(trial.number, trial.parameters, trial.state.value, trial.values, trial.intermediate,
                       trial.system_attrs)


def max_trials(experiment: Experiment) -> int:
    """The trial budget; a grid search ends when its grid has been tried."""
    if experiment.algorithm != "grid":
        return experiment.max_trials
    size = math.prod(len(grid_values(s, s["name"])) for s in experiment.search_space)
    return min(experiment.max_trials, size)


def lock(experiment_id: int, now: dt.datetime) -> Experiment | None:
    return db.session.scalar(
        sa.update(Experiment).where(Experiment.id == experiment_id).values(looked_at=now)
        .returning(Experiment).execution_options(populate_existing=True))


def trials_of(experiment: Experiment) -> list[Trial]:
    return list(db.session.scalars(sa.select(Trial).where(Trial.experiment_id == experiment.id)
                                   .order_by(Trial.number)))


def start(experiment: Experiment, now: dt.datetime) -> None:
    experiment.state = ExperimentState.RUNNING
    experiment.started_at = now
    experiment.reason = None
    experiment.next_look_at = now


def look(experiment_id: int, hooks: Hooks, requested: bool = True) -> Outcome:
    """Drive the experiment as far as it goes now; the runs to start and cancel are handed to hooks.
    requested: the look was asked through look_requested_at (requests.py), which it clears."""
    now = hooks.now()
    from .study import Study  # Optuna (a second to import) only where a look runs: workers, not the web

    progress.refresh_claims(experiment_id)
    experiment = lock(experiment_id, now)
    outcome = Outcome()
    if experiment is None or experiment.state != ExperimentState.RUNNING:
        db.session.commit()
        outcome.state = experiment.state if experiment else None
        return outcome
    if requested:
        experiment.look_requested_at = None
    trials = trials_of(experiment)
    runs = _runs(trials)
    ended = _read_running(experiment, trials, runs)
    study = Study(settings_of(experiment), [stored(t) for t in trials], experiment.sampler_state)
    _settle(experiment, study, trials, runs, ended, outcome, now)
    if experiment.state == ExperimentState.RUNNING:
        _stop_if_done(experiment, trials, outcome, now)
    if experiment.state == ExperimentState.RUNNING:
        _ask(experiment, study, trials, outcome, now)
        experiment.sampler_state = study.snapshot()
    running = any(t.state == TrialState.RUNNING for t in trials)
    pace = POLL_SECONDS if experiment.early_stopping else SAFETY_SECONDS
    experiment.next_look_at = now + dt.timedelta(seconds=pace) if running else None
    outcome.state = experiment.state
    db.session.commit()
    if outcome.cancelled:
        hooks.cancel_runs(outcome.cancelled, f"stopped by experiment {experiment_id}")
    if outcome.started:
        hooks.start_runs(outcome.started)
    return outcome


def cancel(experiment_id: int, reason: str, now: dt.datetime | None = None) -> list[int]:
    """End the experiment at once (the caller commits): its running trials are cancelled; returns their
    runs, which the caller cancels after the commit."""
    now = now or utcnow()
    experiment = lock(experiment_id, now)
    if experiment is None or experiment.is_finished:
        return []
    trials = trials_of(experiment)
    runs = [t.pipeline_run_id for t in trials if t.state == TrialState.RUNNING and t.pipeline_run_id]
    for trial in trials:
        if trial.state == TrialState.RUNNING:
            _end_trial(trial, TrialState.CANCELLED, reason, now)
    _finish(experiment, ExperimentState.CANCELLED, reason, now)
    return runs


# ---- the steps of a look ---------------------------------------------------------------------------
def _runs(trials: list[Trial]) -> dict[int, PipelineRun]:
    ids = [t.pipeline_run_id for t in trials if t.state == TrialState.RUNNING and t.pipeline_run_id]
    if not ids:
        return {}
    return {run.id: run for run in db.session.scalars(sa.select(PipelineRun).where(PipelineRun.id.in_(ids)))}


def _metrics(experiment: Experiment) -> list[str]:
    return [o["metric"] for o in experiment.objectives]


def _read_running(experiment: Experiment, trials: list[Trial], runs: dict[int, PipelineRun]
                  ) -> dict[int, progress.Progress]:
    """Intermediate values of every running trial, kept on its row; returns the ended ones' progress."""
    ended: dict[int, progress.Progress] = {}
    for trial in trials:
        run = runs.get(trial.pipeline_run_id or 0)
        if trial.state != TrialState.RUNNING or run is None:
            continue
        seen = progress.read(run.id, run.project_id, _metrics(experiment))
        if seen.series != trial.intermediate:
            trial.intermediate = seen.series
        if run.is_finished:
            ended[trial.number] = seen
    return ended


def _settle(experiment: Experiment, study: Study, trials: list[Trial], runs: dict[int, PipelineRun],
            ended: dict[int, progress.Progress], outcome: Outcome, now: dt.datetime) -> None:
    """Tell the sampler what ended; prune what the pruner would stop."""
    metrics = _metrics(experiment)
    for trial in trials:
        if trial.state != TrialState.RUNNING:
            continue
        run = runs.get(trial.pipeline_run_id or 0)
        if run is None:  # its run was deleted
            _told(trial, study.tell(trial.number, "failed"), f"run {trial.pipeline_run_id} was deleted", now)
        elif trial.number in ended and run.state == RunState.SUCCEEDED:
            finals = ended[trial.number].finals
            missing = [i for i, m in enumerate(metrics) if m not in finals]
            if missing:
                index = missing[0]
                reason = (f"objectives[{index}].metric: no task of trial {trial.number} (run {run.id}) reported "
                          f"{metrics[index]!r} (metrics.jsonl or the metrics API)")
                _told(trial, study.tell(trial.number, "failed"), reason, now)
                _finish(experiment, ExperimentState.FAILED, reason, now)
                _cancel_running(trials, outcome, reason, now)
                return
            if experiment.early_stopping and study.should_prune(trial.number):  # its last step judged too
                _prune(trial, study, now)
            else:
                _told(trial, study.tell(trial.number, "complete", [finals[m] for m in metrics]), None, now)
        elif trial.number in ended:
            _told(trial, study.tell(trial.number, "failed"),
                  f"run {run.id} {run.state.value}: {run.reason or 'no reason given'}", now)
        elif experiment.early_stopping and study.should_prune(trial.number):
            _prune(trial, study, now)
            outcome.cancelled.append(run.id)


def _prune(trial: Trial, study: Study, now: dt.datetime) -> None:
    """The pruner stops the trial at its last reported step: while its run runs (the caller cancels it),
    or when the run has just ended and that step was its last (then nothing is left to cancel). Each step a
    look sees is judged, the last one included, as Optuna's loop does (report, then should_prune), so
    whether a look saw the last step before the run ended changes nothing."""
    step = int(trial.intermediate[-1][0])
    _told(trial, study.tell(trial.number, "pruned"), f"pruned at step {step}", now)
    trial.pruned_step = step


def _stop_if_done(experiment: Experiment, trials: list[Trial], outcome: Outcome, now: dt.datetime) -> None:
    failed = sum(t.state == TrialState.FAILED for t in trials)
    running = [t for t in trials if t.state == TrialState.RUNNING]
    if failed > experiment.max_failed_trials:
        last = next(t for t in reversed(trials) if t.state == TrialState.FAILED)
        reason = (f"{failed} trials failed, more than max_failed_trials ({experiment.max_failed_trials}); "
                  f"the last, trial {last.number}: {last.reason}")
        _cancel_running(trials, outcome, reason, now)
        _finish(experiment, ExperimentState.FAILED, reason, now)
    elif experiment.time_limit_seconds and experiment.started_at is not None and \
            now >= _aware(experiment.started_at) + dt.timedelta(seconds=experiment.time_limit_seconds):
        reason = f"time limit reached ({experiment.time_limit_seconds} s)"
        _cancel_running(trials, outcome, reason, now)
        _finish(experiment, ExperimentState.SUCCEEDED if _any_complete(trials) else ExperimentState.FAILED,
                reason if _any_complete(trials) else f"{reason} before any trial completed", now)
    elif len(trials) >= max_trials(experiment) and not running:
        _finish(experiment, ExperimentState.SUCCEEDED if _any_complete(trials) else ExperimentState.FAILED,
                None if _any_complete(trials) else "no trial completed", now)


def _ask(experiment: Experiment, study: Study, trials: list[Trial], outcome: Outcome, now: dt.datetime) -> None:
    """Claim new trials, each with its run, up to the parallel budget and the trial budget."""
    running = sum(t.state == TrialState.RUNNING for t in trials)
    while running < experiment.parallel_trials and len(trials) < max_trials(experiment):
        asked = study.ask()
        run = PipelineRun(project_id=experiment.project_id, pipeline_id=experiment.pipeline_id,
                          run_key=f"experiment-{experiment.id}-trial-{asked.number}", parameters=asked.parameters,
                          experiment_id=experiment.id, trial_number=asked.number,
                          created_by_id=experiment.created_by_id)
        db.session.add(run)
        db.session.flush()
        trial = Trial(project_id=experiment.project_id, experiment_id=experiment.id, number=asked.number,
                      parameters=asked.parameters, state=TrialState.RUNNING, intermediate=[],
                      system_attrs=asked.system_attrs, pipeline_run_id=run.id, created_at=now)
        db.session.add(trial)
        trials.append(trial)
        outcome.started.append(run.id)
        running += 1


def _told(trial: Trial, told: StoredTrial, reason: str | None, now: dt.datetime) -> None:
    """The trial as Optuna keeps it after a tell (a pruned trial's value is its last intermediate one)."""
    trial.values = told.values
    trial.system_attrs = told.system_attrs
    _end_trial(trial, TrialState(told.state), reason, now)


def _end_trial(trial: Trial, state: TrialState, reason: str | None, now: dt.datetime) -> None:
    trial.state = state
    trial.reason = reason
    trial.finished_at = now


def _cancel_running(trials: list[Trial], outcome: Outcome, reason: str, now: dt.datetime) -> None:
    for trial in trials:
        if trial.state == TrialState.RUNNING:
            _end_trial(trial, TrialState.CANCELLED, reason, now)
            if trial.pipeline_run_id:
                outcome.cancelled.append(trial.pipeline_run_id)


def _finish(experiment: Experiment, state: ExperimentState, reason: str | None, now: dt.datetime) -> None:
    experiment.state = state
    experiment.reason = reason
    experiment.finished_at = now
    experiment.next_look_at = None


def _any_complete(trials: list[Trial]) -> bool:
    return any(t.state == TrialState.COMPLETE for t in trials)


def _aware(value: dt.datetime) -> dt.datetime:
    """SQLite hands back naive datetimes; everything stored is UTC."""
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
