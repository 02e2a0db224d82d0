"""Strict schema validation: CRD conversion semantics, every template's output, and
agreement of the cached built-in validators with kubernetes-validate itself."""
from __future__ import annotations

import copy

import kubernetes_validate
import pytest

from myapp.rendering import ManifestError, render, validate_manifest, validate_manifests
from myapp.rendering.schema_convert import convert, convert_root
from myapp.rendering.schemas import StrictValidator, crd_dir, first_error, is_custom_resource, kubernetes_version
from tests.rendering.support import SCENARIOS_ALL


def valid(schema, instance) -> bool:
    return first_error(StrictValidator(convert(schema)), instance) is None


def test_crd_dir_is_the_bundled_package_data():
    assert (crd_dir() / "README.md").exists()
    for api, kind in [("kubeflow.org/v1", "PyTorchJob"), ("kubeflow.org/v1", "TFJob"), ("kubeflow.org/v1", "MPIJob"),
                      ("kubeflow.org/v1", "XGBoostJob"), ("kubeflow.org/v1", "Notebook"),
                      ("batch.volcano.sh/v1alpha1", "Job"), ("scheduling.volcano.sh/v1beta1", "PodGroup"),
                      ("networking.istio.io/v1", "VirtualService")]:
        assert is_custom_resource(api, kind)
    assert not is_custom_resource("batch/v1", "Job")


def test_conversion_rejects_unknown_fields_where_properties_are_declared():
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert valid(schema, {"a": "x"})
    assert not valid(schema, {"a": "x", "b": 1})
    assert not valid({"type": "object"}, {"anything": 1})  # no fields declared: all would be pruned


def test_conversion_preserve_unknown_fields_and_additional_properties():
    assert valid({"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                  "properties": {"a": {"type": "string"}}}, {"a": "x", "b": {"c": 1}})
    assert valid({"type": "object", "additionalProperties": {"type": "string"}}, {"k": "v"})
    assert not valid({"type": "object", "additionalProperties": {"type": "string"}}, {"k": 1})


def test_conversion_int_or_string_and_nullable():
    schema = {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}],
              "pattern": "^[0-9]+m?$"}
    assert valid(schema, 5) and valid(schema, "500m")
    assert not valid(schema, "lots") and not valid(schema, 1.5) and not valid(schema, None)
    assert valid({"type": "string", "nullable": True}, None)
    assert not valid({"type": "string"}, None)
    assert valid({"type": "string", "enum": ["a"], "nullable": True}, None)


def test_conversion_strict_integers_and_formats():
    assert not valid({"type": "integer"}, 1.0)
    assert not valid({"type": "integer"}, True)
    assert not valid({"type": "integer", "format": "int32"}, 2 ** 31)
    assert valid({"type": "integer", "format": "int64"}, 2 ** 31)


def test_conversion_keeps_not_semantics_and_list_keys():
    # Istio's "exactly one of exact/prefix/regex, or none" pattern uses oneOf + not.
    schema = {"type": "object", "properties": {"exact": {"type": "string"}, "prefix": {"type": "string"}},
              "oneOf": [{"not": {"anyOf": [{"required": ["exact"]}, {"required": ["prefix"]}]}},
                        {"required": ["exact"]}, {"required": ["prefix"]}]}
    assert valid(schema, {}) and valid(schema, {"prefix": "/"})
    assert not valid(schema, {"prefix": "/", "exact": "/"})
    listmap = {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
               "items": {"type": "object", "properties": {"name": {"type": "string"}}}}
    assert valid(listmap, [{"name": "a"}, {"name": "b"}])
    assert not valid(listmap, [{"name": "a"}, {"name": "a"}])
    assert not valid({"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}, ["a", "a"])


def test_root_pins_api_version_and_kind():
    root = convert_root({"type": "object", "properties": {"spec": {"type": "object"}}}, "x.io/v1", "Thing")
    validator = StrictValidator(root)
    assert first_error(validator, {"apiVersion": "x.io/v1", "kind": "Thing", "metadata": {}}) is None
    assert first_error(validator, {"apiVersion": "x.io/v2", "kind": "Thing", "metadata": {}}) is not None
    assert first_error(validator, {"apiVersion": "x.io/v1", "kind": "Thing", "metadata": {}, "extra": 1})


@pytest.mark.parametrize("name,scenario,args,ctx,resources", SCENARIOS_ALL,
                         ids=[f"{s[0]}--{s[1]}" for s in SCENARIOS_ALL])
def test_every_template_output_validates_strictly(name, scenario, args, ctx, resources):
    from tests.rendering.support import catalog

    manifests = render(catalog()[name], args, ctx, resources, validate=False)
    validate_manifests(manifests)  # our strict path
    version = kubernetes_version().split("-")[0].lstrip("v")
    for obj in manifests:
        if is_custom_resource(obj["apiVersion"], obj["kind"]):
            continue
        # Built-in kinds: the package's own (uncached) strict validation must agree.
        kubernetes_validate.validate(obj, version, strict=True)


def test_built_in_validator_agrees_on_a_rejection():
    from tests.rendering.support import PLAIN_CTX, catalog

    job = render(catalog()["python"], {}, PLAIN_CTX)[0]
    bad = copy.deepcopy(job)
    bad["spec"]["template"]["spec"]["containers"][0]["imagePullPolice"] = "Always"  # typo'd field
    with pytest.raises(ManifestError) as info:
        validate_manifest(bad)
    assert "imagePullPolice" in str(info.value)
    assert info.value.path == "spec.template.spec.containers[0]"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, kubernetes_version().split("-")[0].lstrip("v"), strict=True)


def test_unknown_kinds_are_refused():
    with pytest.raises(ManifestError) as info:
        validate_manifest({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})
    assert "no schema" in info.value.reason


def test_custom_resource_metadata_is_checked_as_object_meta():
    from tests.rendering.support import PLAIN_CTX, catalog

    job = render(catalog()["pytorch-ddp"], {}, PLAIN_CTX)[0]
    job["metadata"]["lables"] = {"a": "b"}
    with pytest.raises(ManifestError) as info:
        validate_manifest(job)
    assert info.value.path == "metadata" and "lables" in info.value.reason


@pytest.mark.parametrize("mutate,where", [
    (lambda vs: vs["spec"]["http"][0]["route"][0].update(weight="ten"), "spec.http[0].route[0].weight"),
    (lambda vs: vs["spec"]["http"][0].update(retries={"attempts": 3, "bogus": 1}), "spec.http[0].retries"),
    (lambda vs: vs["spec"].update(hosts="digits"), "spec.hosts"),
])
def test_virtual_service_strict(mutate, where):
    from tests.rendering.support import PLAIN_CTX, catalog

    vs = render(catalog()["deploy-service"], {"service_name": "digits", "version": "v2"}, PLAIN_CTX)[-1]
    assert vs["kind"] == "VirtualService"
    mutate(vs)
    with pytest.raises(ManifestError) as info:
        validate_manifest(vs)
    assert info.value.path == where
