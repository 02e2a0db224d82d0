"""Cron schedules, backfills, run policies and the limits admins set on them.

Run keys make both idempotent: one run per pipeline and fire time ("scheduled-<time>") or
date ("backfill-<date>"), enforced by the unique (pipeline_id, run_key) constraint, so a
beat that fires twice or a repeated request creates nothing new.

Admin limits: platform-wide ones (backfill length, minimum schedule interval) are rows of
`platform_setting`, the config's MYAPP_* value when there is none; a project's limit of runs
running at once is its `max_running_runs`. A disabled cluster takes no new work: runs that would
use it wait queued, and so do attempts not yet submitted to it.
"""
from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable
from dataclasses import dataclass

import sqlalchemy as sa
from croniter import CroniterBadDateError, croniter
from flask import current_app
from sqlalchemy.exc import IntegrityError

from ..errors import DomainError, FieldError
from ..extensions import db
from ..models import (
    Cluster,
    ConcurrencyPolicy,
    Pipeline,
    PipelineRun,
    PlatformSetting,
    Project,
    ResourceGroup,
    RunState,
    RunTrigger,
    Task,
    utcnow,
)

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Limit:
    config_key: str  # where the default comes from
    minimum: int
    maximum: int
    help: str


LIMITS = {
    "max_backfill_days": Limit("MYAPP_MAX_BACKFILL_DAYS", 1, 100_000, "the most days one backfill may span"),
    "min_schedule_interval": Limit("MYAPP_MIN_SCHEDULE_INTERVAL", 1, 31 * 86_400,
                                   "seconds between two fire times of a schedule, at least; under 60 "
                                   "allows cron expressions with seconds (a sixth field)"),
}
LIMIT_RANGES = {name: (spec.minimum, spec.maximum) for name, spec in LIMITS.items()}
SCAN_FIRES = 2000  # fire times a schedule's shortest interval is looked for in


def limit(name: str) -> int:
    row = db.session.get(PlatformSetting, name)
    return row.value if row is not None else int(current_app.config[LIMITS[name].config_key])


def limits() -> dict[str, dict[str, int | bool | str]]:
    """Every platform limit: its value, its default and whether an admin set it."""
    out: dict[str, dict[str, int | bool | str]] = {}
    for name, spec in LIMITS.items():
        row = db.session.get(PlatformSetting, name)
        default = int(current_app.config[spec.config_key])
        out[name] = {"value": row.value if row else default, "default": default, "set": row is not None,
                     "minimum": spec.minimum, "maximum": spec.maximum, "help": spec.help}
    return out


def set_limit(name: str, value: int | None, user_id: int | None) -> None:
    """Set a platform limit; None goes back to the config default."""
    spec = LIMITS[name]
    row = db.session.get(PlatformSetting, name)
    if value is None:
        if row is not None:
            db.session.delete(row)
            db.session.flush()
        return
    if not spec.minimum <= value <= spec.maximum:
        raise FieldError(name, f"must be between {spec.minimum} and {spec.maximum}")
    if row is None:
        row = PlatformSetting(name=name, value=value)
        db.session.add(row)
    row.value, row.updated_by_id, row.updated_at = value, user_id, utcnow()


def shortest_interval(schedule: str, at_least: int) -> int | None:
    """The shortest time in seconds between two fire times of the expression, looked for over its
    next SCAN_FIRES fire times, stopping at the first gap under at_least (so then a gap under at_least,
    not always the shortest); None if it never fires."""
    fires = croniter(schedule, dt.datetime(2025, 1, 1, tzinfo=dt.UTC))
    shortest: float | None = None
    try:
        previous = fires.get_next(float)
        for _ in range(SCAN_FIRES):
            current = fires.get_next(float)
            gap = current - previous
            shortest = gap if shortest is None else min(shortest, gap)
            if shortest < at_least:
                break
            previous = current
    except CroniterBadDateError:
        return None if shortest is None else int(shortest)
    return int(shortest) if shortest is not None else None


