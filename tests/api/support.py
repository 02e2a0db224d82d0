"""Helpers of the API tests: answers checked against the OpenAPI spec's schemas."""
from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator

ISO_WITH_OFFSET = r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$"


class Shapes:
    """Validates JSON against the spec's schemas, converted from OpenAPI 3.0 to JSON Schema."""

    def __init__(self, spec: dict):
        self.spec = spec
        self.schemas = spec["components"]["schemas"]

    def convert(self, node: Any) -> Any:
        if isinstance(node, list):
            return [self.convert(n) for n in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            return self.convert(self.schemas[node["$ref"].rsplit("/", 1)[-1]])
        out = {k: self.convert(v) for k, v in node.items()
               if k not in ("nullable", "format", "description", "properties") and not k.startswith("x-")}
        if "properties" in node:  # names, not keywords: keep them all ("description" is a column too)
            out["properties"] = {name: self.convert(prop) for name, prop in node["properties"].items()}
        if node.get("format") == "date-time":
            out["pattern"] = ISO_WITH_OFFSET  # datetimes carry their offset: a browser reads them right
        if node.get("format") == "date":
            out["pattern"] = r"^\d{4}-\d\d-\d\d$"
        if "allOf" in out and all(part.get("type") == "object" for part in out["allOf"]):
            parts = out.pop("allOf")
            out |= {"type": "object",
                    "properties": {k: v for p in parts for k, v in p.get("properties", {}).items()},
                    "required": [r for p in parts for r in p.get("required", [])]}
            if all(p.get("additionalProperties") is False for p in parts):
                out["additionalProperties"] = False
        if node.get("nullable"):
            out = {"anyOf": [out, {"type": "null"}]}
        return out

    def check(self, schema: dict, value: Any, where: str) -> None:
        errors = sorted(Draft202012Validator(self.convert(schema)).iter_errors(value), key=str)
        assert not errors, f"{where}: the answer does not match the spec: " + "; ".join(
            f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in errors[:5])

    def component(self, name: str, value: Any) -> None:
        self.check({"$ref": f"#/components/schemas/{name}"}, value, name)

    def answer(self, method: str, path: str, resp, media: str = "application/json") -> None:
        """resp (a test response to METHOD path-template) against the operation's answer for its status."""
        where = f"{method.upper()} {path} -> {resp.status_code}"
        responses = self.spec["paths"][path][method]["responses"]
        declared = responses.get(str(resp.status_code))
        assert declared is not None, f"{where}: status not in the spec ({sorted(responses)})"
        if "$ref" in declared:
            declared = self.spec["components"]["responses"][declared["$ref"].rsplit("/", 1)[-1]]
        self.check(declared["content"][media]["schema"], resp.get_json(), where)
