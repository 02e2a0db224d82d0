"""Macros in task arguments ({{ ds }}, {{ run_id }}, ...): substituted as data, never evaluated.

Only the names below are recognised; anything else between braces stays literal text. Every macro is
documented in docs/macros.md (output references, ``{{ tasks.<name>.outputs.<key> }}``, are filled by
myapp/outputs/declarations.py the same way).
"""
from __future__ import annotations

import re
from typing import Any

from ..errors import FieldError

MACRO = re.compile(r"\{\{\s*(ds|ds_nodash|run_id|pipeline|project|task|params\.[A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


def substitute(value: Any, values: dict[str, str]) -> Any:
    """Replace known macros in every string inside value (dicts and lists walked)."""
    if isinstance(value, str):
        return MACRO.sub(lambda m: values.get(m.group(1), m.group(0)), value)
    if isinstance(value, dict):
        return {k: substitute(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, values) for v in value]
    return value


def macro_values(*, ds: str | None, run_id: str, pipeline: str, project: str, task: str,
                 params: dict[str, Any]) -> dict[str, str]:
    values = {"run_id": run_id, "pipeline": pipeline, "project": project, "task": task}
    if ds:
        values |= {"ds": ds, "ds_nodash": ds.replace("-", "")}
    values |= {f"params.{k}": str(v) for k, v in params.items()}
    return values


# Stand-ins used to validate arguments when a task is saved, before any run exists.
SAMPLE_VALUES = macro_values(ds="2000-01-01", run_id="1", pipeline="pipeline", project="project", task="task",
                             params={})


def check_run_params(pipeline: Any, params: dict[str, Any]) -> None:
    """A run's parameters: only those the pipeline declares (with their defaults), plain values.

    FieldError naming ``parameters.<name>``: a typo must not run with the default silently."""
    declared = pipeline.parameters or {}
    for name, value in params.items():
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise FieldError(f"parameters.{name}",
                             f"the pipeline declares no parameter {name!r} (its parameters: {known})")
        if value is not None and not isinstance(value, (str, int, float, bool)):
            raise FieldError(f"parameters.{name}", "must be a string, a number or a boolean")
