"""The `render` preview command."""
from __future__ import annotations

import json

import yaml
from click.testing import CliRunner

from myapp.rendering.cli import render_command


def run(*args: str):
    return CliRunner().invoke(render_command, list(args))


def test_prints_all_manifests_as_multi_document_yaml():
    result = run("pytorch-ddp", "--set", "workers=3", "--set", "epochs=2", "--project", "vision",
                 "--namespace", "proj-vision", "--run-id", "7", "--service-account", "vision-runner",
                 "--gpu", "1", "--resource-group",
                 json.dumps({"name": "a100", "gpu_type": "A100", "queue": "q1", "gang_scheduling": True}))
    assert result.exit_code == 0, result.output
    docs = list(yaml.safe_load_all(result.output))
    assert [d["kind"] for d in docs] == ["PodGroup", "PyTorchJob"]
    assert docs[1]["spec"]["pytorchReplicaSpecs"]["Worker"]["replicas"] == 3
    assert docs[1]["metadata"]["namespace"] == "proj-vision"
    assert result.output.startswith("---\n")


def test_args_json_and_set_precedence():
    result = run("python", "--args", json.dumps({"script": "print(1)", "timeout_seconds": 5}),
                 "--set", "timeout_seconds=9")
    assert result.exit_code == 0, result.output
    job = yaml.safe_load(result.output)
    assert job["spec"]["activeDeadlineSeconds"] == 9
    assert job["spec"]["template"]["spec"]["containers"][0]["args"][:2] == ["--script", "print(1)"]


def test_bad_argument_exits_non_zero_naming_the_field():
    result = run("pytorch-ddp", "--set", "epochs=many")
    assert result.exit_code != 0
    assert "'epochs'" in result.output and "integer" in result.output
    result = run("pytorch-ddp", "--set", "nonsense=1")
    assert result.exit_code != 0 and "'nonsense'" in result.output
    result = run("pytorch-ddp", "--memory", "1Ti")
    assert result.exit_code != 0 and "resources.memory" in result.output
    result = run("deploy-service")
    assert result.exit_code != 0 and "'service_name'" in result.output and "required" in result.output


def test_a_chosen_image_runs_on_every_replica_and_platform_steps_refuse_it():
    result = run("pytorch-ddp", "--set", "workers=2", "--image", "registry.local/team/env:v1")
    assert result.exit_code == 0, result.output
    (job,) = yaml.safe_load_all(result.output)
    images = {c["image"] for spec in job["spec"]["pytorchReplicaSpecs"].values()
              for c in spec["template"]["spec"]["containers"]}
    assert images == {"registry.local/team/env:v1"}
    result = run("model-register", "--image", "registry.local/team/env:v1", "--args", json.dumps(
        {"model_name": "m", "model_version": "1", "model_path": "s3://b/m"}))
    assert result.exit_code != 0 and "'image'" in result.output and "platform's own step" in result.output


def test_usage_errors():
    assert run("no-such-template").exit_code != 0
    assert "KEY=VALUE" in run("python", "--set", "novalue").output
    assert run("python", "--args", "[1]").exit_code != 0
    result = run("python", "--service-account", "default")
    assert result.exit_code != 0 and "service_account" in result.output
