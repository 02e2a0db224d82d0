"""What a service's parts render to (myapp/serving/manifests.py): strictly valid against the schemas
(the VirtualService against Istio's CRD), labelled as the platform's, named per version."""
from __future__ import annotations

import pytest

from myapp.rendering import ArgumentError, validate_manifests
from myapp.rendering.contract import MANAGED_BY_LABEL, PIPELINE_LABEL, PROJECT_LABEL, TASK_LABEL, TEMPLATE_LABEL
from myapp.rendering.pod import pod_templates
from myapp.serving import manifests

SERVICE = manifests.ServiceSpec(id=7, name="digits", project="demo", namespace="demo", service_account="demo-jobs",
                                min_replicas=2, max_replicas=5, autoscale_metric="rps", autoscale_target=50)
V3 = manifests.VersionSpec(id=11, version=3, framework="onnx", uri="/data/demo/digits.onnx",
                           signature={"shape": [None, 64], "dtype": "float32"})


def by_kind(objects: list[dict]) -> dict[str, dict]:
    return {obj["kind"]: obj for obj in objects}


def test_a_version_is_a_deployment_a_service_and_an_autoscaler():
    objects = manifests.model_server(SERVICE, V3)
    validate_manifests(objects)
    kinds = by_kind(objects)
    assert {o["metadata"]["name"] for o in objects} == {"digits-v3"}
    container = kinds["Deployment"]["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["python", "/app/main.py"]
    assert container["args"] == ["--version", "v3", "--model-path", "/data/demo/digits.onnx", "--framework", "onnx",
                                 "--signature", '{"dtype": "float32", "shape": [null, 64]}', "--port", "8080"]
    assert kinds["Deployment"]["spec"]["replicas"] == 2
    assert kinds["Service"]["spec"]["selector"] == {"app": "digits", "version": "v3"}
    hpa = kinds["HorizontalPodAutoscaler"]["spec"]
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (2, 5)
    assert hpa["metrics"] == [{"type": "Pods", "pods": {"metric": {"name": "requests_per_second"},
                                                        "target": {"type": "AverageValue", "averageValue": "50"}}}]
    labels = kinds["Deployment"]["metadata"]["labels"]
    assert (labels[MANAGED_BY_LABEL], labels[PROJECT_LABEL], labels[PIPELINE_LABEL], labels[TASK_LABEL],
            labels[TEMPLATE_LABEL]) == ("myapp", "demo", "serving", "digits-v3", "deploy-service")


@pytest.mark.parametrize(("metric", "name"), [("cpu", None), ("gpu", "DCGM_FI_DEV_GPU_UTIL")])
def test_autoscaling_on_cpu_or_gpu(metric, name):
    from dataclasses import replace

    hpa = by_kind(manifests.model_server(replace(SERVICE, autoscale_metric=metric), V3))["HorizontalPodAutoscaler"]
    (rule,) = hpa["spec"]["metrics"]
    if name is None:
        assert rule["resource"] == {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}
    else:
        assert rule["pods"]["metric"]["name"] == name


def test_the_split_is_one_virtualservice_with_weights_and_a_mirror():
    objects = manifests.traffic(SERVICE, {11: 70, 12: 30}, {11: "v3", 12: "v4", 13: "v5"}, 13, 25)
    validate_manifests(objects)  # the VirtualService against Istio's CRD, strictly
    kinds = by_kind(objects)
    (http,) = kinds["VirtualService"]["spec"]["http"]
    assert [(r["destination"]["host"], r["weight"]) for r in http["route"]] == [
        ("digits-v3.demo.svc.cluster.local", 70), ("digits-v4.demo.svc.cluster.local", 30)]
    assert http["mirror"]["host"] == "digits-v5.demo.svc.cluster.local"
    assert http["mirrorPercentage"] == {"value": 25.0}
    assert kinds["Service"]["spec"]["selector"] == {"app": "digits"}
    with pytest.raises(ArgumentError, match="add up to 100"):
        manifests.traffic(SERVICE, {11: 70, 12: 20}, {11: "v3", 12: "v4"}, None, 100)


def test_the_router_and_every_model_server_read_the_services_token_from_its_secret():
    """By secretKeyRef, never a value or an argument; the model download's init container gets none."""
    ref = {"secretKeyRef": {"name": "myapp-serving-7-router", "key": "token"}}
    (deployment,) = manifests.router(SERVICE)
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["python", "/app/router.py"]
    assert next(e for e in container["env"] if e["name"] == "ROUTER_TOKEN")["valueFrom"] == ref
    assert deployment["metadata"]["name"] == "digits-router"
    remote = manifests.VersionSpec(id=12, version=4, framework="sklearn", uri="s3://models/digits.joblib")
    for objects in (manifests.model_server(SERVICE, V3), manifests.model_server(SERVICE, remote),
                    manifests.kserve(SERVICE, V3), manifests.kserve(SERVICE, remote, shadow=True)):
        validate_manifests(objects)
        (pod,) = [p.template["spec"] for o in objects for p in pod_templates(o)]
        (server,) = pod["containers"]
        assert [e["valueFrom"] for e in server["env"] if e["name"] == "SERVING_TOKEN"] == [ref]
        assert not any("TOKEN" in e["name"] for c in pod.get("initContainers", []) for e in c["env"])


def test_a_model_in_a_tasks_outputs_mounts_that_attempt_read_only():
    """Kubernetes: the project's outputs claim, read-only, with the attempt's folder as subPath at the path
    the version names; nothing of it for a model elsewhere. Strict-valid, for a Deployment and KServe."""
    import dataclasses

    uri = "/myapp/outputs/12/train/2/model.onnx"
    version = dataclasses.replace(V3, uri=uri)
    volume = {"name": "myapp-outputs", "persistentVolumeClaim": {"claimName": "myapp-outputs", "readOnly": True}}
    mount = {"name": "myapp-outputs", "mountPath": "/myapp/outputs/12/train/2", "subPath": "12/train/2",
             "readOnly": True}
    deployment = by_kind(manifests.model_server(SERVICE, version))["Deployment"]["spec"]["template"]["spec"]
    predictor = by_kind(manifests.kserve(SERVICE, version))["InferenceService"]["spec"]["predictor"]
    for pod in (deployment, predictor):
        assert volume in pod["volumes"] and mount in pod["containers"][0]["volumeMounts"], pod
        assert uri in pod["containers"][0]["args"]
    plain = by_kind(manifests.model_server(SERVICE, V3))["Deployment"]["spec"]["template"]["spec"]
    assert "myapp-outputs" not in str(plain)
