"""Output references between a pipeline's tasks, against the rows: checked at save, resolved at run time.

``{{ tasks.<name>.outputs.<key> }}`` in a task's arguments must name a task of the same pipeline
that runs before it (an ancestor through the edges) and declares that key (myapp/outputs/declarations.py). At run
time it becomes the absolute path of the output in the upstream attempt that succeeded.
"""
from __future__ import annotations

from collections.abc import Mapping

import sqlalchemy as sa

from ..errors import FieldError
from ..extensions import db
from ..models import Edge, JobTemplate, PipelineRun, Task, TaskRun, TaskState
from .declarations import OUTPUTS_KEY, container_path, references, task_outputs


def declared(task: Task, templates: Mapping[int, JobTemplate] | None = None) -> dict[str, str]:
    """Output key -> relative path the task declares."""
    template = (templates or {}).get(task.template_id) or db.session.get(JobTemplate, task.template_id)
    return task_outputs((template.args_schema or {}).get(OUTPUTS_KEY) if template else None, task.args)


def _ancestors(pipeline_id: int) -> dict[int, set[int]]:
    parents: dict[int, set[int]] = {}
    for up, down in db.session.execute(sa.select(Edge.upstream_task_id, Edge.downstream_task_id)
                                       .where(Edge.pipeline_id == pipeline_id)):
        parents.setdefault(down, set()).add(up)
    out: dict[int, set[int]] = {}

    def walk(task_id: int, seen: set[int]) -> set[int]:
        if task_id in out:
            return out[task_id]
        found: set[int] = set()
        for parent in parents.get(task_id, ()):
            if parent not in seen:
                found |= {parent} | walk(parent, seen | {parent})
        out[task_id] = found
        return found

    for task_id in list(parents):
        walk(task_id, {task_id})
    return out


def check_references(pipeline_id: int, labels: Mapping[int, str] | None = None) -> None:
    """Every output reference in the pipeline's tasks is to an upstream task declaring the key.

    labels: task id -> how the caller names it in errors ("tasks[2]"); FieldError("tasks[2].args.x", ...)."""
    tasks = db.session.scalars(sa.select(Task).where(Task.pipeline_id == pipeline_id).order_by(Task.id)).all()
    by_name = {t.name: t for t in tasks}
    templates = {t.id: t for t in db.session.scalars(
        sa.select(JobTemplate).where(JobTemplate.id.in_({t.template_id for t in tasks})))}
    ancestors = _ancestors(pipeline_id)
    for task in tasks:
        prefix = f"{labels[task.id]}." if labels and task.id in labels else ""
        for field, name, key in references(task.args or {}):
            upstream = by_name.get(name)
            if upstream is None:
                raise FieldError(f"{prefix}{field}", f"no task named {name!r} in this pipeline")
            if upstream.id not in ancestors.get(task.id, set()):
                raise FieldError(f"{prefix}{field}",
                                 f"task {name!r} is not upstream of {task.name!r}: add an edge {name} → {task.name}")
            keys = declared(upstream, templates)
            if key not in keys:
                known = ", ".join(sorted(keys)) or "none"
                raise FieldError(f"{prefix}{field}", f"task {name!r} declares no output {key!r} (its outputs: {known})")


def upstream_paths(run: PipelineRun) -> dict[tuple[str, str], str]:
    """(task name, key) -> the output's absolute path in the job, for every task of the run that succeeded."""
    rows = db.session.execute(
        sa.select(Task, TaskRun.output_dir).join(TaskRun, TaskRun.task_id == Task.id)
        .where(TaskRun.pipeline_run_id == run.id, TaskRun.state == TaskState.SUCCEEDED,
               TaskRun.output_dir.is_not(None))).all()
    out: dict[tuple[str, str], str] = {}
    for task, output_dir in rows:
        for key, path in declared(task).items():
            out[(task.name, key)] = container_path(output_dir, path)
    return out
