"""Compiled, cached JSON-Schema validators for every kind the platform submits.

Custom resources: the CRD JSON files in ``MYAPP_CRD_DIR`` (default: ``crds/`` beside this module,
shipped as package data),
converted once per (apiVersion, kind) by schema_convert. Built-in kinds: the strict schemas
shipped in the ``kubernetes-validate`` package, with their ``$ref``s inlined once (the
package's own ``validate()`` re-reads a 1.8 MB definitions file on every call).

``first_error`` asks each schema compiled to plain Python (compiled.py) first: a valid manifest, the
usual case, costs a twentieth of jsonschema's walk; a refused one goes through jsonschema for its error.
"""
from __future__ import annotations

import json
import os
import re
import threading
import weakref
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
from jsonschema import validators
from jsonschema.exceptions import ValidationError

from .compiled import Check, compile_schema
from .schema_convert import convert_root

BUNDLED_CRDS = Path(__file__).resolve().parent / "crds"
K8S_SCHEMAS = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def crd_dir() -> Path:
    return Path(os.environ.get("MYAPP_CRD_DIR") or BUNDLED_CRDS)


def kubernetes_version() -> str:
    """Schema set used for built-in kinds: ``MYAPP_K8S_VERSION`` or the newest bundled one."""
    return _kubernetes_version(os.environ.get("MYAPP_K8S_VERSION", "").lstrip("v"))


@lru_cache(maxsize=4)
def _kubernetes_version(wanted: str) -> str:
    versions = sorted((p.name for p in K8S_SCHEMAS.glob("v*-local-strict")),
                      key=lambda name: [int(x) for x in re.findall(r"\d+", name)[:3]])
    if not versions:
        raise RuntimeError(f"kubernetes-validate ships no strict schemas under {K8S_SCHEMAS}")
    if wanted:
        matching = [v for v in versions if v.startswith(f"v{wanted}")]
        if not matching:
            raise RuntimeError(f"MYAPP_K8S_VERSION={wanted} not bundled; have {versions}")
        return matching[-1]
    return versions[-1]


# --- validator class: strict integer typing + list-map uniqueness ---------------------------

def _is_integer(_checker: Any, instance: Any) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


def _is_number(_checker: Any, instance: Any) -> bool:
    return isinstance(instance, (int, float)) and not isinstance(instance, bool)


def _list_map_keys(validator: Any, keys: list[str], instance: Any, _schema: Any) -> Iterator[ValidationError]:
    """``x-kubernetes-list-type: map``: no two items may share the same key fields."""
    if not isinstance(instance, list):
        return
    seen: set[str] = set()
    for index, item in enumerate(instance):
        if isinstance(item, dict):
            key = json.dumps([item.get(k) for k in keys], sort_keys=True)
            if key in seen:
                duplicate = dict(zip(keys, json.loads(key), strict=True))
                yield ValidationError(f"duplicate entry for key {duplicate}", path=[index])
            seen.add(key)


_TYPES = validators.Draft202012Validator.TYPE_CHECKER.redefine_many(
    {"integer": _is_integer, "number": _is_number})
StrictValidator = validators.extend(
    validators.Draft202012Validator,
    validators={"x-kubernetes-list-map-keys": _list_map_keys},
    type_checker=_TYPES,
)


# --- custom resources --------------------------------------------------------------------

@lru_cache(maxsize=4)
def _crd_index(directory: str) -> dict[tuple[str, str], tuple[Path, dict[str, Any]]]:
    """(apiVersion, kind) -> (file, version entry) for every served CRD version."""
    index = {}
    for path in sorted(Path(directory).glob("*.json")):
        crd = json.loads(path.read_text())
        if crd.get("kind") != "CustomResourceDefinition":
            continue
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            if version.get("served"):
                index[(f"{group}/{version['name']}", kind)] = (path, version)
    return index


def is_custom_resource(api_version: str, kind: str) -> bool:
    return (api_version, kind) in _crd_index(str(crd_dir()))


@lru_cache(maxsize=64)
def _crd_validator(directory: str, api_version: str, kind: str) -> Any:
    _path, version = _crd_index(directory)[(api_version, kind)]
    schema = convert_root(version["schema"]["openAPIV3Schema"], api_version, kind)
    return StrictValidator(schema)


