"""The Jinja layer: sandboxed, strict, and values only as JSON data."""
from __future__ import annotations

import jinja2
import pytest
from jinja2.sandbox import SandboxedEnvironment

from myapp.rendering.engine import TEMPLATES_DIR, environment, render_object, tojson


def test_environment_is_sandboxed_and_strict():
    env = environment()
    assert isinstance(env, SandboxedEnvironment)
    assert env.undefined is jinja2.StrictUndefined
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("a: {{ missing | tojson }}").render()


def test_values_must_go_through_tojson():
    env = environment()
    assert env.from_string("a: {{ x | tojson }}").render(x="b: c") == 'a: "b: c"'
    with pytest.raises(jinja2.TemplateError, match="tojson"):
        env.from_string("a: {{ x }}").render(x="b: c")


def test_sandbox_blocks_attribute_escapes_even_in_template_source():
    with pytest.raises(jinja2.exceptions.SecurityError):
        environment().from_string("{{ cycler.__init__.__globals__ | tojson }}").render(
            cycler=jinja2.utils.Cycler(1))


def test_one_template_per_kind():
    assert {p.name for p in TEMPLATES_DIR.glob("*.j2")} == {
        "job.yaml.j2", "kaniko-job.yaml.j2", "pytorchjob.yaml.j2", "tfjob.yaml.j2", "xgboostjob.yaml.j2",
        "mpijob.yaml.j2", "volcano-job.yaml.j2", "podgroup.yaml.j2", "deployment.yaml.j2", "service.yaml.j2",
        "hpa.yaml.j2", "virtualservice.yaml.j2", "notebook.yaml.j2",
        "authorizationpolicy.yaml.j2", "persistentvolumeclaim.yaml.j2", "volcano-queue.yaml.j2",
        "inferenceservice.yaml.j2"}


def test_render_object_parses_to_data():
    obj = render_object("service.yaml.j2", {"name": "svc", "selector": {"app": "x: y\n- z"},
                                             "port_name": "http", "target_port": 8080})
    assert obj["spec"]["selector"] == {"app": "x: y\n- z"}
    assert obj["spec"]["ports"][0]["targetPort"] == 8080


def test_tojson_output_is_one_line_json():
    assert tojson("a\u2028b\x85c") == '"a\\u2028b\\u0085c"'
    assert "\n" not in tojson({"k": "multi\nline"})
    with pytest.raises(ValueError):
        tojson(float("nan"))
