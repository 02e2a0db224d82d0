"""Limits on data that arrives as JSON or YAML, checked before anything reads it.

One walk over the parsed value finds what the databases cannot store or what would make later
code fail: nesting deeper than MAX_DEPTH, integers beyond 64 bits (no column holds them;
PostgreSQL refuses them), lone UTF-16 surrogates (psycopg cannot encode them), NUL characters (PostgreSQL's text
and JSONB refuse them) and NaN or Infinity (not JSON).
It answers the first problem as (field path, reason), the path written like marshmallow's
flattened errors ("tasks[1].args.epochs").
"""
from __future__ import annotations

import math
import re
from typing import Any

MAX_DEPTH = 64
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# Ids and the other integer columns are INTEGER (32 bits on PostgreSQL): a value beyond compared with
# one fails the statement ("integer out of range"), so inputs meant for them are bounded here first.
INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
_SURROGATE = re.compile("[\ud800-\udfff]")


class NonFinite:
    """What json_body's parse_constant hands back for NaN, Infinity and -Infinity."""

    def __init__(self, text: str):
        self.text = text


def _join(path: str, key: Any) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]" if path else f"[{key}]"
    return f"{path}.{key}" if path else str(key)


def problem(data: Any, root: str = "body") -> tuple[str, str] | None:
    """The first value that cannot be stored, as (field, reason); None when all is well."""
    stack: list[tuple[str, Any, int]] = [("", data, 0)]
    while stack:
        path, value, depth = stack.pop()
        field = path or root
        if isinstance(value, NonFinite):
            return field, f"must be a finite number ({value.text} is not JSON)"
        if isinstance(value, float) and not math.isfinite(value):
            return field, "must be a finite number"
        if isinstance(value, int) and not isinstance(value, bool) and not INT64_MIN <= value <= INT64_MAX:
            return field, "is out of range: integers must fit in 64 bits"
        if isinstance(value, str) and _SURROGATE.search(value):
            return field, "contains a lone surrogate (not valid Unicode text)"
        if isinstance(value, str) and "\x00" in value:
            return field, "contains a NUL character (\\u0000), which text cannot hold"
        if isinstance(value, dict | list):
            if depth >= MAX_DEPTH:
                return field, f"is nested deeper than {MAX_DEPTH} levels"
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for key, item in reversed(list(items)):
                if isinstance(key, str) and _SURROGATE.search(key):
                    return field, "has a key with a lone surrogate (not valid Unicode text)"
                if isinstance(key, str) and "\x00" in key:
                    return field, "has a key with a NUL character (\\u0000)"
                stack.append((_join(path, key), item, depth + 1))
    return None