def check_schedule(schedule: str | None, previous: str | None = None, field: str = "schedule") -> None:
    """A new or changed schedule must be one the platform allows: five cron fields (or six, seconds
    last: croniter's order), never firing more often than the minimum schedule interval. FieldError
    naming field, with the limit, otherwise. Every writer of pipeline settings calls it (the API, YAML
    apply, clone); an unchanged schedule stays, so lowering the limit later breaks no saved pipeline."""
    if schedule is None or schedule == previous:
        return
    if not croniter.is_valid(schedule):
        raise FieldError(field, f"{schedule!r} is not a cron expression (e.g. '0 2 * * *')")
    parts = schedule.split()
    if not schedule.startswith("@") and len(parts) not in (5, 6):
        raise FieldError(field, "five fields (minute hour day month weekday), or six with seconds last")
    minimum = limit("min_schedule_interval")
    if len(parts) == 5 and minimum <= 60:
        return  # five fields fire at most once a minute
    shortest = shortest_interval(schedule, minimum)
    if shortest is None:
        raise FieldError(field, f"{schedule!r} never fires")
    if shortest < minimum:
        raise FieldError(field, f"fires twice within {shortest} s; the platform's minimum schedule interval is "
                                f"{minimum} s (min_schedule_interval)")


def wake_unfinished(project_id: int | None = None) -> None:
    """Runs that may have waited on a limit or a disabled cluster get their next look now (beat's next
    tick requests them) instead of at their idle recheck."""
    where: sa.ColumnElement[bool] = PipelineRun.state.in_([RunState.QUEUED, RunState.RUNNING])
    if project_id is not None:
        where = sa.and_(where, PipelineRun.project_id == project_id)
    db.session.execute(sa.update(PipelineRun).where(where).values(next_reconcile_at=utcnow())
                       .execution_options(synchronize_session=False))


# ---- disabled clusters ------------------------------------------------------------------------
def disabled_cluster(task_ids: Iterable[int]) -> str | None:
    """The name of a disabled cluster one of these tasks runs on (through its resource group), or None."""
    return db.session.scalar(
        sa.select(Cluster.name).join(ResourceGroup, ResourceGroup.cluster_id == Cluster.id)
        .join(Task, Task.resource_group_id == ResourceGroup.id)
        .where(Task.id.in_(list(task_ids)), Cluster.enabled.is_(False)).order_by(Cluster.name).limit(1))


def run_task_ids(run: PipelineRun) -> list[int]:
    if run.only_task_id:
        return [run.only_task_id]
    return list(db.session.scalars(sa.select(Task.id).where(Task.pipeline_id == run.pipeline_id)))


# ---- the project's limit of running runs ----------------------------------------------------------
def project_full(run: PipelineRun) -> str | None:
    """Why the run may not start now under its project's max_running_runs, or None.

    Locks the project row first (PostgreSQL; SQLite has one writer anyway), so two workers admitting
    runs of one project count one after the other. Callers take it after every run-row lock they need:
    a holder of the project lock waits for nothing else, so no lock cycle."""
    project = db.session.get(Project, run.project_id)
    if project.max_running_runs is None:
        return None
    db.session.execute(sa.select(Project.id).where(Project.id == project.id).with_for_update())
    running = db.session.scalar(sa.select(sa.func.count()).select_from(PipelineRun).where(
        PipelineRun.project_id == project.id, PipelineRun.state == RunState.RUNNING, PipelineRun.id != run.id))
    if running < project.max_running_runs:
        return None
    return (f"waiting: project {project.name} runs at most {project.max_running_runs} at once "
            f"(max_running_runs, set by an admin)")


def latest_fire_time(schedule: str, now: dt.datetime) -> dt.datetime:
    """The most recent time at or before now that the cron expression fires."""
    return croniter(schedule, now + dt.timedelta(seconds=1)).get_prev(dt.datetime)


