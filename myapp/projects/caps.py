"""Caps per project: how many objects of each kind it holds, and how much its folders hold on this machine.

``MYAPP_PROJECT_MAX_OBJECTS`` (default 10,000; 0: no cap) bounds each kind a project's members create, per
project and per kind: pipelines, tasks, edges, notebooks, model versions, inference services and image builds.
The count is taken where every create path meets, the session's ``before_flush`` (the API, a YAML apply, a
clone, a graph save, the CLI in-process): a flush that would take a kind past the cap raises a conflict naming
the cap (409 at the API). Runs are history, not objects: a pipeline's ``max_active_runs`` bounds them at a time,
and the storage cap below stops new ones. Two creates racing at the cap may both pass (each counts before
the other commits): the cap is a bound against runaway scripts, not an exact quota.

``MYAPP_PROJECT_MAX_STORAGE_BYTES`` (default 100 GiB; 0: no cap) bounds what the project's data, outputs and
checkpoints folders take on the platform's disk (``MYAPP_HOME/jobs/{data,outputs,checkpoints}/<namespace>``,
local runs and notebooks; on Kubernetes the claims' sizes bound them): the allocated bytes of everything there,
walked by descriptor without following links (``myapp.fs``) and kept per web or worker process for
``STORAGE_TTL`` seconds, so a request pays a walk at most once a minute per project. Over the cap, a new run
is a conflict (409: checked in the same flush as the objects) and an upload is 413 (the room left bounds it).
"""
from __future__ import annotations

import collections
import logging
import stat
import threading
import time
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from flask import current_app, has_app_context

from ..errors import DomainError, Kind
from ..fs.beneath import Folder
from ..models import Edge, ImageBuild, InferenceService, ModelVersion, Notebook, Pipeline, PipelineRun, Project, Task

log = logging.getLogger(__name__)
CAPPED: dict[type, str] = {Pipeline: "pipelines", Task: "tasks", Edge: "edges", Notebook: "notebooks",
                           ModelVersion: "model versions", InferenceService: "inference services",
                           ImageBuild: "image builds"}
OBJECTS = "MYAPP_PROJECT_MAX_OBJECTS"
STORAGE = "MYAPP_PROJECT_MAX_STORAGE_BYTES"
STORAGE_TTL = 60.0  # seconds a project's measured storage is kept per process
FOLDERS = ("data", "outputs", "checkpoints")  # under the local backend's work folder, one per project each

_measured: dict[str, tuple[float, int]] = {}
_locks: collections.defaultdict[str, threading.Lock] = collections.defaultdict(threading.Lock)


def install(session: Any) -> None:
    sa.event.listen(session, "before_flush", _before_flush)


def _before_flush(session: Any, _context: Any, _instances: Any) -> None:
    if not has_app_context():
        return
    new: collections.Counter[tuple[type, int]] = collections.Counter()
    runs: set[int] = set()
    for obj in session.new:
        if type(obj) in CAPPED and obj.project_id is not None:
            new[(type(obj), obj.project_id)] += 1
        elif isinstance(obj, PipelineRun) and obj.project_id is not None:
            runs.add(obj.project_id)
    if not new and not runs:
        return
    with session.no_autoflush:
        cap = int(current_app.config.get(OBJECTS) or 0)
        for (model, project_id), adding in new.items() if cap else ():
            column: Any = model.project_id  # type: ignore[attr-defined]  # every CAPPED model has one
            held = session.scalar(sa.select(sa.func.count()).select_from(model).where(column == project_id))
            if held + adding > cap:
                raise _over(session, project_id, f"holds {held} {CAPPED[model]}: at most {cap} per project ({OBJECTS})")
        for project_id in runs:
            check_storage(session.get(Project, project_id))


def _over(session: Any, project_id: int, what: str) -> DomainError:
    project = session.get(Project, project_id)
    reason = f"project {project.name if project else project_id} {what}"
    return DomainError(reason, [{"field": "project_id", "reason": reason}], kind=Kind.CONFLICT)


def storage_cap() -> int:
    return int(current_app.config.get(STORAGE) or 0)


def check_storage(project: Project | None) -> None:
    """A conflict when the project's folders already hold more than the cap (a new run would add to them)."""
    cap = storage_cap()
    if project is None or not cap:
        return
    used = storage_used(project.namespace)
    if used > cap:
        reason = (f"project {project.name} holds {used} bytes in its data, outputs and checkpoints folders, over "
                  f"{STORAGE} ({cap}): delete some (outputs of old runs, files in the data folder) before starting "
                  "runs")
        raise DomainError(reason, [{"field": "project_id", "reason": reason}], kind=Kind.CONFLICT)


def storage_room(project: Project) -> int | None:
    """Bytes the project may still write (None: no cap); a 413-kind error naming ``file`` when none is left."""
    cap = storage_cap()
    if not cap:
        return None
    room = cap - storage_used(project.namespace)
    if room <= 0:
        reason = (f"project {project.name} holds its {STORAGE} ({cap} bytes) or more in its data, outputs and "
                  "checkpoints folders: delete some first")
        raise DomainError(f"file: {reason}", [{"field": "file", "reason": reason}], kind=Kind.TOO_LARGE)
    return room


def written(namespace: str, size: int) -> None:
    """What the platform itself just wrote there (an upload) counts at once, not at the next walk."""
    found = _measured.get(namespace)
    if found is not None:
        _measured[namespace] = (found[0], found[1] + size)


def storage_used(namespace: str) -> int:
    """The allocated bytes of the project's local data, outputs and checkpoints folders, measured at most once per
    STORAGE_TTL in this process (one walk at a time per project)."""
    with _locks[namespace]:
        found = _measured.get(namespace)
        if found is not None and time.monotonic() - found[0] < STORAGE_TTL:
            return found[1]
        from ..backends.registry import local_workdir

        total = sum(_folder_bytes(local_workdir() / folder / namespace) for folder in FOLDERS)
        _measured[namespace] = (time.monotonic(), total)
        return total


def forget() -> None:
    """Measure every project again at its next check (tests; an admin's cleanup)."""
    _measured.clear()


def _folder_bytes(path: Path) -> int:
    try:
        folder = Folder.open(path)
    except FileNotFoundError:
        return 0
    with folder:
        return sum(entry.stat.st_blocks * 512 for entry in folder.entries()
                   if stat.S_ISREG(entry.stat.st_mode) or stat.S_ISDIR(entry.stat.st_mode))
