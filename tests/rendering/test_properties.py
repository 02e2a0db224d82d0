"""Property tests (hypothesis): valid arguments always give valid manifests; text never
executes and never changes the shape of the output."""
from __future__ import annotations

import dataclasses

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from myapp.rendering import ArgumentError, RenderContext, ResourceGroup, render
from myapp.rendering.context import is_forbidden_service_account
from myapp.rendering.engine import tojson
from myapp.rendering.names import is_dns1035_label, is_label_value, k8s_name, label_value
from myapp.rendering.quantity import parse_quantity
from tests.rendering.support import PLAIN_CTX, REQUIRED_ARGS, catalog, paths, strings

SETTINGS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow, HealthCheck.filter_too_much,
                                                      HealthCheck.data_too_large]}
TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=120)
JINJA_LIKE = st.sampled_from(["{{ 7*7 }}", "{{ cycler.__init__.__globals__ }}", "{% raw %}", "{#", "}}",
                              "\n: - [ ] { } & * ! | > ' \" % @ `", "---\n...", "\u2028\x85\x7f"])
HOSTILE_TEXT = st.one_of(TEXT, JINJA_LIKE, st.lists(st.one_of(TEXT, JINJA_LIKE), max_size=4).map("".join))
DNS_LABEL = st.from_regex(r"[a-z]([-a-z0-9]{0,20}[a-z0-9])?", fullmatch=True)
LABEL_VALUE = st.from_regex(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,20}[A-Za-z0-9])?", fullmatch=True)


def value_strategy(prop: dict) -> st.SearchStrategy:
    kind = prop.get("type", "string")
    if "enum" in prop:
        return st.sampled_from(prop["enum"])
    if kind == "integer":
        return st.integers(prop["minimum"], prop["maximum"])
    if kind == "number":
        return st.floats(prop["minimum"], prop["maximum"], allow_nan=False, allow_infinity=False)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        items = value_strategy(prop.get("items", {"type": "string"}))
        return st.lists(items, min_size=prop.get("minItems", 0), max_size=min(prop.get("maxItems", 5), 5))
    low, high = prop.get("minLength", 0), prop.get("maxLength", 200)
    base = st.from_regex(prop["pattern"], fullmatch=True) if "pattern" in prop else HOSTILE_TEXT
    return base.filter(lambda text: low <= len(text) <= high and "\x00" not in text)


def args_strategy(schema: dict) -> st.SearchStrategy:
    required = set(schema.get("required", ()))
    props = schema["properties"]
    return st.fixed_dictionaries(
        {name: value_strategy(prop) for name, prop in props.items() if name in required},
        optional={name: value_strategy(prop) for name, prop in props.items() if name not in required},
    )


