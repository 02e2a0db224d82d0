"""A fast yes/no for the JSON Schemas rendering validates against (schemas.py), compiled to closures.

jsonschema walks every keyword of every node through generic machinery (a new validator per
subschema, error generators, type-checker lookups): checking one valid manifest costs 1-2 ms, most of
the manifest's validation. Here each schema node becomes a Python function that answers "valid?" with
plain isinstance checks, compiled lazily (a node on its first use: a CRD schema has thousands, a
manifest visits a few hundred).

It decides exactly what ``StrictValidator`` (Draft 2020-12, strict integer/number types, the
``x-kubernetes-list-map-keys`` keyword) decides, for the keywords the CRD and kubernetes-validate
schemas use; a schema with any other keyword (``$ref``, ``patternProperties``, ``if``, ...) is not
compiled at all (``compile_schema`` returns None) and jsonschema alone answers for it: never a silent
accept. It only says yes or no: for a refused instance ``schemas.first_error`` asks jsonschema, so the
error text is jsonschema's, and a disagreement could only make it accept what jsonschema accepts.
tests/rendering/test_compiled.py proves the verdicts equal on every manifest the catalog renders and
on many mutated variants.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from jsonschema._utils import equal, uniq

Check = Callable[[Any], bool]

# Keywords without effect on a verdict (annotations; ``format`` asserts nothing without a format
# checker, and StrictValidator has none; Kubernetes' own extensions that jsonschema ignores).
IGNORED = frozenset({
    "description", "title", "default", "examples", "example", "format", "$comment", "deprecated",
    "readOnly", "writeOnly", "externalDocs", "nullable",
    "x-kubernetes-list-type", "x-kubernetes-map-type", "x-kubernetes-patch-strategy",
    "x-kubernetes-patch-merge-key", "x-kubernetes-unions", "x-kubernetes-group-version-kind",
    "x-kubernetes-int-or-string", "x-kubernetes-preserve-unknown-fields", "x-kubernetes-embedded-resource",
    "x-kubernetes-validations",
})
KNOWN = frozenset({
    "type", "properties", "additionalProperties", "required", "items", "enum", "pattern",
    "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems", "uniqueItems",
    "minProperties", "maxProperties", "anyOf", "oneOf", "allOf", "not", "x-kubernetes-list-map-keys",
}) | IGNORED

# The type checker's tests (schemas._TYPES: integer and number exclude bool), as expressions on x.
_TYPE_TESTS = {
    "object": "isinstance(x, dict)",
    "array": "isinstance(x, list)",
    "string": "isinstance(x, str)",
    "boolean": "isinstance(x, bool)",
    "null": "x is None",
    "integer": "(isinstance(x, int) and not isinstance(x, bool))",
    "number": "(isinstance(x, (int, float)) and not isinstance(x, bool))",
}


class NotCompilable(Exception):
    """The schema uses something this module does not implement."""


def _is_number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _accept(_x: Any) -> bool:
    return True


def _refuse(_x: Any) -> bool:
    return False


def _scan(root: Any) -> None:
    """Refuse the whole schema unless every node uses only KNOWN keywords, with the shapes expected."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, bool):
            continue
        if not isinstance(node, dict):
            raise NotCompilable(f"schema node of type {type(node).__name__}")
        if id(node) in seen:
            continue
        seen.add(id(node))
        unknown = set(node) - KNOWN
        if unknown:
            raise NotCompilable(f"keywords {sorted(unknown)}")
        if "type" in node:
            types = node["type"] if isinstance(node["type"], list) else [node["type"]]
            if not types or any(not isinstance(t, str) or t not in _TYPE_TESTS for t in types):
                raise NotCompilable(f"type {node['type']!r}")
        props = node.get("properties", {})
        if not isinstance(props, dict):
            raise NotCompilable("properties")
        stack.extend(props.values())
        for key in ("items", "additionalProperties", "not"):
            if key in node:
                stack.append(node[key])
        for key in ("anyOf", "oneOf", "allOf"):
            if key in node:
                if not isinstance(node[key], list) or not node[key]:
                    raise NotCompilable(key)
                stack.extend(node[key])
        for key in ("minimum", "maximum"):
            if key in node and not _is_number(node[key]):
                raise NotCompilable(key)
        for key in ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties"):
            if key in node and not (isinstance(node[key], int) and not isinstance(node[key], bool)):
                raise NotCompilable(key)
        if "required" in node and not (isinstance(node["required"], list)
                                       and all(isinstance(r, str) for r in node["required"])):
            raise NotCompilable("required")
        if "enum" in node and not isinstance(node["enum"], list):
            raise NotCompilable("enum")
        if "pattern" in node and not isinstance(node["pattern"], str):
            raise NotCompilable("pattern")
        if "uniqueItems" in node and not isinstance(node["uniqueItems"], bool):
            raise NotCompilable("uniqueItems")
        keys = node.get("x-kubernetes-list-map-keys")
        if keys is not None and not (isinstance(keys, list) and all(isinstance(k, str) for k in keys)):
            raise NotCompilable("x-kubernetes-list-map-keys")


