"""Macros in task arguments ({{ ds }}, {{ run_id }}, ...): substituted as data, never evaluated.

Only the names below are recognised; anything else between braces stays literal text. Every macro is
documented in docs/macros.md (output references, ``{{ tasks.<name>.outputs.<key> }}``, are filled by
myapp/outputs/declarations.py the same way).
"""
from __future__ import annotations

import math
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


def check_run_params(pipeline: Any, params: dict[str, Any]) -> dict[str, Any]:
    """A run's parameters: only those the pipeline declares (with their defaults), plain values; a value
    given as text for a parameter whose default is a number or a boolean (a form's field, a CLI argument)
    is stored as one, so runs compare alike however they were started. Returns the values to store.

    FieldError naming ``parameters.<name>``: a typo must not run with the default silently."""
    declared = pipeline.parameters or {}
    typed: dict[str, Any] = {}
    for name, value in params.items():
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise FieldError(f"parameters.{name}",
                             f"the pipeline declares no parameter {name!r} (its parameters: {known})")
        if value is not None and not isinstance(value, (str, int, float, bool)):
            raise FieldError(f"parameters.{name}", "must be a string, a number or a boolean")
        typed[name] = _like(declared[name], value, f"parameters.{name}")
    return typed


def _like(default: Any, value: Any, field: str) -> Any:
    """`value` read as its parameter's default's type when it is text and the default is not."""
    if not isinstance(value, str) or default is None or isinstance(default, str):
        return value
    text = value.strip()
    if isinstance(default, bool):
        if text.lower() in ("true", "false"):
            return text.lower() == "true"
        raise FieldError(field, f"must be true or false, like its default {default!r}")
    if not isinstance(default, (int, float)):
        return value
    try:
        number: int | float = int(text) if isinstance(default, int) and re.fullmatch(r"[+-]?\d+", text) else float(text)
    except ValueError:
        raise FieldError(field, f"must be a number, like its default {default!r}") from None
    if not math.isfinite(number):
        raise FieldError(field, "must be a finite number")
    return number
