"""Experiments (hyperparameter search over a pipeline's parameters) and their trials, read-only (the
experiment driver writes them: myapp/experiments/driver.py). Each trial is an ordinary pipeline run."""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from flask import jsonify
from marshmallow import fields, validate

from ..experiments import driver, importances, space
from ..experiments import spec as experiment_spec
from ..experiments.requests import LOOK
from ..extensions import db
from ..inputs.fields import StrictSchema
from ..models import Experiment, ExperimentState, Pipeline, PipelineRun, ProjectRole, Trial, utcnow
from ..pipelines.spec import find_project, unknown_project
from . import pipelines as pipeline_api  # its enqueue, called through the module (tests replace it)
from .base import ResourceApi
from .errors import ApiError, domain_error
from .responses import INTEGER, MESSAGE, NUMBER, STRING, array, component, nullable, obj
from .routing import json_body, on_commit, route
from .rows import column_names
from .scope import check_project, current_user

# What the driver keeps for itself: the sampler's state and its own bookkeeping.
HIDDEN = ("sampler_state", "look_requested_at", "looked_at", "next_look_at")


IMPORTANCES = component("ParamImportances", obj({
    "importances": array(obj({"name": STRING, "importance": NUMBER})),
    "complete": INTEGER,
    "reason": nullable(STRING),
}))


class ExperimentYamlSchema(StrictSchema):
    yaml = fields.String(required=True, validate=validate.Length(1, 1_000_000))


def _start_looking(experiment_id: int) -> None:
    on_commit(lambda: pipeline_api.enqueue(LOOK, experiment_id))


class ExperimentApi(ResourceApi):
    resource_name = "experiment"
    class_permission_name = "Experiment"
    model = Experiment
    schema = space.ExperimentSchema
    label = "experiment"
    parent = ("pipeline_id", Pipeline)
    filters = ("project_id", "pipeline_id", "state", "name")
    orders = ("id", "name", "created_at")
    exclude_route_methods = {"put"}
    columns = tuple(c for c in column_names(Experiment) if c not in HIDDEN)

    def create(self, data: dict[str, Any]) -> Any:
        begin = data.pop("start", True)
        data.setdefault("description", "")
        experiment = super().create(data)
        if begin:
            driver.start(experiment, utcnow())
            _start_looking(experiment.id)
        return experiment

    def before_save(self, obj: Experiment, data: dict, creating: bool) -> None:
        obj.created_by_id = current_user().id
        space.check(data, db.session.get(Pipeline, obj.pipeline_id).parameters or {})

    def before_delete(self, obj: Experiment) -> None:
        if obj.state == ExperimentState.RUNNING:
            raise ApiError(f"experiment {obj.id} is running; cancel it before deleting", status=409)
        db.session.execute(sa.update(PipelineRun).where(PipelineRun.experiment_id == obj.id)
                           .values(experiment_id=None, trial_number=None))

    @route("/<int:pk>/start", methods=("POST",), permission="write",
           summary="Start an experiment not started yet (one running already is left as it is)", response="model")
    def start(self, pk: int):
        experiment = self.load(pk, ProjectRole.DEVELOPER)
        if experiment.is_finished:
            raise ApiError(f"experiment {pk} has {experiment.state.value}; apply it under a new name to search again",
                           status=409)
        if experiment.state == ExperimentState.CREATED:
            driver.start(experiment, utcnow())
            _start_looking(pk)
        return jsonify(self.present(experiment))

    @route("/<int:pk>/cancel", methods=("POST",), permission="write", status=202,
           summary="Cancel the experiment: it ends and every running trial's run is cancelled", response=MESSAGE)
    def cancel(self, pk: int):
        experiment = self.load(pk, ProjectRole.DEVELOPER)
        if experiment.is_finished:
            raise ApiError(f"experiment {pk} already {experiment.state.value}", status=409)
        on_commit(lambda: pipeline_api.enqueue("myapp.cancel_experiment", pk, "cancelled by user"))
        return jsonify(message=f"cancelling experiment {pk}"), 202

    @route("/<int:pk>/importances", response=IMPORTANCES,
           summary="Each searched parameter's importance to the first objective (Optuna's fANOVA over the "
                   "complete trials), or why there is none yet")
    def importances(self, pk: int):
        return jsonify(importances.of_experiment(self.load(pk)))

    @route("/import", methods=("POST",), permission="write", body=ExperimentYamlSchema,
           summary="Create an experiment from YAML, or replace the settings of one not started yet",
           response="model")
    def import_yaml(self):
        text = ExperimentYamlSchema().load(json_body())["yaml"]
        parsed = experiment_spec.parse(text)
        project = find_project(parsed["project"])
        check_project(project.id, ProjectRole.DEVELOPER, domain_error(unknown_project(project.name)))
        pipeline = experiment_spec.find_pipeline(project, parsed["pipeline"])
        experiment = experiment_spec.apply(parsed, pipeline, current_user().id)
        return jsonify(self.present(experiment))


class TrialApi(ResourceApi):
    resource_name = "trial"
    class_permission_name = "Trial"
    model = Trial
    label = "trial"
    parent = ("experiment_id", Experiment)
    filters = ("project_id", "experiment_id", "state", "number")
    orders = ("id", "number")
    include_route_methods = {"get_list", "get"}
    columns = tuple(c for c in column_names(Trial) if c != "system_attrs")
