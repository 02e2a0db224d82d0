"""validate_args and hostile argument values."""
from __future__ import annotations

import pytest

from myapp.rendering import ArgumentError, render, validate_args
from tests.rendering.support import PLAIN_CTX, catalog, paths, strings

SCHEMA = {
    "type": "object",
    "properties": {
        "epochs": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
        "lr": {"type": "number", "minimum": 0.0001, "maximum": 1.0, "default": 0.1},
        "mode": {"type": "string", "enum": ["fast", "slow"], "default": "fast"},
        "name": {"type": "string", "pattern": "[a-z][a-z0-9-]*", "maxLength": 10},
        "debug": {"type": "boolean", "default": False},
        "tags": {"type": "array", "items": {"type": "string", "pattern": "[a-z]+"}, "maxItems": 2, "default": []},
    },
    "required": ["name"],
    "additionalProperties": False,
}


def test_defaults_and_coercion():
    out = validate_args(SCHEMA, {"name": "abc", "epochs": "7", "lr": "0.5", "debug": "true", "tags": '["x"]'})
    assert out == {"epochs": 7, "lr": 0.5, "mode": "fast", "name": "abc", "debug": True, "tags": ["x"]}
    assert list(out) == list(SCHEMA["properties"])  # schema order: deterministic
    assert validate_args(SCHEMA, {"name": "abc", "epochs": None})["epochs"] == 10  # null = not given


@pytest.mark.parametrize("args,field,words", [
    ({"name": "abc", "epochs": "ten"}, "epochs", "expected an integer"),
    ({"name": "abc", "epochs": True}, "epochs", "boolean"),
    ({"name": "abc", "epochs": 2.5}, "epochs", "expected an integer"),
    ({"name": "abc", "epochs": 0}, "epochs", ">= 1"),
    ({"name": "abc", "epochs": 101}, "epochs", "<= 100"),
    ({"name": "abc", "lr": "nan"}, "lr", "finite number"),
    ({"name": "abc", "lr": 5}, "lr", "<= 1.0"),
    ({"name": "abc", "mode": "medium"}, "mode", "must be one of"),
    ({"name": "ABC"}, "name", "does not match pattern"),
    ({"name": "abc\n"}, "name", "does not match pattern"),  # fullmatch: no trailing-newline escape
    ({"name": "abcdefghijkl"}, "name", "at most 10"),
    ({"name": 5}, "name", "expected a string"),
    ({"name": "abc", "debug": "maybe"}, "debug", "boolean"),
    ({"name": "abc", "tags": ["ok", "BAD"]}, "tags[1]", "does not match"),
    ({"name": "abc", "tags": ["a", "b", "c"]}, "tags", "at most 2 items"),
    ({"name": "abc", "tags": "a,b"}, "tags", "expected a list"),
    ({"name": "abc", "unknown": 1}, "unknown", "unknown argument"),
    ({}, "name", "is required"),
    ({"name": "a\x00b"}, "name", "NUL"),
    ({"name": "\ud800"}, "name", "surrogate"),
])
def test_bad_arguments_name_the_field(args, field, words):
    with pytest.raises(ArgumentError) as info:
        validate_args(SCHEMA, args)
    assert info.value.field == field
    assert words in info.value.reason
    assert repr(field) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_args_must_be_a_mapping():
    with pytest.raises(ArgumentError):
        validate_args(SCHEMA, ["name"])


HOSTILE = [
    "{{ 7*7 }}",
    "{{ cycler.__init__.__globals__ }}",
    "{% for x in range(3) %}{{ x }}{% endfor %}",
    "${HOME} $(id) `id`",
    'line one\nkind: Secret\nmetadata: {name: evil}',
    'quote " and \' and \\ and : colon: and # hash',
    "- item\n- other",
    "---\napiVersion: v1\nkind: Pod",
    "&anchor *alias !!python/object:os.system",
    "key: value",
    "\u2028line separator\u2029and NEL\x85 and \x7f\x1b[31m",
    "emoji 🚀 and CJK 中文 and rtl שלום",
    "\ufeffbom",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_stays_literal_data(text):
    template = catalog()["python"]
    plain = render(template, {"script": "x"}, PLAIN_CTX)
    hostile = render(template, {"script": text}, PLAIN_CTX)
    job = hostile[0]
    container = job["spec"]["template"]["spec"]["containers"][0]
    assert container["args"][:2] == ["--script", text]  # verbatim, not evaluated
    assert paths(hostile) == paths(plain)  # same structure
    assert [m["kind"] for m in hostile] == ["Job"]


def test_template_syntax_is_not_evaluated():
    manifests = render(catalog()["python"], {"script": "{{ 7*7 }}", "command": "{{ cycler.__init__.__globals__ }}"},
                       PLAIN_CTX)
    args = manifests[0]["spec"]["template"]["spec"]["containers"][0]["args"]
    assert args == ["--script", "{{ 7*7 }}", "--command", "{{ cycler.__init__.__globals__ }}"]
    rendered = list(strings(manifests))
    assert "49" not in rendered  # 7*7 was never computed
    assert not any("__builtins__" in s or "<function" in s for s in rendered)  # no globals leaked


def test_resources_over_max_name_the_field():
    template = catalog()["pytorch-ddp"]
    with pytest.raises(ArgumentError) as info:
        render(template, {}, PLAIN_CTX, {"memory": "1Ti"})
    assert info.value.field == "resources.memory" and "exceeds the template maximum" in info.value.reason
    with pytest.raises(ArgumentError) as info:
        render(template, {}, PLAIN_CTX, {"gpu": 9})
    assert info.value.field == "resources.gpu"
    for bad, field in (({"cpu": "lots"}, "resources.cpu"), ({"gpu": 0.5}, "resources.gpu"),
                       ({"memory": "512"}, "resources.memory"), ({"disk": "1Gi"}, "resources.disk"),
                       ({"cpu": 0}, "resources.cpu"), ({"cpu": "0.0001"}, "resources.cpu"),
                       ({"memory": "4.0000001Gi"}, "resources.memory"), ({"gpu": -1}, "resources.gpu")):
        with pytest.raises(ArgumentError) as info:
            render(template, {}, PLAIN_CTX, bad)
        assert info.value.field == field


def test_resources_become_strings_and_env():
    manifests = render(catalog()["python"], {}, PLAIN_CTX, {"cpu": 0.5, "memory": 1073741824, "gpu": "1"})
    container = manifests[0]["spec"]["template"]["spec"]["containers"][0]
    assert container["resources"]["limits"] == {"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": "1"}
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert (env["MYAPP_CPU"], env["MYAPP_MEMORY"], env["MYAPP_GPU"]) == ("500m", "1Gi", "1")


def test_cross_field_rules():
    template = catalog()["deploy-service"]
    base = {"service_name": "svc", "version": "v2"}
    with pytest.raises(ArgumentError) as info:
        render(template, {**base, "min_replicas": 5, "max_replicas": 2}, PLAIN_CTX)
    assert info.value.field == "min_replicas"
    with pytest.raises(ArgumentError) as info:
        render(template, {**base, "previous_version": "v2"}, PLAIN_CTX)
    assert info.value.field == "previous_version"
