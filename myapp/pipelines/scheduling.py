"""Cron schedules, backfills and run policies.

Run keys make both idempotent: one run per pipeline and fire time ("scheduled-<time>") or
date ("backfill-<date>"), enforced by the unique (pipeline_id, run_key) constraint, so a
beat that fires twice or a repeated request creates nothing new.
"""
from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from croniter import croniter
from sqlalchemy.exc import IntegrityError

from ..errors import FieldError
from ..extensions import db
from ..models import ConcurrencyPolicy, Pipeline, PipelineRun, RunState, RunTrigger

MAX_BACKFILL_DAYS = 366


def latest_fire_time(schedule: str, now: dt.datetime) -> dt.datetime:
    """The most recent time at or before now that the cron expression fires."""
    return croniter(schedule, now + dt.timedelta(seconds=1)).get_prev(dt.datetime)


def _insert_run(pipeline: Pipeline, run_key: str, trigger: RunTrigger, logical_date: dt.date) -> int | None:
    """Insert in a savepoint; a duplicate key means the run exists already (returns None)."""
    try:
        with db.session.begin_nested():
            run = PipelineRun(project_id=pipeline.project_id, pipeline_id=pipeline.id, run_key=run_key,
                              trigger=trigger, logical_date=logical_date)
            db.session.add(run)
        return run.id
    except IntegrityError:
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
    if days > MAX_BACKFILL_DAYS:
        raise FieldError("end", f"a backfill spans at most {MAX_BACKFILL_DAYS} days (asked for {days})")
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
    Debug runs of one task are a developer trying something: they never wait.
    """
    if run.trigger == RunTrigger.DEBUG:
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
