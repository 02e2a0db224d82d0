"""Macros in task arguments ({{ ds }}, {{ run_id }}, ...): substituted as data, never evaluated.

Only the names below are recognised; anything else between braces stays literal text.
"""
from __future__ import annotations

import re
from typing import Any

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