def crd_validator(api_version: str, kind: str) -> Any:
    return _crd_validator(str(crd_dir()), api_version, kind)


# --- built-in kinds ----------------------------------------------------------------------

@lru_cache(maxsize=2)
def _definitions(version_dir: str) -> dict[str, Any]:
    return json.loads((K8S_SCHEMAS / version_dir / "_definitions.json").read_text())["$defs"]


def _inline(node: dict[str, Any], defs: dict[str, Any], memo: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Replace ``$ref``s by the (shared) referenced dict; recursive definitions become
    cyclic dicts, which is fine because validation walks the instance, not the schema."""
    if "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[1]
        if name not in memo:
            memo[name] = {}
            memo[name].update(_inline(defs[name], defs, memo))
        return memo[name]
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("description", "$schema", "$id", "x-kubernetes-group-version-kind"):
            continue
        if key == "properties":
            out[key] = {name: _inline(sub, defs, memo) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "not") and isinstance(value, dict):
            out[key] = _inline(value, defs, memo)
        elif key in ("allOf", "anyOf", "oneOf"):
            out[key] = [_inline(sub, defs, memo) for sub in value]
        else:
            out[key] = value
    return out


@lru_cache(maxsize=64)
def _builtin_validator(version_dir: str, api_version: str, kind: str) -> Any:
    # Same file naming as kubernetes_validate.utils.validate().
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    path = K8S_SCHEMAS / version_dir / f"{kind.lower()}-{group_version}.json"
    if not path.exists():
        return None
    schema = json.loads(path.read_text())
    return StrictValidator(_inline(schema, _definitions(version_dir), {}))


def builtin_validator(api_version: str, kind: str) -> Any:
    return _builtin_validator(kubernetes_version(), api_version, kind)


@lru_cache(maxsize=2)
def _object_meta_validator(version_dir: str) -> Any:
    return StrictValidator(_inline({"$ref": f"#/$defs/{OBJECT_META}"}, _definitions(version_dir), {}))


def object_meta_validator() -> Any:
    return _object_meta_validator(kubernetes_version())


# --- the yes/no compiled once per validator (compiled.py), jsonschema for the error ---------

_PLAIN_KEY_TYPES = (str, int, bool, type(None))  # exact types whose JSON texts are equal iff (type, value) are


def _list_map_keys_hold(keys: list[str], items: list[Any]) -> bool:
    """_list_map_keys finds no duplicate: the same verdict, comparing (type, value) pairs instead of
    JSON texts when every key value is a string, an int, a bool or None (else the JSON texts)."""
    seen: set[tuple[Any, ...]] = set()
    for item in items:
        if isinstance(item, dict):
            values = [item.get(k) for k in keys]
            if not all(type(v) in _PLAIN_KEY_TYPES for v in values):
                return next(_list_map_keys(None, keys, items, None), None) is None
            key = tuple((type(v), v) for v in values)
            if key in seen:
                return False
            seen.add(key)
    return True


_COMPILED: dict[int, tuple[weakref.ref[Any], Check | None]] = {}  # id(validator) -> (it, its check)
_COMPILED_LOCK = threading.Lock()


def compiled_check(validator: Any) -> Check | None:
    """The validator's schema compiled (compiled.compile_schema), once per validator object; None when
    it uses a keyword the compiler does not implement, or for another validator class than StrictValidator."""
    kept = _COMPILED.get(id(validator))
    if kept is not None and kept[0]() is validator:
        return kept[1]
    check = compile_schema(validator.schema, _list_map_keys_hold) if type(validator) is StrictValidator else None
    with _COMPILED_LOCK:
        _COMPILED[id(validator)] = (weakref.ref(validator), check)
    weakref.finalize(validator, _COMPILED.pop, id(validator), None)
    return check


def first_error(validator: Any, instance: Any) -> ValidationError | None:
    """The most relevant error (jsonschema's heuristic), or None when valid. A valid instance is
    recognised by the compiled check (about 20 times cheaper); only one it refuses goes through
    jsonschema, whose verdict and message stand."""
    check = compiled_check(validator)
    try:
        if check is not None and check(instance):
            return None
    except Exception:  # whatever it is (an instance too deep, say), jsonschema answers
        pass
    return jsonschema.exceptions.best_match(validator.iter_errors(instance))