def resources_strategy(template: dict) -> st.SearchStrategy:
    high = template["max_resources"]
    millicores = int(parse_quantity(high["cpu"]) * 1000)
    mebibytes = int(parse_quantity(high["memory"]) / 2 ** 20)
    return st.one_of(st.none(), st.fixed_dictionaries({}, optional={
        "cpu": st.one_of(st.integers(1, millicores).map(lambda m: f"{m}m"),
                         st.integers(1, millicores // 1000),  # whole cores as a number
                         st.integers(1, millicores).map(lambda m: m / 1000)),  # 0.25 -> "250m"
        "memory": st.one_of(st.integers(4, mebibytes).map(lambda m: f"{m}Mi"),
                            st.integers(4 * 2 ** 20, mebibytes * 2 ** 20)),  # bytes as a number
        "gpu": st.one_of(st.integers(0, high["gpu"]), st.integers(0, high["gpu"]).map(str)),
    }))


GROUPS = st.builds(
    ResourceGroup,
    name=DNS_LABEL,
    node_selector=st.dictionaries(st.from_regex(r"([a-z]{1,8}\.io/)?[a-z]{1,10}", fullmatch=True), LABEL_VALUE,
                                  max_size=2),
    tolerations=st.lists(st.fixed_dictionaries({"key": DNS_LABEL, "operator": st.just("Exists"),
                                                "effect": st.sampled_from(["NoSchedule", "NoExecute"])}),
                         max_size=2).map(tuple),
    gpu_type=st.one_of(st.none(), LABEL_VALUE),
    queue=DNS_LABEL,
    gang_scheduling=st.booleans(),
)
CONTEXTS = st.builds(
    RenderContext,
    project=TEXT.filter(bool),
    namespace=DNS_LABEL,
    pipeline=TEXT,
    run_id=st.one_of(st.integers(0, 10 ** 12), TEXT),
    task=TEXT,
    attempt=st.integers(1, 20),
    service_account=DNS_LABEL.filter(lambda name: not is_forbidden_service_account(name)),
    resource_group=st.one_of(st.none(), GROUPS),
)
CROSS_FIELD = {"min_replicas", "previous_version"}  # rules between two arguments (deploy-service)


@pytest.mark.parametrize("name", sorted(catalog()))
@settings(max_examples=40, **SETTINGS)
@given(data=st.data())
def test_any_valid_args_render_strictly_valid_manifests(name, data):
    template = catalog()[name]
    args = data.draw(args_strategy(template["args_schema"]), label="args")
    ctx = data.draw(CONTEXTS, label="ctx")
    resources = data.draw(resources_strategy(template), label="resources")
    try:
        manifests = render(template, args, ctx, resources)  # validates strictly, raises on failure
    except ArgumentError as exc:
        assume(exc.field not in CROSS_FIELD)
        raise
    assert manifests
    for obj in manifests:
        assert is_dns1035_label(obj["metadata"]["name"]) or obj["kind"] not in ("Service", "PyTorchJob")
        assert all(is_label_value(v) for v in obj["metadata"]["labels"].values())
    assert render(template, args, ctx, resources) == manifests  # deterministic


FREE_TEXT_ARGS = sorted(
    (name, arg) for name, template in catalog().items()
    for arg, prop in template["args_schema"]["properties"].items()
    if prop["type"] == "string" and not {"pattern", "enum"} & set(prop)
)


def test_there_are_free_text_arguments_to_attack():
    assert ("python", "script") in FREE_TEXT_ARGS and ("image-build", "dockerfile") in FREE_TEXT_ARGS


@pytest.mark.parametrize("name,arg", FREE_TEXT_ARGS)
@settings(max_examples=30, **SETTINGS)
@given(text=HOSTILE_TEXT)
def test_text_never_executes_nor_changes_structure(name, arg, text):
    template = catalog()[name]
    limit = template["args_schema"]["properties"][arg].get("maxLength", 10 ** 6)
    assume(len(text) <= limit)
    base = REQUIRED_ARGS.get(name, {})
    plain = render(template, {**base, arg: "plain"}, PLAIN_CTX)
    attacked = render(template, {**base, arg: text}, PLAIN_CTX)
    assert paths(attacked) == paths(plain)
    assert text in list(strings(attacked))  # carried verbatim, as one value
    if "{{ 7*7 }}" in text:
        assert "49" not in list(strings(attacked))


@settings(max_examples=300, **SETTINGS)
@given(text=st.text())
def test_tojson_round_trips_through_yaml(text):
    for loader in {getattr(yaml, "CSafeLoader", yaml.SafeLoader), yaml.SafeLoader}:
        assert yaml.load(f"value: {tojson(text)}\nlist: {tojson([text, {text: text}])}\n", Loader=loader) == {
            "value": text, "list": [text, {text: text}]}


@settings(max_examples=300, **SETTINGS)
@given(text=st.text(), other=st.text())
def test_names_and_label_values_are_always_valid(text, other):
    name = k8s_name(text)
    assert is_dns1035_label(name) and len(name) <= 52
    assert is_label_value(label_value(text))
    assert k8s_name(text) == name  # stable
    if text != other:
        assert k8s_name(text) != k8s_name(other)
        assert label_value(text) != label_value(other)


@settings(max_examples=50, **SETTINGS)
@given(ctx=CONTEXTS)
def test_context_text_only_reaches_env_values_and_sanitised_labels(ctx):
    manifests = render(catalog()["python"], {}, ctx)
    plain = render(catalog()["python"], {}, dataclasses.replace(
        ctx, project="p", pipeline="p", task="t", run_id="r"))
    assert paths(manifests) == paths(plain)
    env = {e["name"]: e["value"] for e in manifests[-1]["spec"]["template"]["spec"]["containers"][0]["env"]
           if "value" in e}
    assert (env["MYAPP_PROJECT"], env["MYAPP_TASK"], env["MYAPP_RUN_ID"]) == (ctx.project, ctx.task, str(ctx.run_id))
