"""Operator webhook rules: each test breaks one rule in an otherwise valid render."""
from __future__ import annotations

import copy

import pytest

from myapp.rendering import ManifestError, render, validate_manifest, validate_manifests
from tests.rendering.support import GANG_CTX, PLAIN_CTX, REQUIRED_ARGS, catalog


def rendered(name: str, args: dict | None = None, ctx=PLAIN_CTX) -> list[dict]:
    return render(catalog()[name], {**REQUIRED_ARGS.get(name, {}), **(args or {})}, ctx)


def workload(manifests: list[dict]) -> dict:
    return copy.deepcopy(next(m for m in manifests if m["kind"] not in ("PodGroup", "AuthorizationPolicy")))


def broken(obj: dict, path: str, words: str) -> None:
    with pytest.raises(ManifestError) as info:
        validate_manifest(obj)
    assert info.value.path == path, str(info.value)
    assert words in info.value.reason, str(info.value)
    assert info.value.obj == f"{obj['kind']}/{obj['metadata']['name']}"


def specs(obj: dict) -> dict:
    field = {"PyTorchJob": "pytorchReplicaSpecs", "TFJob": "tfReplicaSpecs", "XGBoostJob": "xgbReplicaSpecs",
             "MPIJob": "mpiReplicaSpecs"}[obj["kind"]]
    return obj["spec"][field]


@pytest.mark.parametrize("name,kind_field,container", [
    ("pytorch-ddp", "pytorchReplicaSpecs", "pytorch"),
    ("tf-distributed", "tfReplicaSpecs", "tensorflow"),
    ("xgboost", "xgbReplicaSpecs", "xgboost"),
    ("horovod-mpi", "mpiReplicaSpecs", "mpi"),
])
def test_wrong_container_name(name, kind_field, container):
    obj = workload(rendered(name))
    validate_manifest(obj)
    rtype = next(iter(specs(obj)))
    specs(obj)[rtype]["template"]["spec"]["containers"][0]["name"] = "main"
    broken(obj, f"spec.{kind_field}.{rtype}.template.spec.containers", f"container named {container!r}")


@pytest.mark.parametrize("name", ["pytorch-ddp", "xgboost"])
def test_two_masters(name):
    obj = workload(rendered(name))
    specs(obj)["Master"]["replicas"] = 2
    broken(obj, f"spec.{'pytorchReplicaSpecs' if name == 'pytorch-ddp' else 'xgbReplicaSpecs'}.Master.replicas",
           "exactly 1 replica")


@pytest.mark.parametrize("name", ["pytorch-ddp", "xgboost"])
def test_master_required(name):
    obj = workload(rendered(name))
    del specs(obj)["Master"]
    with pytest.raises(ManifestError, match="exactly one Master"):
        validate_manifest(obj)


def test_tfjob_chief_and_master_together():
    obj = workload(rendered("tf-distributed"))
    specs(obj)["Master"] = copy.deepcopy(specs(obj)["Chief"])
    broken(obj, "spec.tfReplicaSpecs", "more than 1 Chief or Master")


def test_tfjob_two_chiefs():
    obj = workload(rendered("tf-distributed"))
    specs(obj)["Chief"]["replicas"] = 2
    broken(obj, "spec.tfReplicaSpecs.Chief.replicas", "exactly 1 replica")


@pytest.mark.parametrize("name,rtype", [("pytorch-ddp", "Chief"), ("tf-distributed", "Launcher"),
                                        ("xgboost", "PS"), ("horovod-mpi", "Master")])
def test_replica_type_not_allowed(name, rtype):
    obj = workload(rendered(name))
    first = next(iter(specs(obj)))
    specs(obj)[rtype] = copy.deepcopy(specs(obj)[first])
    with pytest.raises(ManifestError, match=f"replica type '{rtype}' not supported"):
        validate_manifest(obj)


def test_mpi_launcher_rules():
    obj = workload(rendered("horovod-mpi"))
    specs(obj)["Launcher"]["replicas"] = 2
    broken(obj, "spec.mpiReplicaSpecs.Launcher.replicas", "exactly 1 replica")
    obj = workload(rendered("horovod-mpi"))
    del specs(obj)["Launcher"]
    with pytest.raises(ManifestError, match="exactly one Launcher"):
        validate_manifest(obj)
    obj = workload(rendered("horovod-mpi"))
    obj["spec"]["mainContainer"] = "trainer"  # then the controller looks for "trainer"
    broken(obj, "spec.mpiReplicaSpecs.Launcher.template.spec.containers", "container named 'trainer'")