def _insert_run(pipeline: Pipeline, run_key: str, trigger: RunTrigger, logical_date: dt.date) -> int | None:
    """Insert in a savepoint; a duplicate key means the run exists already (returns None), and so does a
    project over its storage cap (myapp/projects/caps.py: the run is not made, the reason logged)."""
    try:
        with db.session.begin_nested():
            run = PipelineRun(project_id=pipeline.project_id, pipeline_id=pipeline.id, run_key=run_key,
                              trigger=trigger, logical_date=logical_date)
            db.session.add(run)
        return run.id
    except IntegrityError:
        return None
    except DomainError as exc:
        log.warning("pipeline %s: no %s run: %s", pipeline.id, trigger.value, exc.message)
        return None


def schedule_due(now: dt.datetime) -> list[int]:
    """Create the run of each scheduled, unpaused pipeline's latest fire time (no catch-up of
    older missed times: backfill is for that). Returns the ids of the runs created."""
    created = []
    pipelines = db.session.scalars(sa.select(Pipeline).where(Pipeline.schedule.is_not(None),
                                                              Pipeline.paused.is_(False))).all()
    for pipeline in pipelines:
        fire = latest_fire_time(pipeline.schedule, now)
        since = pipeline.created_at if pipeline.created_at.tzinfo else pipeline.created_at.replace(tzinfo=dt.UTC)
        if fire < since:
            continue  # never fire for times before the pipeline existed
        run_id = _insert_run(pipeline, f"scheduled-{fire.isoformat()}", RunTrigger.SCHEDULE, fire.date())
        if run_id:
            created.append(run_id)
    db.session.commit()
    return created


def backfill(pipeline: Pipeline, start: dt.date, end: dt.date) -> list[int]:
    """One run per date from start to end inclusive, each with its own ds; the pipeline's
    max_active_runs limits how many run at once (the rest wait, in date order)."""
    if end < start:
        raise FieldError("end", "must not be before start")
    days = (end - start).days + 1
    most = limit("max_backfill_days")
    if days > most:
        raise FieldError("end", f"a backfill spans at most {most} days (max_backfill_days; asked for {days})")
    created = []
    for offset in range(days):
        day = start + dt.timedelta(days=offset)
        run_id = _insert_run(pipeline, f"backfill-{day.isoformat()}", RunTrigger.BACKFILL, day)
        if run_id:
            created.append(run_id)
    return created


def admission(run: PipelineRun, pipeline: Pipeline) -> tuple[str, list[int]]:
    """May this queued run start? ("start" | "wait" | "skip", ids of runs to cancel first).

    Runs start in id order: a queued run waits behind older queued runs of its pipeline.
    Debug runs of one task are a developer trying something: they never wait. A trial of an experiment
    waits for its experiment's parallel_trials (myapp/experiments), not the pipeline's max_active_runs;
    the project's limits and admission to resource groups apply to it like to any run.
    """
    if run.trigger == RunTrigger.DEBUG or run.experiment_id is not None:
        return "start", []
    running = db.session.scalars(sa.select(PipelineRun.id).where(
        PipelineRun.pipeline_id == pipeline.id, PipelineRun.state == RunState.RUNNING,
        PipelineRun.id != run.id)).all()
    older_queued = db.session.scalar(sa.select(sa.func.count()).select_from(PipelineRun).where(
        PipelineRun.pipeline_id == pipeline.id, PipelineRun.state == RunState.QUEUED, PipelineRun.id < run.id))
    if len(running) + older_queued < pipeline.max_active_runs:
        return "start", []
    if pipeline.concurrency_policy == ConcurrencyPolicy.SKIP and run.trigger == RunTrigger.SCHEDULE:
        return "skip", []
    if pipeline.concurrency_policy == ConcurrencyPolicy.CANCEL and run.trigger == RunTrigger.SCHEDULE:
        return "start", running
    return "wait", []
