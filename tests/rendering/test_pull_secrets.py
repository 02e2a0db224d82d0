"""A catalog image's `pull_secret` on Kubernetes: every pod template running the image carries
imagePullSecrets naming it (the name comes as plain data, RenderContext.pull_secrets), for every kind a
catalog image can run in; the manifests still pass strict validation against the Kubernetes schemas and the
CRDs the repository carries. Pods not running such an image carry none."""
from __future__ import annotations

from dataclasses import replace

import pytest

from myapp.rendering import ContextError, render
from myapp.rendering.image_choice import with_image
from myapp.rendering.pod import containers, pod_templates
from myapp.serving import manifests as serving
from tests.rendering.support import GANG_ARGS, GANG_CTX, PLAIN_CTX, REQUIRED_ARGS, catalog

PRIVATE = "registry.private:5000/vision/torch:2.3"
SECRET = "vision-registry"
WITH_SECRET = replace(GANG_CTX, pull_secrets={PRIVATE: SECRET, "docker.io/other/unused:1": "other-registry"})
# The kind each template renders, as the pod templates' owners: every kind a catalog image can run in.
KINDS = {"python": "Job", "pytorch-ddp": "PyTorchJob", "tf-distributed": "TFJob", "xgboost": "XGBoostJob",
         "horovod-mpi": "MPIJob", "volcano-job": "Job", "notebook": "Notebook"}


def pods(manifests: list[dict]) -> list[tuple[str, str, dict]]:
    return [(m["kind"], pod.path, pod.template["spec"]) for m in manifests for pod in pod_templates(m)]


def images(spec: dict) -> set[str]:
    return {c["image"] for _, c in containers(spec)}


@pytest.mark.parametrize("name", sorted(KINDS))
def test_every_pod_running_the_image_pulls_with_its_secret(name):
    args = {**REQUIRED_ARGS.get(name, {}), **GANG_ARGS.get(name, {})}
    template = {**catalog()[name], "image": PRIVATE}  # a template naming the private image
    found = pods(render(template, args, WITH_SECRET))  # strict validation included (render's default)
    assert found and {kind for kind, _, _ in found} == {KINDS[name]}
    for _, path, spec in found:
        assert images(spec) == {PRIVATE}, path
        assert spec["imagePullSecrets"] == [{"name": SECRET}], path
    # The image as it is otherwise: no Secret of any other image rides along.
    assert all("imagePullSecrets" not in spec for _, _, spec in pods(render(catalog()[name], args, WITH_SECRET)))


def test_the_distributed_kinds_carry_it_on_every_replica_type():
    args = GANG_ARGS["pytorch-ddp"]
    paths = {path for _, path, spec in pods(render(with_image(catalog()["pytorch-ddp"], PRIVATE), args, WITH_SECRET))
             if spec.get("imagePullSecrets") == [{"name": SECRET}]}
    assert paths == {"spec.pytorchReplicaSpecs.Master.template", "spec.pytorchReplicaSpecs.Worker.template"}
    paths = {path for _, path, spec in pods(render(with_image(catalog()["horovod-mpi"], PRIVATE),
                                                   GANG_ARGS["horovod-mpi"], WITH_SECRET))
             if spec.get("imagePullSecrets") == [{"name": SECRET}]}
    assert paths == {"spec.mpiReplicaSpecs.Launcher.template", "spec.mpiReplicaSpecs.Worker.template"}


def test_a_notebook_of_the_image_pulls_with_its_secret():
    args = {**REQUIRED_ARGS["notebook"], "image": PRIVATE}
    (notebook,) = [m for m in render(catalog()["notebook"], args, PLAIN_CTX) if m["kind"] == "Notebook"]
    assert "imagePullSecrets" not in notebook["spec"]["template"]["spec"]
    (notebook,) = [m for m in render(catalog()["notebook"], args, replace(PLAIN_CTX, pull_secrets={PRIVATE: SECRET}))
                   if m["kind"] == "Notebook"]
    assert notebook["spec"]["template"]["spec"]["imagePullSecrets"] == [{"name": SECRET}]


SERVICE = serving.ServiceSpec(id=7, name="digits", project="vision", namespace="proj-vision",
                              service_account="proj-vision-runner", pull_secrets={PRIVATE: SECRET})
VERSION = serving.VersionSpec(id=11, version=3, framework="sklearn", uri="s3://models/digits.joblib", image=PRIVATE)


def test_a_model_server_of_the_image_pulls_with_its_secret():
    """The Deployment (beside its fetch init container) and KServe's predictor."""
    deployment = [(kind, spec) for kind, _, spec in pods(serving.model_server(SERVICE, VERSION))]
    assert [kind for kind, _ in deployment] == ["Deployment"]
    assert PRIVATE in images(deployment[0][1])
    assert deployment[0][1]["imagePullSecrets"] == [{"name": SECRET}]
    predictor = [(kind, spec) for kind, _, spec in pods(serving.kserve(SERVICE, VERSION))]
    assert [kind for kind, _ in predictor] == ["InferenceService"]
    assert predictor[0][1]["imagePullSecrets"] == [{"name": SECRET}]
    # The router runs the platform's own image: nothing to pull with.
    assert all("imagePullSecrets" not in spec for _, _, spec in pods(serving.router(SERVICE)))


def test_a_build_job_pulls_its_own_images_with_theirs():
    """The Kaniko Job's containers run the platform's pinned images; one of them mirrored privately (and in
    the catalog with a Secret) is pulled with it. The base image of the Dockerfile is Kaniko's to pull."""
    rendered = render(catalog()["image-build"], REQUIRED_ARGS["image-build"], PLAIN_CTX)
    ((_, _, spec),) = pods(rendered)
    assert "imagePullSecrets" not in spec
    push = next(c["image"] for _, c in containers(spec) if c["name"] == "push")
    ((_, _, spec),) = pods(render(catalog()["image-build"], REQUIRED_ARGS["image-build"],
                                  replace(PLAIN_CTX, pull_secrets={push: "mirror-registry", PRIVATE: SECRET})))
    assert spec["imagePullSecrets"] == [{"name": "mirror-registry"}]


@pytest.mark.parametrize("bad", [{PRIVATE: "Not_A_Name"}, {PRIVATE: ""}, {"": SECRET}, {PRIVATE: None}, [PRIVATE]])
def test_a_bad_pull_secret_is_refused_naming_the_field(bad):
    with pytest.raises(ContextError) as caught:
        render(catalog()["python"], {}, replace(PLAIN_CTX, pull_secrets=bad))
    assert caught.value.field == "pull_secrets"
