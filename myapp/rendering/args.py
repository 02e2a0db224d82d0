"""Task arguments: check them against a template's argument schema, apply defaults, coerce.

The schema is a small, JSON-Schema-like subset (see ``PROPERTY_KEYWORDS``). Two deliberate
differences from JSON Schema: ``pattern`` must match the WHOLE value (``re.fullmatch``; a
JSON-Schema ``$`` would let a trailing newline through), and strings given for integer /
number / boolean arguments are converted, because ``--set key=value`` only yields strings.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from .errors import ArgumentError

TYPES = ("string", "integer", "number", "boolean", "array")
PROPERTY_KEYWORDS = frozenset({
    "type", "description", "title", "default", "enum", "minimum", "maximum",
    "pattern", "minLength", "maxLength", "items", "minItems", "maxItems", "x-flag",
})
ITEM_KEYWORDS = frozenset({"type", "enum", "pattern", "minLength", "maxLength", "minimum", "maximum"})
_APPLIES_TO = {
    "minimum": ("integer", "number"), "maximum": ("integer", "number"),
    "pattern": ("string",), "minLength": ("string",), "maxLength": ("string",),
    "items": ("array",), "minItems": ("array",), "maxItems": ("array",),
}
# Hard cap for any string: a manifest must stay far below etcd's 1.5 MiB object limit.
MAX_STRING = 65536
_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
_TRUE, _FALSE = frozenset({"true", "yes", "on", "1"}), frozenset({"false", "no", "off", "0"})


class SchemaError(ValueError):
    """An argument schema (in a template.yaml) is itself malformed."""

    def __init__(self, field: str, reason: str):
        self.field, self.reason = field, reason
        super().__init__(f"{field}: {reason}")


@lru_cache(maxsize=256)
def _regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def validate_args(args_schema: Mapping[str, Any], args: Mapping[str, Any] | None) -> dict[str, Any]:
    """Return ``args`` checked, coerced and completed with defaults, in schema order.

    Raises ArgumentError (a ValueError with ``.field`` and ``.reason``) on unknown or missing
    arguments, wrong type, out of range, not in enum, pattern mismatch.
    """
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise ArgumentError("args", f"must be a mapping, got {type(args).__name__}")
    properties: Mapping[str, Any] = args_schema.get("properties", {})
    unknown = sorted(str(name) for name in args if name not in properties)
    if unknown:
        known = ", ".join(properties) or "none"
        raise ArgumentError(unknown[0], f"unknown argument (known arguments: {known})")
    required = set(args_schema.get("required", ()))
    out: dict[str, Any] = {}
    for name, prop in properties.items():
        value = args.get(name)
        if value is None:  # JSON null means "not given"
            if "default" in prop:
                out[name] = coerce(name, prop, prop["default"])
            elif name in required:
                raise ArgumentError(name, "is required")
            continue
        out[name] = coerce(name, prop, value)
    return out


def coerce(field: str, prop: Mapping[str, Any], value: Any) -> Any:
    """Check one value against one property schema; return it converted to the schema type."""
    kind = prop.get("type", "string")
    if kind == "string":
        value = _string(field, value)
    elif kind == "integer":
        value = _integer(field, value)
    elif kind == "number":
        value = _number(field, value)
    elif kind == "boolean":
        value = _boolean(field, value)
    elif kind == "array":
        value = _array(field, prop, value)
    else:
        raise ArgumentError(field, f"schema has unsupported type {kind!r}")
    _constraints(field, prop, value)
    return value


def _string(field: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ArgumentError(field, f"expected a string, got {type(value).__name__} {value!r}")
    if "\x00" in value:
        raise ArgumentError(field, "contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ArgumentError(field, "is not valid Unicode (lone surrogate)") from None
    if len(value) > MAX_STRING:
        raise ArgumentError(field, f"is longer than {MAX_STRING} characters")
    return value


def _integer(field: str, value: Any) -> int:
    if isinstance(value, bool):
        raise ArgumentError(field, f"expected an integer, got boolean {value!r}")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INT.fullmatch(value.strip()):
        return int(value.strip())
    raise ArgumentError(field, f"expected an integer, got {value!r}")


def _number(field: str, value: Any) -> float:
    if isinstance(value, bool):
        raise ArgumentError(field, f"expected a number, got boolean {value!r}")
    if isinstance(value, str) and _FLOAT.fullmatch(value.strip()):
        value = float(value.strip())
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    raise ArgumentError(field, f"expected a finite number, got {value!r}")


def _boolean(field: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
        return value.strip().lower() in _TRUE
    raise ArgumentError(field, f"expected a boolean (true/false), got {value!r}")


def _array(field: str, prop: Mapping[str, Any], value: Any) -> list[Any]:
    if isinstance(value, str) and value.lstrip().startswith("["):
        try:
            value = json.loads(value)
        except ValueError:
            raise ArgumentError(field, "is not a valid JSON list") from None
    if not isinstance(value, (list, tuple)):
        raise ArgumentError(field, f'expected a list (JSON, e.g. ["a", "b"]), got {value!r}')
    items = prop.get("items", {"type": "string"})
    return [coerce(f"{field}[{index}]", items, item) for index, item in enumerate(value)]


def _constraints(field: str, prop: Mapping[str, Any], value: Any) -> None:
    if "enum" in prop and value not in prop["enum"]:
        raise ArgumentError(field, f"must be one of {list(prop['enum'])}, got {value!r}")
    if "minimum" in prop and value < prop["minimum"]:
        raise ArgumentError(field, f"must be >= {prop['minimum']}, got {value!r}")
    if "maximum" in prop and value > prop["maximum"]:
        raise ArgumentError(field, f"must be <= {prop['maximum']}, got {value!r}")
    size_name = "items" if isinstance(value, list) else "characters"
    low, high = ("minItems", "maxItems") if isinstance(value, list) else ("minLength", "maxLength")
    if isinstance(value, (str, list)):
        if low in prop and len(value) < prop[low]:
            raise ArgumentError(field, f"must have at least {prop[low]} {size_name}, got {len(value)}")
        if high in prop and len(value) > prop[high]:
            raise ArgumentError(field, f"must have at most {prop[high]} {size_name}, got {len(value)}")
    if "pattern" in prop and isinstance(value, str) and not _regex(prop["pattern"]).fullmatch(value):
        raise ArgumentError(field, f"{value!r} does not match pattern {prop['pattern']!r}")


def check_property(name: str, prop: Any) -> None:
    """Raise ValueError(field, reason) if a property schema itself is malformed.

    Used when loading the catalog; the error is re-raised naming the template folder.
    """
    if not isinstance(prop, Mapping):
        raise SchemaError(name, "must be a mapping")
    unknown = sorted(set(prop) - PROPERTY_KEYWORDS)
    if unknown:
        raise SchemaError(f"{name}.{unknown[0]}", f"unknown keyword (allowed: {sorted(PROPERTY_KEYWORDS)})")
    kind = prop.get("type")
    if kind not in TYPES:
        raise SchemaError(f"{name}.type", f"must be one of {list(TYPES)}, got {kind!r}")
    for keyword in sorted(set(prop) & set(_APPLIES_TO)):
        if kind not in _APPLIES_TO[keyword]:
            raise SchemaError(f"{name}.{keyword}", f"does not apply to {kind} arguments")
    if kind in ("integer", "number"):
        for bound in ("minimum", "maximum"):
            if bound not in prop:  # an unbounded number would end up as an int32 overflow
                raise SchemaError(f"{name}.{bound}", f"is required for {kind} arguments")
            if isinstance(prop[bound], bool) or not isinstance(prop[bound], (int, float)):
                raise SchemaError(f"{name}.{bound}", "must be a number")
        if prop["minimum"] > prop["maximum"]:
            raise SchemaError(f"{name}.minimum", "is greater than maximum")
    if "pattern" in prop:
        try:
            _regex(prop["pattern"])
        except (re.error, TypeError) as exc:
            raise SchemaError(f"{name}.pattern", f"is not a valid regular expression: {exc}") from None
    if "enum" in prop:
        if not isinstance(prop["enum"], list) or not prop["enum"]:
            raise SchemaError(f"{name}.enum", "must be a non-empty list")
        for option in prop["enum"]:
            _check_default(f"{name}.enum", {k: v for k, v in prop.items() if k != "enum"}, option)
    if kind == "array":
        items = prop.get("items", {"type": "string"})
        if not isinstance(items, Mapping) or set(items) - ITEM_KEYWORDS or items.get("type") not in TYPES[:4]:
            raise SchemaError(f"{name}.items", f"must be a scalar schema with keys among {sorted(ITEM_KEYWORDS)}")
        if items.get("type") in ("integer", "number"):
            check_property(f"{name}.items", dict(items))
    if "x-flag" in prop and not (isinstance(prop["x-flag"], str)
                                 and re.fullmatch(r"--?[A-Za-z0-9][-A-Za-z0-9_.]*", prop["x-flag"])):
        raise SchemaError(f"{name}.x-flag", "must look like --some-flag")
    if "default" in prop:
        _check_default(f"{name}.default", prop, prop["default"])


def _check_default(field: str, prop: Mapping[str, Any], value: Any) -> None:
    try:
        coerce(field, prop, value)
    except ArgumentError as exc:
        raise SchemaError(field, exc.reason) from None
