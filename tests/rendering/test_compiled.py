"""The compiled schema checks (myapp/rendering/compiled.py) decide exactly what jsonschema decides.

On every manifest the catalog's templates render (both golden scenarios), the serving parts, a Volcano
Queue, and on mutated variants of them: each key removed, set to null or to a value of another type,
each list item repeated (list-map keys, sets), unknown keys added; then hypothesis's random edits. For
every (validator, instance) the compiled verdict must equal jsonschema's, and first_error must give
jsonschema's best error for a refused one."""
from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from myapp.rendering import render
from myapp.rendering.compiled import compile_schema
from myapp.rendering.schemas import (
    StrictValidator,
    _list_map_keys,
    _list_map_keys_hold,
    builtin_validator,
    compiled_check,
    crd_validator,
    first_error,
    is_custom_resource,
    object_meta_validator,
)
from myapp.rendering.volcano_queue import Amount, QuotaShare, queue_spec, render_queue
from myapp.serving import manifests as serving
from tests.rendering.support import SCENARIOS_ALL, catalog

SERVICE = serving.ServiceSpec(id=7, name="digits", project="demo", namespace="demo", service_account="demo-jobs",
                              min_replicas=2, max_replicas=5, autoscale_metric="rps", autoscale_target=50)
V3 = serving.VersionSpec(id=11, version=3, framework="onnx", uri="/data/demo/digits.onnx",
                         signature={"shape": [None, 64], "dtype": "float32"})


@lru_cache(maxsize=1)
def rendered() -> tuple[dict[str, Any], ...]:
    out: list[dict[str, Any]] = []
    for name, _scenario, args, ctx, resources in SCENARIOS_ALL:
        out += render(catalog()[name], args, ctx, resources)
    out += serving.model_server(SERVICE, V3)
    out += serving.traffic(SERVICE, {11: 70, 12: 30}, {11: "v3", 12: "v4", 13: "v5"}, 13, 25)
    out.append(render_queue(queue_spec("vision-gpu", "a100-pool", Amount(16, 64_000, 512 * 2 ** 30),
                                       [QuotaShare(Amount(8, 32_000, 256 * 2 ** 30), can_borrow=True)])))
    return tuple(out)


def checks(obj: dict[str, Any]) -> list[tuple[Any, Any]]:
    """(validator, instance) as validate._schema runs them for one manifest."""
    api_version, kind = obj["apiVersion"], obj["kind"]
    if is_custom_resource(api_version, kind):
        return [(crd_validator(api_version, kind), obj), (object_meta_validator(), obj.get("metadata"))]
    return [(builtin_validator(api_version, kind), obj)]


def agree(validator: Any, instance: Any) -> bool:
    """Assert both verdicts are equal (and first_error is jsonschema's); returns the verdict."""
    errors = list(validator.iter_errors(instance))
    expected = not errors
    check = compiled_check(validator)
    assert check is not None
    assert check(instance) is expected, f"compiled says {not expected}, jsonschema {expected}: {instance!r:.300}"
    assert same(first_error(validator, instance), jsonschema.exceptions.best_match(errors))
    return expected


def same(error: Any, best: Any) -> bool:
    if error is None or best is None:
        return error is best
    return (error.message, list(error.absolute_path)) == (best.message, list(best.absolute_path))


def paths(node: Any, prefix: tuple = ()) -> Iterator[tuple]:
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from paths(value, (*prefix, index))


def at(node: Any, path: tuple) -> Any:
    for part in path:
        node = node[part]
    return node


OTHER_TYPE = {str: 1, int: "1", float: "1.5", bool: "true", type(None): 0, dict: [], list: {}}


