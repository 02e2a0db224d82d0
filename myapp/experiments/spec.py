"""Experiments as YAML (`myapp experiment apply FILE`, `POST /api/v1/experiment/import`): the API's
settings, with the project and the pipeline by name.

    name: digits-search
    project: demo
    pipeline: digits
    objectives: [{metric: val_accuracy, direction: maximize}]
    algorithm: tpe
    search_space:
      - {name: lr, type: float, low: 0.001, high: 0.5, log: true}
      - {name: epochs, type: int, low: 2, high: 12}
    max_trials: 12
    parallel_trials: 2
    early_stopping: {kind: median}
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from marshmallow import ValidationError

from ..errors import DomainError, FieldError, Kind, flatten_messages
from ..extensions import db
from ..inputs.fields import DnsLabel
from ..models import Experiment, ExperimentState, Pipeline, Project
from ..pipelines.spec import load_yaml
from .space import ExperimentSettingsSchema, check


class ExperimentSpecSchema(ExperimentSettingsSchema):
    name = DnsLabel(required=True)
    project = DnsLabel(required=True)
    pipeline = DnsLabel(required=True)


SETTINGS = tuple(name for name in ExperimentSettingsSchema().fields)


def parse(text: str) -> dict[str, Any]:
    raw = load_yaml(text)
    if not isinstance(raw, dict):
        raise FieldError("yaml", "must be a mapping with name, project, pipeline, search_space and objectives")
    try:
        return ExperimentSpecSchema().load(raw)
    except ValidationError as exc:
        errors = flatten_messages(exc.messages)
        raise DomainError("; ".join(f"{e['field']}: {e['reason']}" for e in errors), errors) from None


def find_pipeline(project: Project, name: str) -> Pipeline:
    pipeline = db.session.scalar(sa.select(Pipeline).filter_by(project_id=project.id, name=name))
    if pipeline is None:
        raise FieldError("pipeline", f"no pipeline named {name!r} in project {project.name}", Kind.NOT_FOUND)
    return pipeline


def settings_of(spec: dict[str, Any]) -> dict[str, Any]:
    return {key: spec[key] for key in SETTINGS if key in spec}


def apply(spec: dict[str, Any], pipeline: Pipeline, user_id: int | None) -> Experiment:
    """Create the experiment, or replace the settings of one not started yet (the caller commits)."""
    settings = settings_of(spec)
    check(settings, pipeline.parameters or {})
    experiment = db.session.scalar(sa.select(Experiment).filter_by(project_id=pipeline.project_id, name=spec["name"]))
    if experiment is None:
        experiment = Experiment(project_id=pipeline.project_id, name=spec["name"], created_by_id=user_id)
        db.session.add(experiment)
    elif experiment.state != ExperimentState.CREATED:
        raise FieldError("name", f"experiment {spec['name']!r} has already run ({experiment.state.value}); its "
                                 "trials stay as they are: apply it under a new name", Kind.CONFLICT)
    defaults = ExperimentSettingsSchema().load({"search_space": settings["search_space"],
                                                 "objectives": settings["objectives"]})
    experiment.pipeline_id = pipeline.id
    for key in SETTINGS:
        setattr(experiment, key, settings.get(key, defaults.get(key)))
    experiment.description = experiment.description or ""
    db.session.flush()
    return experiment


def export(experiment: Experiment) -> dict[str, Any]:
    pipeline = db.session.get(Pipeline, experiment.pipeline_id)
    project = db.session.get(Project, experiment.project_id)
    out: dict[str, Any] = {"name": experiment.name, "project": project.name, "pipeline": pipeline.name}
    for key in SETTINGS:
        value = getattr(experiment, key)
        if value is not None and value != "":
            out[key] = value
    return out
