"""What a preemption costs a job that checkpoints, read where its checkpoints are: when its newest complete
checkpoint was saved (admission stops the cheapest borrowers first: `Running.lost_at`) and, once stopped,
where its next attempt resumes, said on the attempt ("preempted for project X's quota; resumes from epoch
6"). A backend that cannot read a task's checkpoint folder (`last_checkpoint`) leaves the time unknown:
then the whole run counts as lost, as for a job that does not checkpoint."""
from __future__ import annotations

import dataclasses
import datetime as dt
from typing import Any

import sqlalchemy as sa

from ..backends import Backend
from ..extensions import db
from ..models import JobTemplate, Project, Task, TaskRun
from ..outputs import live
from ..outputs.checkpoints import SWITCH_ARG, task_dir
from .group_state import Entry, Snapshot, aware
from .usage import Amount


def newest(backend: Backend, entry: Entry) -> dict[str, Any] | None:
    """The newest complete checkpoint's manifest of the entry's task in its run (step, unit, saved_at), or None:
    read in the folder (the local backend) or as last read off the claim by a reader pod (Kubernetes)."""
    if not entry.checkpoints or not entry.task_name:
        return None
    relative = task_dir(entry.run_id, entry.task_name)
    read = getattr(backend, "last_checkpoint", None)
    if read is not None:
        return read(entry.namespace, relative)
    if isinstance(backend, live.CheckpointReader):
        return live.last_checkpoint(entry.namespace, entry.attempt_id, relative, backend)
    return None


def with_checkpoint_times(snap: Snapshot, backend: Backend) -> None:
    """Each running attempt that checkpoints and may be preempted, its project borrowing (only borrowers give
    room back: myapp/scheduler/steps.py), gets the time of its newest complete checkpoint."""
    if snap.ledger is None:  # only a quota's reclaim weighs what a preemption loses
        return
    for index, running in enumerate(snap.running):
        entry = snap.entries.get(running.job.id)
        if entry is None or not entry.checkpoints or not snap.ledger.borrowing(running.job.project):
            continue
        manifest = newest(backend, entry)
        if manifest is not None:
            entry.checkpointed = float(manifest["saved_at"])
            snap.running[index] = dataclasses.replace(running, checkpointed=entry.checkpointed)


def resumes(backend: Backend | None, entry: Entry, started: dt.datetime | None, now: dt.datetime) -> str:
    """Where the stopped attempt's task starts again, and the work lost: "resumes from epoch 6 (12 s of work
    since that checkpoint lost)", "starts over (no checkpoint yet; 40 s of work lost)". Locally the folder is read
    once the stopped job has ended (the local cancel waits for it), so what it saved on SIGTERM (myapp.checkpoint
    Stop) is the checkpoint named. A claim's answer was read before the stop (a reader pod, at most
    MYAPP_CLAIM_CHECKPOINT_SECONDS old) while the job may still save on SIGTERM: "resumes from epoch 6, or from
    the checkpoint it saves on the stop (at most 12 s of work since epoch 6 lost)"."""
    manifest = newest(backend, entry) if backend is not None else None
    begun = aware(started).timestamp() if started is not None else now.timestamp()
    stop_unseen = entry.checkpoints and isinstance(backend, live.CheckpointReader) \
        and getattr(backend, "last_checkpoint", None) is None
    if manifest is None:
        lost = max(now.timestamp() - begun, 0.0)
        if stop_unseen:
            return f"starts over unless it saves a checkpoint on the stop (none read yet; at most {lost:.0f} s of " \
                   f"work lost)"
        why = "no checkpoint yet" if entry.checkpoints else "it keeps no checkpoints"
        return f"starts over ({why}; {lost:.0f} s of work lost)"
    lost = max(now.timestamp() - max(float(manifest["saved_at"]), begun), 0.0)
    kept = f"{manifest['unit']} {manifest['step']}"
    if stop_unseen:
        return f"resumes from {kept}, or from the checkpoint it saves on the stop (at most {lost:.0f} s of work " \
               f"since {kept} lost)"
    return f"resumes from {kept} ({lost:.0f} s of work since that checkpoint lost)"


def resumes_after_stop(attempt_id: int, backend: Backend) -> str | None:
    """Where a preempted attempt's task starts again, read once its job has stopped (the save it made at the
    stop counts): "resumes from epoch 7 (0 s of work since that checkpoint lost)"; None if the row is gone."""
    row = db.session.execute(
        sa.select(TaskRun, Task.name, Task.args, JobTemplate.checkpoints, Project.namespace)
        .join(Task, Task.id == TaskRun.task_id).join(JobTemplate, JobTemplate.id == Task.template_id)
        .join(Project, Project.id == TaskRun.project_id).where(TaskRun.id == attempt_id)).first()
    if row is None:
        return None
    attempt, name, args, checkpoints, namespace = row
    entry = Entry(attempt.id, attempt.pipeline_run_id, attempt.project_id, attempt.task_id, attempt.state, Amount(),
                  attempt.created_at, attempt.started_at, None, attempt.preemptions,
                  bool(checkpoints) and (args or {}).get(SWITCH_ARG, True) is not False, name, namespace)
    stopped = aware(attempt.preempted_at or attempt.finished_at or attempt.created_at)
    return resumes(backend, entry, attempt.started_at, stopped)
