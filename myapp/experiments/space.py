"""What an experiment asks for, checked: the search space over the pipeline's parameters, the objectives,
the algorithm, early stopping and the budget. Shape errors come from the schemas (marshmallow names the
field), the rest from ``check`` as FieldError naming ``search_space[i].high``, ``algorithm``, ..."""
from __future__ import annotations

import math
from typing import Any

from marshmallow import fields, validate

from ..errors import FieldError
from ..inputs.fields import DnsLabel, Int, StrictSchema

ALGORITHMS = ("tpe", "random", "cmaes", "grid", "qmc", "nsga2")
SINGLE_OBJECTIVE = frozenset({"cmaes"})  # optimise one objective only
PRUNERS = ("median", "successive_halving", "hyperband")
PARAMETER_TYPES = ("float", "int", "categorical")
MAX_GRID = 10_000  # points a grid search may enumerate
Plain = (str, int, float, bool)


class ParameterSchema(StrictSchema):
    name = fields.String(required=True, validate=validate.Regexp(r"^[A-Za-z_][A-Za-z0-9_]{0,62}$"))
    type = fields.String(required=True, validate=validate.OneOf(PARAMETER_TYPES))
    low = fields.Float(allow_nan=False)
    high = fields.Float(allow_nan=False)
    log = fields.Boolean(load_default=False)
    step = fields.Float(allow_nan=False)
    choices = fields.List(fields.Raw(), validate=validate.Length(1, 1000))


class ObjectiveSchema(StrictSchema):
    metric = fields.String(required=True, validate=validate.Length(1, 128))
    direction = fields.String(load_default="minimize", validate=validate.OneOf(("minimize", "maximize")))


class EarlyStoppingSchema(StrictSchema):
    kind = fields.String(required=True, validate=validate.OneOf(PRUNERS))
    startup_trials = Int(0, 1000, load_default=3)  # median: trials finished before any is pruned
    warmup_steps = Int(0, 10**9, load_default=0)  # median: steps a trial runs before it may be pruned
    min_resource = Int(1, 10**9, load_default=1)  # successive halving, hyperband
    max_resource = Int(1, 10**9)  # hyperband: the steps of a whole trial (default: learned)
    reduction_factor = Int(2, 100, load_default=3)


class ExperimentSettingsSchema(StrictSchema):
    """Every setting of an experiment but its project and pipeline (the API and YAML name those)."""

    description = fields.String(validate=validate.Length(max=10_000))
    search_space = fields.List(fields.Nested(ParameterSchema), required=True, validate=validate.Length(1, 64))
    objectives = fields.List(fields.Nested(ObjectiveSchema), required=True, validate=validate.Length(1, 4))
    algorithm = fields.String(load_default="tpe", validate=validate.OneOf(ALGORITHMS))
    seed = Int(0, allow_none=True)
    early_stopping = fields.Nested(EarlyStoppingSchema, allow_none=True)
    max_trials = Int(1, 10_000, load_default=10)
    parallel_trials = Int(1, 100, load_default=1)
    max_failed_trials = Int(0, 10_000, load_default=3)
    time_limit_seconds = Int(1, 30 * 86400, allow_none=True)


class ExperimentSchema(ExperimentSettingsSchema):
    pipeline_id = Int(1, required=True)
    name = DnsLabel(required=True)
    start = fields.Boolean(load_default=True, metadata={"description": "start it at once (else: state created)"})


def check(settings: dict[str, Any], declared: dict[str, Any]) -> None:
    """The checks no schema can make; ``declared`` are the pipeline's parameters (name -> default)."""
    seen: set[str] = set()
    for index, spec in enumerate(settings["search_space"]):
        where = f"search_space[{index}]"
        name = spec["name"]
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise FieldError(f"{where}.name", f"the pipeline declares no parameter {name!r} (its parameters: {known})")
        if name in seen:
            raise FieldError(f"{where}.name", f"{name!r} is in the search space twice")
        seen.add(name)
        _check_parameter(spec, where)
        if settings.get("algorithm") == "grid":
            grid_values(spec, where)
    objectives = settings["objectives"]
    metrics = [o["metric"] for o in objectives]
    if len(set(metrics)) != len(metrics):
        raise FieldError("objectives", "each metric may be one objective only")
    algorithm = settings.get("algorithm", "tpe")
    if len(objectives) > 1 and algorithm in SINGLE_OBJECTIVE:
        raise FieldError("algorithm", f"{algorithm} optimises one objective; for several use nsga2, tpe or random")
    if algorithm == "nsga2" and len(objectives) < 2:
        raise FieldError("algorithm", "nsga2 is for several objectives; with one use tpe, cmaes or random")
    if settings.get("early_stopping") and len(objectives) > 1:
        raise FieldError("early_stopping", "early stopping needs a single objective (pruning compares one metric)")
    if algorithm == "grid":
        size = math.prod(len(grid_values(s, "")) for s in settings["search_space"])
        if size > MAX_GRID:
            raise FieldError("search_space", f"the grid has {size} points; at most {MAX_GRID}")


def _check_parameter(spec: dict[str, Any], where: str) -> None:
    kind = spec["type"]
    if kind == "categorical":
        for key in ("low", "high", "step"):
            if key in spec:
                raise FieldError(f"{where}.{key}", "a categorical parameter has choices, not bounds")
        choices = spec.get("choices")
        if not choices:
            raise FieldError(f"{where}.choices", "a categorical parameter needs choices")
        if not all(isinstance(c, Plain) for c in choices):
            raise FieldError(f"{where}.choices", "choices must be strings, numbers or booleans")
        if len({repr(c) for c in choices}) != len(choices):
            raise FieldError(f"{where}.choices", "choices must differ from each other")
        return
    if "choices" in spec:
        raise FieldError(f"{where}.choices", f"a {kind} parameter has bounds (low, high), not choices")
    for key in ("low", "high"):
        if key not in spec:
            raise FieldError(f"{where}.{key}", f"a {kind} parameter needs {key}")
    low, high = spec["low"], spec["high"]
    if kind == "int":
        for key in ("low", "high", "step"):
            if key in spec and spec[key] != int(spec[key]):
                raise FieldError(f"{where}.{key}", "must be a whole number for an int parameter")
    if not low < high:
        raise FieldError(f"{where}.high", f"must be greater than low ({_num(low)}); the bounds are the wrong way round"
                         if high < low else f"must be greater than low ({_num(low)})")
    if spec.get("log") and low <= 0:
        raise FieldError(f"{where}.low", "must be above 0 on a log scale")
    if "step" in spec:
        if spec["step"] <= 0:
            raise FieldError(f"{where}.step", "must be above 0")
        if spec.get("log"):
            raise FieldError(f"{where}.step", "a log-scale parameter takes no step")


def grid_values(spec: dict[str, Any], where: str) -> list[Any]:
    """The points a grid search tries for one parameter."""
    if spec["type"] == "categorical":
        return list(spec["choices"])
    low, high = spec["low"], spec["high"]
    if spec["type"] == "float" and "step" not in spec:
        raise FieldError(f"{where}.step", "grid search needs a step for a float parameter (or choices)")
    step = spec.get("step") or 1
    count = math.floor((high - low) / step + 1e-9) + 1  # counted before any point is made
    if count > MAX_GRID:
        raise FieldError(f"{where}.step", f"gives {count} points; at most {MAX_GRID}")
    if spec["type"] == "int":
        return list(range(int(low), int(high) + 1, int(step)))
    return [round(low + i * step, 12) for i in range(count)]


def _num(value: float) -> str:
    return f"{value:g}"