@pytest.mark.parametrize("policy", ["Sometimes", "always", ""])
def test_restart_policy_enum(policy):
    obj = workload(rendered("pytorch-ddp"))
    specs(obj)["Worker"]["restartPolicy"] = policy
    broken(obj, "spec.pytorchReplicaSpecs.Worker.restartPolicy", "must be one of")


@pytest.mark.parametrize("policy", ["ExitCode", "Always", "OnFailure", "Never"])
def test_restart_policy_allowed(policy):
    obj = workload(rendered("pytorch-ddp"))
    specs(obj)["Worker"]["restartPolicy"] = policy
    validate_manifest(obj)


@pytest.mark.parametrize("name", ["pytorch-ddp", "tf-distributed", "xgboost", "horovod-mpi"])
def test_clean_pod_policy_enum(name):
    obj = workload(rendered(name))
    obj["spec"]["runPolicy"]["cleanPodPolicy"] = "Finished"
    broken(obj, "spec.runPolicy.cleanPodPolicy", "must be one of")


@pytest.mark.parametrize("name", ["pytorch-ddp", "tf-distributed", "xgboost", "horovod-mpi", "volcano-job",
                                  "python", "notebook"])
def test_metadata_name_must_be_dns(name):
    obj = workload(rendered(name))
    obj["metadata"]["name"] = "Train_Job"
    with pytest.raises(ManifestError) as info:
        validate_manifest(obj)
    assert info.value.path == "metadata.name"


def test_training_job_names_start_with_a_letter():
    obj = workload(rendered("pytorch-ddp"))
    obj["metadata"]["name"] = "1-train"  # a DNS-1123 label, but not DNS-1035 as the webhook wants
    broken(obj, "metadata.name", "DNS-1035")


def test_pytorch_worker_replicas_at_least_one():
    obj = workload(rendered("pytorch-ddp"))
    specs(obj)["Worker"]["replicas"] = 0
    broken(obj, "spec.pytorchReplicaSpecs.Worker.replicas", "at least 1")


def test_volcano_rules():
    obj = workload(rendered("volcano-job"))
    obj["spec"]["minAvailable"] = 99
    broken(obj, "spec.minAvailable", "must not exceed the total replicas")
    obj = workload(rendered("volcano-job"))
    obj["spec"]["tasks"].append(copy.deepcopy(obj["spec"]["tasks"][0]))
    broken(obj, "spec.tasks[1].name", "duplicate task name")
    obj = workload(rendered("volcano-job"))
    obj["spec"]["policies"][0]["action"] = "Explode"
    broken(obj, "spec.policies[0].action", "must be one of")
    obj = workload(rendered("volcano-job"))
    obj["spec"]["tasks"][0]["template"]["spec"]["restartPolicy"] = "Always"
    broken(obj, "spec.tasks[0].template.spec.restartPolicy", "Never or OnFailure")


def test_notebook_needs_a_container_with_image():
    obj = workload(rendered("notebook"))
    obj["spec"]["template"]["spec"]["containers"][0]["image"] = ""
    broken(obj, "spec.template.spec.containers[0].image", "is required")


def test_virtual_service_weights_add_up():
    manifests = rendered("deploy-service", {"previous_version": "v1", "canary_weight": 30})
    vs = copy.deepcopy(manifests[-1])
    assert [r["weight"] for r in vs["spec"]["http"][0]["route"]] == [70, 30]
    vs["spec"]["http"][0]["route"][0]["weight"] = 80
    broken(vs, "spec.http[0].route", "add up to 100")


def test_gang_scheduling_consistency_across_objects():
    manifests = copy.deepcopy(rendered("pytorch-ddp", {"workers": 3}, GANG_CTX))
    assert manifests[0]["kind"] == "PodGroup" and manifests[0]["spec"]["minMember"] == 4
    manifests[0]["spec"]["minMember"] = 3
    with pytest.raises(ManifestError, match="must equal the number of pods"):
        validate_manifests(manifests)
    with pytest.raises(ManifestError, match="not rendered"):
        validate_manifests(copy.deepcopy(rendered("pytorch-ddp", {}, GANG_CTX))[1:])
