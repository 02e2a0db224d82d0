"""Helpers of the pipeline tests: a pipeline and its run written straight to the database, the run
controller driven pass by pass, and the attempts it left."""
from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from tests.support import unique


def make_pipeline(app, template_id, tasks, edges, project_id=None, **pipeline_kw):
    """tasks: {name: {field: value}}, where a "template" field names a catalog template (else
    template_id); edges: [(up, down)]; a new project unless project_id is given -> (run_id, {name: task_id})."""
    from myapp.extensions import db
    from myapp.models import Edge, JobTemplate, Pipeline, PipelineRun, Project, Task

    with app.app_context():
        project = db.session.get(Project, project_id) if project_id else Project(name=unique("p"),
                                                                                   namespace=unique("ns"))
        db.session.add(project)
        db.session.flush()
        pipeline = Pipeline(project_id=project.id, **({"name": "pipe"} | pipeline_kw))
        db.session.add(pipeline)
        db.session.flush()
        ids = {}
        for name, fields in tasks.items():
            fields = dict(fields)
            template = fields.pop("template", None)
            task = Task(project_id=project.id, pipeline_id=pipeline.id, name=name,
                        template_id=db.session.scalar(sa.select(JobTemplate.id).filter_by(name=template))
                        if template else template_id,
                        **({"retry_delay": 0} | fields))
            db.session.add(task)
            db.session.flush()
            ids[name] = task.id
        for up, down in edges:
            db.session.add(Edge(project_id=project.id, pipeline_id=pipeline.id,
                                upstream_task_id=ids[up], downstream_task_id=ids[down]))
        run = PipelineRun(project_id=project.id, pipeline_id=pipeline.id, run_key=unique("k"),
                          logical_date=dt.date(2026, 11, 20))
        db.session.add(run)
        db.session.commit()
        return run.id, ids


def drive(app, backend, run_id, passes=30):
    from myapp.pipelines.controller import RunController

    controller = RunController(lambda task: backend)
    with app.app_context():
        for _ in range(passes):
            state = controller.reconcile(run_id)
            if state.value in ("succeeded", "failed", "cancelled"):
                return state.value
    return state.value


def task_states(app, run_id):
    from myapp.extensions import db
    from myapp.models import Task, TaskRun

    with app.app_context():
        rows = db.session.execute(sa.select(Task.name, TaskRun.attempt, TaskRun.state).join(Task)
                                  .where(TaskRun.pipeline_run_id == run_id).order_by(TaskRun.id)).all()
        return [(n, a, s.value) for n, a, s in rows]
