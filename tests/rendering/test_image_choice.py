"""A task's chosen image on Kubernetes: every container of every replica of the templates running the user's
code renders it (the manifests still pass strict schema, operator webhook and policy validation, and the
API-server double stores them as rendered); the platform's own steps refuse a choice, naming `image`."""
from __future__ import annotations

import pytest

from myapp.rendering import ArgumentError, render
from myapp.rendering.image_choice import PLATFORM_STEPS, image_choice_refusal, with_image
from myapp.rendering.pod import pod_templates
from tests.rendering.support import GANG_ARGS, GANG_CTX, REQUIRED_ARGS, catalog

IMAGE = "registry.local:5000/vision/torch-env:v3"
# Several replicas of every replica type each kind has (xgboost's gang scenario has no workers).
USER_CODE = {name: GANG_ARGS[name] | extra for name, extra in {
    "python": {}, "pytorch-ddp": {}, "tf-distributed": {}, "xgboost": {"workers": 2}, "horovod-mpi": {},
    "volcano-job": {}}.items()}


def chosen(name: str) -> list[dict]:
    return render(with_image(catalog()[name], IMAGE), USER_CODE[name], GANG_CTX)


def containers(manifests: list[dict]) -> list[tuple[str, str, str]]:
    """(pod template path, container name, image) of every container and init container."""
    return [(pod.path, c["name"], c["image"]) for m in manifests for pod in pod_templates(m)
            for c in pod.template["spec"].get("initContainers", []) + pod.template["spec"]["containers"]]


@pytest.mark.parametrize("name", sorted(USER_CODE))
def test_every_replicas_container_runs_the_chosen_image(name):
    found = containers(chosen(name))
    assert found and {image for _, _, image in found} == {IMAGE}, found
    default = containers(render(catalog()[name], USER_CODE[name], GANG_CTX))
    assert [(path, c) for path, c, _ in default] == [(path, c) for path, c, _ in found]  # nothing else changed
    assert {image for _, _, image in default} == {catalog()[name]["image"]}


def test_distributed_kinds_render_it_on_each_replica_type():
    paths = {name: {path for path, _, _ in containers(chosen(name))} for name in USER_CODE}
    assert paths["pytorch-ddp"] == {"spec.pytorchReplicaSpecs.Master.template",
                                    "spec.pytorchReplicaSpecs.Worker.template"}
    assert paths["tf-distributed"] >= {"spec.tfReplicaSpecs.PS.template", "spec.tfReplicaSpecs.Worker.template"}
    assert paths["horovod-mpi"] == {"spec.mpiReplicaSpecs.Launcher.template", "spec.mpiReplicaSpecs.Worker.template"}


@pytest.mark.parametrize("name", sorted(PLATFORM_STEPS))
def test_the_platforms_own_steps_refuse_a_chosen_image(name):
    template = catalog()[name]
    assert image_choice_refusal(template) is not None
    with pytest.raises(ArgumentError) as caught:
        with_image(template, IMAGE)
    assert caught.value.field == "image"
    assert with_image(template, None) is template
    assert render(with_image(template, None), REQUIRED_ARGS.get(name, {}), GANG_CTX)  # unchanged without a choice


def test_every_catalog_template_is_either_user_code_or_a_platform_step():
    """A template added to the catalog must be placed on one side (and the editor's copy follows)."""
    assert set(catalog()) == set(USER_CODE) | PLATFORM_STEPS
    assert all(image_choice_refusal(catalog()[name]) is None for name in USER_CODE)


@pytest.mark.parametrize("name", ["pytorch-ddp", "horovod-mpi", "volcano-job"])
def test_the_api_server_double_stores_the_chosen_image(double, k8s_backend, name):
    objs = chosen(name)
    k8s_backend.submit(objs)
    stored = [double.get(o["apiVersion"], o["kind"], o["metadata"]["namespace"], o["metadata"]["name"]) for o in objs]
    assert {image for _, _, image in containers(stored)} == {IMAGE}
