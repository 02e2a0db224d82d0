"""What every render gets right: names, labels, env contract, placement, gang scheduling."""
from __future__ import annotations

import dataclasses

import pytest

from myapp.rendering import ContextError, ResourceGroup, render
from myapp.rendering.names import is_dns1035_label, is_label_value, k8s_name, label_value
from myapp.rendering.pod import CONTRACT_ENV, containers, pod_templates
from tests.rendering.support import GANG_CTX, PLAIN_CTX, SCENARIOS_ALL, catalog

LABELS = ("app.kubernetes.io/managed-by", "myapp.io/project", "myapp.io/pipeline", "myapp.io/run", "myapp.io/task")
BATCH_KINDS = {"Job", "PyTorchJob", "TFJob", "XGBoostJob", "MPIJob"}


def all_renders():
    for name, _scenario, args, ctx, resources in SCENARIOS_ALL:
        yield name, ctx, render(catalog()[name], args, ctx, resources)


def test_labels_on_every_object_and_pod_template():
    for name, ctx, manifests in all_renders():
        for obj in manifests:
            assert obj["metadata"]["namespace"] == ctx.namespace
            for label in LABELS:
                assert is_label_value(obj["metadata"]["labels"][label]), (name, obj["kind"], label)
            assert obj["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "myapp"
            for pod in pod_templates(obj):
                if pod.has_metadata:
                    assert set(LABELS) <= set(pod.template["metadata"]["labels"]), (name, pod.path)


def test_env_contract_on_every_container():
    for name, ctx, manifests in all_renders():
        for obj in manifests:
            for pod in pod_templates(obj):
                for where, container in containers(pod.template["spec"]):
                    env = {e["name"]: e for e in container["env"]}
                    assert [e["name"] for e in container["env"]][:len(CONTRACT_ENV)] == list(CONTRACT_ENV)
                    limits = container["resources"]["limits"]
                    assert env["MYAPP_RUN_ID"]["value"] == str(ctx.run_id)
                    assert env["MYAPP_ATTEMPT"]["value"] == str(ctx.attempt)
                    assert env["MYAPP_CPU"]["value"] == limits["cpu"]
                    assert env["MYAPP_MEMORY"]["value"] == limits["memory"]
                    assert env["MYAPP_GPU"]["value"] == limits.get("nvidia.com/gpu", "0")
                    assert all(isinstance(v, str) for v in limits.values()), (name, where)


def test_service_account_and_istio_annotation():
    for name, ctx, manifests in all_renders():
        for obj in manifests:
            for pod in pod_templates(obj):
                # The MPIJob Launcher alone runs under the operator's per-job account (test_security.py).
                launcher = obj["kind"] == "MPIJob" and ".Launcher." in pod.path
                expected = f"{obj['metadata']['name']}-launcher" if launcher else ctx.service_account
                assert pod.template["spec"]["serviceAccountName"] == expected, (name, pod.path)
                assert pod.template["spec"]["automountServiceAccountToken"] is launcher, (name, pod.path)
                annotations = pod.template.get("metadata", {}).get("annotations", {})
                if obj["kind"] in BATCH_KINDS or obj["apiVersion"].startswith("batch.volcano.sh"):
                    assert annotations["sidecar.istio.io/inject"] == "false", (name, pod.path)
                else:
                    assert "sidecar.istio.io/inject" not in annotations


def test_secrets_only_through_secret_key_ref():
    container = render(catalog()["model-register"], {"model_name": "m", "model_version": "1",
                                                     "model_path": "s3://b/m"}, PLAIN_CTX)[0]
    env = {e["name"]: e for e in container["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["PLATFORM_API_TOKEN"] == {"name": "PLATFORM_API_TOKEN", "valueFrom": {
        "secretKeyRef": {"name": "myapp-api-token", "key": "token"}}}
    kaniko = render(catalog()["image-build"], {"destination": "r.io/a/b:1"}, PLAIN_CTX)[0]
    pod = kaniko["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["registry-credentials"]["secret"]["secretName"] == "registry-credentials"
    # Which container mounts it, and nothing else: test_security.py
    assert pod["initContainers"][1]["image"].startswith("gcr.io/kaniko-project/executor:")


@pytest.mark.parametrize("account", ["default", "cluster-admin", "admin", "kubeflow-admin", "root", "", "Bad_SA",
                                     "system:serviceaccount:kube-system:default"])
def test_forbidden_service_accounts(account):
    with pytest.raises(ContextError) as info:
        render(catalog()["python"], {}, dataclasses.replace(PLAIN_CTX, service_account=account))
    assert info.value.field == "service_account"


@pytest.mark.parametrize("field,value", [("namespace", "Proj_Vision"), ("namespace", ""), ("attempt", 0),
                                         ("attempt", True), ("project", ""), ("run_id", 1.5), ("task", "a\x00b"),
                                         ("pipeline", "x" * 300)])
def test_bad_context(field, value):
    with pytest.raises(ContextError) as info:
        render(catalog()["python"], {}, dataclasses.replace(PLAIN_CTX, **{field: value}))
    assert info.value.field == field


def test_bad_resource_group():
    for group, field in [
        (ResourceGroup(name="g", node_selector={"bad key!": "x"}), "resource_group.node_selector"),
        (ResourceGroup(name="g", tolerations=({"key": "k", "operator": "Maybe"},)), "resource_group.tolerations[0]"),
        (ResourceGroup(name="g", gpu_type="A100 80GB"), "resource_group.gpu_type"),
        (ResourceGroup(name="g", queue="Team A"), "resource_group.queue"),
    ]:
        with pytest.raises(ContextError) as info:
            render(catalog()["python"], {}, dataclasses.replace(PLAIN_CTX, resource_group=group))
        assert info.value.field == field


def test_gpu_placement_and_colocation():
    manifests = render(catalog()["tf-distributed"], {"ps": 2, "workers": 3}, GANG_CTX, {"gpu": 2})
    group, job = manifests
    assert group["kind"] == "PodGroup" and group["spec"]["queue"] == "vision-gpu"
    assert group["spec"]["minMember"] == 6  # chief + 2 ps + 3 workers
    assert group["spec"]["minResources"]["nvidia.com/gpu"] == "8"  # ps get no GPU
    for rtype, spec in job["spec"]["tfReplicaSpecs"].items():
        pod = spec["template"]
        assert pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == job["metadata"]["name"]
        assert pod["spec"]["schedulerName"] == "volcano"
        assert pod["spec"]["nodeSelector"] == {"myapp.io/resource-group": "a100-pool"}
        term = pod["spec"]["affinity"]["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]
        assert term["podAffinityTerm"]["labelSelector"]["matchLabels"] == {
            "myapp.io/job-name": job["metadata"]["name"]}
        assert pod["metadata"]["labels"]["myapp.io/job-name"] == job["metadata"]["name"]
        limits = pod["spec"]["containers"][0]["resources"]["limits"]
        if rtype == "PS":
            assert "nvidia.com/gpu" not in limits and "nodeAffinity" not in pod["spec"]["affinity"]
        else:
            assert limits["nvidia.com/gpu"] == "2"
            expr = pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
                "nodeSelectorTerms"][0]["matchExpressions"][0]
            assert expr == {"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-A100-SXM4-80GB"]}
            assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in pod["spec"]["tolerations"]


def test_no_gang_without_resource_group_flag():
    manifests = render(catalog()["pytorch-ddp"], {}, PLAIN_CTX)
    assert [m["kind"] for m in manifests] == ["PyTorchJob"]
    pod = manifests[0]["spec"]["pytorchReplicaSpecs"]["Master"]["template"]
    assert "schedulerName" not in pod["spec"] and "scheduling.k8s.io/group-name" not in pod["metadata"]["annotations"]


def test_volcano_job_gangs_natively():
    manifests = render(catalog()["volcano-job"], {"replicas": 6}, GANG_CTX)
    assert [m["kind"] for m in manifests] == ["Job"]  # Volcano creates the PodGroup itself
    spec = manifests[0]["spec"]
    assert (spec["minAvailable"], spec["queue"], spec["schedulerName"]) == (6, "vision-gpu", "volcano")
    assert render(catalog()["volcano-job"], {"replicas": 6}, PLAIN_CTX)[0]["spec"]["minAvailable"] == 1


def test_names_are_dns_and_unique_when_truncated():
    long_a = "a-very-long-task-name-" * 5 + "alpha"
    long_b = "a-very-long-task-name-" * 5 + "beta"
    names = set()
    for task in (long_a, long_b, "Train Model", "train-model", "训练"):
        ctx = dataclasses.replace(PLAIN_CTX, task=task)
        name = render(catalog()["python"], {}, ctx)[0]["metadata"]["name"]
        assert is_dns1035_label(name) and len(name) <= 52, name
        names.add(name)
    assert len(names) == 5
    assert k8s_name("train", 42, 1) == "train-42-1"  # already valid: kept readable
    assert k8s_name(long_a) == k8s_name(long_a)  # stable


def test_label_values_are_sanitised_with_hash():
    assert label_value("vision") == "vision"
    assert label_value("") == ""
    for raw in ("Computer Vision!", "x" * 80, "-leading", "中文项目", "a/b"):
        value = label_value(raw)
        assert is_label_value(value) and value != raw
    assert label_value("Computer Vision!") != label_value("Computer Vision?")


def test_run_id_and_attempt_change_the_name():
    first = render(catalog()["python"], {}, PLAIN_CTX)[0]["metadata"]["name"]
    retry = render(catalog()["python"], {}, dataclasses.replace(PLAIN_CTX, attempt=2))[0]["metadata"]["name"]
    assert first != retry


def test_template_dict_is_not_mutated():
    import copy

    template = catalog()["pytorch-ddp"]
    before = copy.deepcopy(template)
    render(template, {"workers": 1}, GANG_CTX)
    assert template == before


def test_deploy_service_traffic_split():
    manifests = render(catalog()["deploy-service"], {"service_name": "digits", "version": "v3",
                                                      "previous_version": "v2", "canary_weight": 20}, PLAIN_CTX)
    kinds = [(m["kind"], m["metadata"]["name"]) for m in manifests]
    assert kinds == [("Deployment", "digits-v3"), ("Service", "digits-v3"), ("Service", "digits"),
                     ("HorizontalPodAutoscaler", "digits-v3"), ("VirtualService", "digits")]
    route = manifests[-1]["spec"]["http"][0]["route"]
    assert [(r["destination"]["host"], r["weight"]) for r in route] == [
        ("digits-v2.proj-vision.svc.cluster.local", 80), ("digits-v3.proj-vision.svc.cluster.local", 20)]
    assert manifests[3]["apiVersion"] == "autoscaling/v2"
    assert manifests[-1]["apiVersion"] == "networking.istio.io/v1"


def test_notebook_routing_prefix():
    manifests = render(catalog()["notebook"], {"name": "nb1"}, PLAIN_CTX)
    _policy, notebook, _claim, service, vs, _outputs_claim = manifests
    assert notebook["apiVersion"] == "kubeflow.org/v1" and notebook["kind"] == "Notebook"
    assert vs["spec"]["http"][0]["match"][0]["uri"]["prefix"] == "/notebook/vision/nb1/"
    env = {e["name"]: e.get("value") for e in notebook["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["NB_PREFIX"] == "/notebook/vision/nb1"
    assert service["spec"]["selector"] == {"statefulset": "nb1"}