def variants(obj: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every path: removed, null, another type; lists: first item repeated; dicts: an unknown key."""
    for path in list(paths(obj))[1:]:
        parent, last = path[:-1], path[-1]
        for change in ("remove", "null", "type", "repeat", "unknown"):
            copy_ = copy.deepcopy(obj)
            container, value = at(copy_, parent), at(copy_, path)
            if change == "remove":
                del container[last]
            elif change == "null":
                container[last] = None
            elif change == "type":
                container[last] = OTHER_TYPE[type(value)]
            elif change == "repeat" and isinstance(value, list) and value:
                value.append(copy.deepcopy(value[0]))
            elif change == "unknown" and isinstance(value, dict):
                value["notAField"] = "x"
            else:
                continue
            yield copy_


def test_every_schema_the_platform_renders_against_is_compiled():
    """Else validation silently falls back to jsonschema's walk (correct, but 20 times slower)."""
    for obj in rendered():
        for validator, _instance in checks(obj):
            assert compiled_check(validator) is not None, f"{obj['apiVersion']} {obj['kind']}"


def test_rendered_manifests_are_valid_both_ways():
    for obj in rendered():
        for validator, instance in checks(obj):
            assert agree(validator, instance)


def test_every_single_change_of_every_kind_gets_the_same_verdict():
    seen: set[tuple[str, str]] = set()
    verdicts = {True: 0, False: 0}
    for obj in rendered():
        if (obj["apiVersion"], obj["kind"]) in seen:  # one manifest per kind: the rest in the hypothesis test
            continue
        seen.add((obj["apiVersion"], obj["kind"]))
        validators = [validator for validator, _instance in checks(obj)]  # the kind's, whatever the edit
        for variant in variants(obj):
            for validator, instance in zip(validators, [variant, variant.get("metadata")], strict=False):
                verdicts[agree(validator, instance)] += 1
    assert verdicts[True] > 100 and verdicts[False] > 1000, verdicts  # both sides exercised


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2 ** 64), max_value=2 ** 64)
    | st.sampled_from([0, 1, -1, 2 ** 31 - 1, 2 ** 31, 2 ** 63 - 1, 2 ** 63, 65535, 65536])
    | st.floats(allow_nan=True) | st.sampled_from([math.nan, 0.0, 1.0, -0.5])
    | st.text(max_size=8) | st.sampled_from(["", "x", "Always", "TCP", "100m", "1Gi", "a" * 300, "UPPER", "a-b.c"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6)


@st.composite
def mutated(draw: st.DrawFn) -> dict[str, Any]:
    obj = copy.deepcopy(draw(st.sampled_from(rendered())))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(list(paths(obj))[1:]))
        container, value = at(obj, path[:-1]), at(obj, path)
        change = draw(st.sampled_from(["value", "remove", "copy", "repeat", "key"]))
        if change == "value":
            container[path[-1]] = draw(JSON)
        elif change == "remove":
            del container[path[-1]]
        elif change == "copy":  # a value from elsewhere in the manifest: the right shape, maybe the wrong place
            source = draw(st.sampled_from(list(paths(obj))))
            container[path[-1]] = copy.deepcopy(at(obj, source))
        elif change == "repeat" and isinstance(value, list) and value:
            item = copy.deepcopy(draw(st.sampled_from(value)))
            if isinstance(item, dict) and item and draw(st.booleans()):
                key = draw(st.sampled_from(sorted(item, key=str)))
                item[key] = draw(JSON)  # same list-map key or not
            value.insert(draw(st.integers(0, len(value))), item)
        elif change == "key" and isinstance(value, dict):
            value[draw(st.text(max_size=12) | st.sampled_from(["name", "x-extra", "status", "labels"]))] = draw(JSON)
    return obj


