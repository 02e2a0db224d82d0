"""Clone: a copy of a pipeline's rows (settings, every task with every field, edges) under a new name."""
from __future__ import annotations

import sqlalchemy as sa

from ..errors import FieldError, Kind
from ..extensions import db
from ..models import Edge, Pipeline, Task
from .scheduling import check_schedule
from .tasks import check_webhook, pipeline_values, save_task, task_values


def clone_pipeline(source: Pipeline, name: str, user_id: int | None, paused: bool = True) -> Pipeline:
    """The copy starts paused unless asked otherwise, so a schedule does not fire twice by surprise."""
    if db.session.scalar(sa.select(Pipeline.id).filter_by(project_id=source.project_id, name=name)) is not None:
        raise FieldError("name", f"already exists (name={name!r})", Kind.CONFLICT)
    pipeline = Pipeline(project_id=source.project_id, name=name, created_by_id=user_id,
                        **pipeline_values(source) | {"paused": paused})
    check_webhook(pipeline, None)  # the URL checked again (the rules may have changed); a secret of its own
    check_schedule(pipeline.schedule)  # so is the schedule (the admin's minimum interval may have risen)
    db.session.add(pipeline)
    db.session.flush()
    new_ids: dict[int, int] = {}
    tasks = db.session.scalars(sa.select(Task).filter_by(pipeline_id=source.id).order_by(Task.id)).all()
    for index, task in enumerate(tasks):
        new_ids[task.id] = save_task(pipeline, task_values(task), prefix=f"tasks[{index}].").id
    for edge in db.session.scalars(sa.select(Edge).filter_by(pipeline_id=source.id).order_by(Edge.id)):
        db.session.add(Edge(project_id=pipeline.project_id, pipeline_id=pipeline.id,
                            upstream_task_id=new_ids[edge.upstream_task_id],
                            downstream_task_id=new_ids[edge.downstream_task_id]))
    db.session.flush()
    return pipeline