class _Compiler:
    """One schema's nodes, each compiled on its first use (recursive definitions are cyclic dicts)."""

    def __init__(self, list_map_keys: Callable[[list[str], list[Any]], bool]) -> None:
        self.cells: dict[int, list[Check]] = {}
        self.list_map_keys = list_map_keys

    def cell(self, node: Any) -> list[Check]:
        """A one-element list holding the node's check: a stub that compiles it on the first call."""
        if node is True:
            return [_accept]
        if node is False:
            return [_refuse]
        cell = self.cells.get(id(node))
        if cell is None:
            cell = self.cells[id(node)] = [_accept]  # replaced at once below

            def first_call(x: Any, node: Any = node, cell: list[Check] = cell) -> bool:
                cell[0] = self.build(node)
                return cell[0](x)
            cell[0] = first_call
        return cell

    def build(self, node: dict[str, Any]) -> Check:
        """The node's check as the source of one function (constants and children bound by name),
        so that a node costs a call and a few isinstance tests, not a loop over keyword handlers."""
        env: dict[str, Any] = {"equal": equal, "uniq": uniq, "list_map_keys": self.list_map_keys}

        def bind(value: Any) -> str:
            name = f"k{len(env)}"
            env[name] = value
            return name

        body = ["def check(x):"]
        if "type" in node:
            types = node["type"] if isinstance(node["type"], list) else [node["type"]]
            body.append(f"    if not ({' or '.join(_TYPE_TESTS[t] for t in types)}): return False")

        obj: list[str] = []  # statements for a dict instance, and so on
        props = node.get("properties", {})
        extra = node.get("additionalProperties", True)
        if props or extra is not True:
            cells = bind({name: self.cell(sub) for name, sub in props.items()})
            obj += ["for key, value in x.items():", f"    cell = {cells}.get(key)", "    if cell is None:"]
            if extra is True:
                obj.append("        continue")
            elif extra is False:
                obj.append("        return False")
            else:
                obj.append(f"        if not {bind(self.cell(extra))}[0](value): return False")
            obj.append("    elif not cell[0](value): return False")
        if node.get("required"):
            obj += [f"for key in {bind(tuple(node['required']))}:", "    if key not in x: return False"]
        if "minProperties" in node:
            obj.append(f"if len(x) < {int(node['minProperties'])}: return False")
        if "maxProperties" in node:
            obj.append(f"if len(x) > {int(node['maxProperties'])}: return False")

        arr: list[str] = []
        if "items" in node and node["items"] is not True:
            arr += ["for value in x:", f"    if not {bind(self.cell(node['items']))}[0](value): return False"]
        if "minItems" in node:
            arr.append(f"if len(x) < {int(node['minItems'])}: return False")
        if "maxItems" in node:
            arr.append(f"if len(x) > {int(node['maxItems'])}: return False")
        if node.get("uniqueItems"):
            arr.append("if not uniq(x): return False")
        if "x-kubernetes-list-map-keys" in node:
            arr.append(f"if not list_map_keys({bind(list(node['x-kubernetes-list-map-keys']))}, x): return False")

        text: list[str] = []
        if "pattern" in node:  # jsonschema: re.search(pattern, x), the same compiled pattern
            text.append(f"if {bind(re.compile(node['pattern']).search)}(x) is None: return False")
        if "minLength" in node:
            text.append(f"if len(x) < {int(node['minLength'])}: return False")
        if "maxLength" in node:
            text.append(f"if len(x) > {int(node['maxLength'])}: return False")

        num: list[str] = []  # the same comparisons as jsonschema's (a NaN passes both)
        if "minimum" in node:
            num.append(f"if x < {bind(node['minimum'])}: return False")
        if "maximum" in node:
            num.append(f"if x > {bind(node['maximum'])}: return False")

        branches = [(obj, "isinstance(x, dict)"), (arr, "isinstance(x, list)"), (text, "isinstance(x, str)"),
                    (num, _TYPE_TESTS["number"])]
        first = True
        for statements, test in branches:
            if statements:
                body.append(f"    {'if' if first else 'elif'} {test}:")
                body += [f"        {line}" for line in statements]
                first = False

        if "enum" in node:
            enums = list(node["enum"])
            if all(type(e) is str for e in enums):  # equal(e, x) for a string e is e == x: false unless x is a str
                body.append(f"    if not (isinstance(x, str) and x in {bind(frozenset(enums))}): return False")
            else:
                body.append(f"    if not any(equal(e, x) for e in {bind(enums)}): return False")
        for key, join in (("allOf", " and "), ("anyOf", " or ")):
            if key in node:
                calls = join.join(f"{bind(self.cell(sub))}[0](x)" for sub in node[key])
                body.append(f"    if not ({calls}): return False")
        if "oneOf" in node:  # exactly one valid
            calls = " + ".join(f"bool({bind(self.cell(sub))}[0](x))" for sub in node["oneOf"])
            body.append(f"    if ({calls}) != 1: return False")
        if "not" in node:
            body.append(f"    if {bind(self.cell(node['not']))}[0](x): return False")
        body.append("    return True")
        exec("\n".join(body), env)  # source built above from fixed texts; schema values are bound by name
        check: Check = env["check"]
        return check


def compile_schema(schema: Any, list_map_keys: Callable[[list[str], list[Any]], bool]) -> Check | None:
    """valid?(instance) for a whole schema, or None if it uses a keyword not implemented here.
    list_map_keys(keys, items): the ``x-kubernetes-list-map-keys`` rule (True when no two dict
    items share their key fields), the same function the jsonschema keyword uses."""
    try:
        _scan(schema)
    except NotCompilable:
        return None
    root = _Compiler(list_map_keys).cell(schema)
    return lambda instance: root[0](instance)