@settings(max_examples=1500, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(mutated())
def test_random_edits_get_the_same_verdict(obj):
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not isinstance(api_version, str) or not isinstance(kind, str):
        return  # validate._schema refuses it before any schema
    validators = ([crd_validator(api_version, kind), object_meta_validator()] if is_custom_resource(api_version, kind)
                  else [builtin_validator(api_version, kind)])
    if validators[0] is None:
        return  # no schema: refused before any schema
    instances = [obj, obj.get("metadata")] if len(validators) == 2 else [obj]
    for validator, instance in zip(validators, instances, strict=True):
        agree(validator, instance)


@pytest.mark.parametrize("schema", [
    {"patternProperties": {"^a": {"type": "string"}}},
    {"$defs": {"x": {"type": "integer"}}, "properties": {"a": {"$ref": "#/$defs/x"}}},
    {"type": "integer", "exclusiveMinimum": 0},
    {"properties": {"a": {"if": {"type": "string"}, "then": {"minLength": 2}}}},
    {"type": "string", "contentEncoding": "base64"},  # harmless, but not known here: not compiled
    {"items": [{"type": "string"}]},
    {"anyOf": []},
])
def test_a_keyword_it_does_not_know_leaves_the_whole_schema_to_jsonschema(schema):
    assert compile_schema(schema, _list_map_keys_hold) is None
    validator = StrictValidator(schema)
    assert compiled_check(validator) is None
    assert same(first_error(validator, {"a": "b"}), jsonschema.exceptions.best_match(validator.iter_errors({"a": "b"})))


def test_an_unknown_type_is_not_compiled():
    assert compile_schema({"properties": {"a": {"type": ["string", "decimal"]}}}, _list_map_keys_hold) is None


@pytest.mark.parametrize(("schema", "instance", "expected"), [
    ({"type": "integer"}, True, False),  # strict types: a bool is no integer
    ({"type": "number"}, 1, True),
    ({"type": ["integer", "null"], "minimum": 0}, None, True),
    ({"type": "integer", "minimum": 0, "maximum": 10}, 11, False),
    ({"type": "number", "minimum": 0}, math.nan, True),  # as jsonschema: NaN < 0 is false
    ({"enum": ["a", None]}, None, True),
    ({"enum": [1]}, True, False),  # jsonschema's equal: True is not 1
    ({"enum": ["a"]}, ["a"], False),
    ({"type": "array", "uniqueItems": True}, [1, True], True),
    ({"type": "array", "uniqueItems": True}, [{"a": 1}, {"a": 1}], False),
    ({"oneOf": [{"type": "string"}, {"minLength": 1}]}, "x", False),  # both match: not exactly one
    ({"not": {"type": "string"}}, 1, True),
    ({"type": "string", "pattern": "^[a-z]+$"}, "abc\n", True),  # re.search's $ before a final newline
    ({"properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "integer"}}, {"b": "x"}, False),
    ({"type": "object", "required": ["a"], "maxProperties": 1}, {"a": 1}, True),
])
def test_keywords_decide_as_jsonschema(schema, instance, expected):
    validator = StrictValidator(schema)
    assert agree(validator, instance) is expected


@pytest.mark.parametrize("items", [
    [{"name": "a", "port": 1}, {"name": "a", "port": 1}],
    [{"name": "a", "port": 1}, {"name": "a", "port": True}],
    [{"name": "a", "port": 1}, {"name": "a", "port": 1.0}],
    [{"name": "a"}, {"name": "a", "port": None}],
    [{"name": "a", "port": [1]}, {"name": "a", "port": [1]}],
    [{"name": "a", "port": math.nan}, {"name": "a", "port": math.nan}],
    [1, 1, {"name": "a"}],
])
def test_list_map_keys_as_the_keyword_decides(items):
    assert _list_map_keys_hold(["name", "port"], items) is (next(_list_map_keys(None, ["name", "port"], items, None),
                                                                None) is None)


def nodes(schema: Any) -> Iterator[dict[str, Any]]:
    """Every distinct node of a schema (recursive definitions are cyclic)."""
    seen: set[int] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if not isinstance(node, dict) or id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        stack += list(node.get("properties", {}).values()) + [node.get(k) for k in ("items", "additionalProperties",
                                                                                   "not")]
        for key in ("anyOf", "oneOf", "allOf"):
            stack += node.get(key, [])


def edge_values(node: dict[str, Any]) -> Iterator[Any]:
    """Values on and beside each bound of one node, and for its patterns and enums."""
    for key in ("minimum", "maximum"):
        if key in node:
            bound = node[key]
            yield from (bound - 1, bound, bound + 1, float(bound), bound + 0.5, bound - 0.5, True)
    for key in ("minLength", "maxLength"):
        if key in node:
            yield from ("a" * max(0, node[key] + d) for d in (-1, 0, 1))
    for key in ("minItems", "maxItems"):
        if key in node:
            yield from ([{}] * max(0, node[key] + d) for d in (-1, 0, 1))
    if "maxProperties" in node:
        yield from ({str(i): "a" for i in range(node["maxProperties"] + d)} for d in (0, 1))
    if "pattern" in node:
        yield from ("", "a", "A", "0", "a-b", "-a", "a-", "a.b", "a" * 64, "abc\n", "1Gi", "100m", "1.5", "+1", "e")
    if "enum" in node:
        for value in node["enum"]:
            yield from (value, f"{value}x" if isinstance(value, str) else value)
    if "required" in node:
        yield dict.fromkeys(node["required"][1:], "a")


def test_every_bound_pattern_and_enum_of_every_schema_decides_as_jsonschema():
    """Each node of every schema the platform validates against, alone, on the edges of its bounds."""
    schemas = {id(validator.schema): validator.schema for obj in rendered() for validator, _ in checks(obj)}
    tried = 0
    for schema in schemas.values():
        for node in nodes(schema):
            values = list(edge_values(node))
            if not values:
                continue
            validator, check = StrictValidator(node), compile_schema(node, _list_map_keys_hold)
            assert check is not None
            for value in values:
                assert check(value) is validator.is_valid(value), (node, value)
                tried += 1
    assert tried > 1000
