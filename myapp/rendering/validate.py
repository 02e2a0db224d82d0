"""Validation before submit: would the API server, the operators and the platform accept
these manifests? Raises ManifestError(object, field path, reason) on the first problem.

Order per object: structural schema in strict mode (CRD schema or kubernetes-validate's
built-in schema; unknown kinds are refused), ObjectMeta for custom resources, API-server
semantics, operator webhook rules, platform policy. Then rules across the whole set.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from . import policy, semantics, webhooks
from .errors import ManifestError
from .schemas import builtin_validator, crd_validator, first_error, is_custom_resource, object_meta_validator


def _ident(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    return f"{obj.get('kind', '<no kind>')}/{meta.get('name', '<no name>')}"


def _path(parts: Iterable[Any]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _schema(obj: Mapping[str, Any]) -> None:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        raise ManifestError(_ident(obj), "apiVersion", "apiVersion and kind must be strings")
    if is_custom_resource(api_version, kind):
        checks = [(crd_validator(api_version, kind), obj, ""),
                  (object_meta_validator(), obj.get("metadata"), "metadata")]
    else:
        validator = builtin_validator(api_version, kind)
        if validator is None:
            raise ManifestError(_ident(obj), "apiVersion", f"no schema for {api_version} {kind}: refusing to submit")
        checks = [(validator, obj, "")]
    for validator, instance, prefix in checks:
        error = first_error(validator, instance)
        if error is not None:
            path = _path([*([prefix] if prefix else []), *error.absolute_path])
            raise ManifestError(_ident(obj), path, error.message)


def validate_manifest(obj: Mapping[str, Any]) -> None:
    """Raise ManifestError unless one manifest is acceptable."""
    if not isinstance(obj, Mapping):
        raise ManifestError("<manifest>", "", f"must be a mapping, got {type(obj).__name__}")
    _schema(obj)
    for check in (semantics.check, webhooks.check, policy.check):
        for path, reason in check(obj):
            raise ManifestError(_ident(obj), path, reason)


def validate_manifests(objects: Iterable[Mapping[str, Any]]) -> None:
    """Validate every manifest of one submission, then the rules across them."""
    objects = list(objects)
    for obj in objects:
        validate_manifest(obj)
    for ident, path, reason in policy.check_set(objects):
        raise ManifestError(ident, path, reason)
