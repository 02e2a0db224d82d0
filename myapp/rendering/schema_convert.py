"""CRD structural schema (openAPIV3Schema) -> JSON Schema, with the API server's semantics.

What changes in conversion, and why:
  * ``nullable: true`` -> ``null`` added to ``type`` (and to ``enum``).
  * ``x-kubernetes-int-or-string`` -> ``type: [integer, string]``.
  * Strict mode: wherever an object's fields are declared (or none are, which means every
    field would be pruned) and ``x-kubernetes-preserve-unknown-fields`` is absent,
    ``additionalProperties: false`` -- the equivalent of ``fieldValidation=Strict``.
  * ``x-kubernetes-embedded-resource`` -> apiVersion/kind/metadata are implicitly allowed.
  * ``format: int32/int64`` -> numeric bounds (the API server rejects overflow).
  * ``x-kubernetes-list-type: set`` -> ``uniqueItems``; ``map`` keeps its list-map-keys
    (checked by a custom keyword in validate.py).
  * Value validations inside anyOf/oneOf/allOf/not are copied verbatim: structural
    keywords are not allowed there, and adding additionalProperties inside ``not`` would
    invert its meaning. ``description``/``default``/CEL rules are dropped.
"""
from __future__ import annotations

from typing import Any

_INT_BOUNDS = {"int32": (-(2 ** 31), 2 ** 31 - 1), "int64": (-(2 ** 63), 2 ** 63 - 1)}
_DROPPED = frozenset({"description", "default", "example", "externalDocs", "title", "format",
                      "x-kubernetes-validations", "x-kubernetes-map-type", "x-kubernetes-list-type",
                      "x-kubernetes-int-or-string", "x-kubernetes-preserve-unknown-fields",
                      "x-kubernetes-embedded-resource", "x-kubernetes-list-map-keys", "nullable"})
_JUNCTORS = ("anyOf", "oneOf", "allOf")


def convert(node: dict[str, Any]) -> dict[str, Any]:
    """Convert one structural schema node (recursively)."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED:
            continue
        if key == "properties":
            out[key] = {name: convert(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = convert(value)
        else:  # type, enum, pattern, required, bounds, anyOf/oneOf/allOf/not (value validations)...
            out[key] = value
    if node.get("x-kubernetes-int-or-string"):
        out["type"] = ["integer", "string"]
    if node.get("x-kubernetes-embedded-resource"):
        props = out.setdefault("properties", {})
        props.setdefault("apiVersion", {"type": "string"})
        props.setdefault("kind", {"type": "string"})
        props.setdefault("metadata", {"type": "object"})
    is_object = node.get("type") == "object" or "properties" in node
    if (is_object and "additionalProperties" not in node
            and not node.get("x-kubernetes-preserve-unknown-fields")):
        out["additionalProperties"] = False
    bounds = _INT_BOUNDS.get(node.get("format", ""))
    if bounds and node.get("type") == "integer":
        out.setdefault("minimum", bounds[0])
        out.setdefault("maximum", bounds[1])
    if node.get("x-kubernetes-list-type") == "set":
        out["uniqueItems"] = True
    if node.get("x-kubernetes-list-type") == "map" and "x-kubernetes-list-map-keys" in node:
        out["x-kubernetes-list-map-keys"] = node["x-kubernetes-list-map-keys"]
    if node.get("nullable"):
        if "type" in out:
            types = out["type"] if isinstance(out["type"], list) else [out["type"]]
            out["type"] = [*types, "null"]
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
    return out


def convert_root(schema: dict[str, Any], api_version: str, kind: str) -> dict[str, Any]:
    """Convert a CRD's top-level schema; apiVersion/kind are pinned, metadata is checked
    separately against ObjectMeta (CRD schemas only say ``type: object`` for it)."""
    out = convert(schema)
    props = out.setdefault("properties", {})
    props["apiVersion"] = {"enum": [api_version]}
    props["kind"] = {"enum": [kind]}
    props["metadata"] = {"type": "object"}
    out["type"] = "object"
    out["additionalProperties"] = False
    out["required"] = sorted({*out.get("required", ()), "apiVersion", "kind", "metadata"})
    return out
