"""Builds on Kubernetes: the Kaniko Job (pure rendering, strict-valid) and the worker's drive against the
API-server double (submit, logs copied into the build's log, the image registered for the project)."""
from __future__ import annotations

import pytest

from myapp.catalog import get_template
from myapp.images.dockerfile import dockerfile_for
from myapp.images.kaniko import REGISTRY_SECRET, render_build
from myapp.rendering.kinds.imagebuild import DOCKER_CONFIG
from tests.k8s_double import make_pod, terminated_state
from tests.support import unique
from tests.world import created

DOCKERFILE = dockerfile_for("python:3.11-slim", ["six==1.17.0"], ["libgomp1"])


def render(**kwargs):
    options = {"project": "vision", "namespace": "team-vision", "service_account": "team-vision-runner",
               "build_id": 7, "reference": "registry.example.com/vision/env:1", "dockerfile": DOCKERFILE}
    return render_build(get_template("image-build"), **{**options, **kwargs})


def test_the_dockerfile_of_a_package_list():
    assert DOCKERFILE == ("FROM python:3.11-slim\n"
                          "RUN apt-get update && apt-get install -y --no-install-recommends libgomp1 "
                          "&& rm -rf /var/lib/apt/lists/*\n"
                          "RUN pip install --no-cache-dir six==1.17.0\n")
    for bad in (("python:3.11\nRUN curl evil", [], []), (None, ["six; curl evil"], []), (None, [], ["a b"])):
        with pytest.raises(ValueError):
            dockerfile_for(*bad)


def test_the_kaniko_job_is_strict_valid_and_only_push_sees_the_credentials():
    (job,) = render()  # render() validates strictly against the schemas; an invalid Job raises
    assert job["kind"] == "Job" and job["metadata"]["namespace"] == "team-vision"
    assert job["metadata"]["name"] == "image-build-build-7-1"
    pod = job["spec"]["template"]["spec"]
    prepare, build = pod["initContainers"]
    (push,) = pod["containers"]
    assert prepare["args"][prepare["args"].index("--dockerfile") + 1] == DOCKERFILE
    assert "--no-push" in build["args"] and "registry.example.com/vision/env:1" in build["args"]
    secret_volumes = {v["name"] for v in pod["volumes"] if "secret" in v}
    assert [v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v] == [REGISTRY_SECRET]
    mounting = [c["name"] for c in (*pod["initContainers"], *pod["containers"])
                if {m["name"] for m in c.get("volumeMounts", [])} & secret_volumes]
    assert mounting == ["push"]  # never the build container, where the Dockerfile's RUN steps run
    assert [m["mountPath"] for m in push["volumeMounts"] if m["name"] in secret_volumes] == [DOCKER_CONFIG]
    # Restricted everywhere but the executor: the pod runs as non-root, drops every capability; Kaniko alone is
    # root with the few capabilities unpacking a base image needs (docs/images.md).
    assert pod["securityContext"]["runAsNonRoot"] is True
    for container in (prepare, push):
        assert container["securityContext"]["capabilities"] == {"drop": ["ALL"]}
        assert container["securityContext"].get("runAsUser", 1) != 0
    assert build["securityContext"]["runAsUser"] == 0 and build["securityContext"]["allowPrivilegeEscalation"] is False


def test_a_destination_that_is_no_registry_path_is_refused():
    from myapp.rendering import RenderError

    with pytest.raises(RenderError) as caught:
        render(reference="just-a-name:1")
    assert "destination" in str(caught.value)


@pytest.fixture()
def kubernetes_group(admin, k8s_backend):
    """A resource group on a Kubernetes cluster whose backend is the real one, on the API-server double."""
    from myapp.backends import registry

    cluster = created(admin.post("/api/v1/cluster/", json={"name": unique("k8s"), "kind": "kubernetes",
                                                          "kube_context": "double"}))
    group = created(admin.post("/api/v1/resource_group/", json={"name": unique("builds"), "cluster_id": cluster["id"],
                                                                "cpu": "8", "memory": "16Gi", "gpus": 0}))
    registry._backends[("cluster", cluster["id"])] = k8s_backend
    yield group["id"]
    registry._backends.pop(("cluster", cluster["id"]), None)


def test_a_build_on_kubernetes_streams_kaniko_logs_and_registers_the_image(app, user, catalog, double,
                                                                           kubernetes_group):
    from myapp.images.drive import drive

    project = created(user.post("/api/v1/project/", json={"name": unique("kb")}))
    build = created(user.post("/api/v1/image_build/", json={
        "project_id": project["id"], "repository": "registry.example.com/vision/env", "tag": unique("v"),
        "packages": ["six==1.17.0"], "apt_packages": ["libgomp1"], "resource_group_id": kubernetes_group}))
    namespace = project["namespace"]
    seen = []

    def kubelet(seconds):  # what the cluster does while the worker waits: the build runs, logs, completes
        seen.append(seconds)
        job = double.get("batch/v1", "Job", namespace, f"image-build-build-{build['id']}-1")
        assert job is not None
        labels = job["spec"]["template"]["metadata"]["labels"]
        pod = f"{job['metadata']['name']}-x1"
        manifest = make_pod(namespace, pod, labels, containers=("push",), phase="Succeeded")
        manifest["spec"]["initContainers"] = [{"name": c, "image": "busybox:1.36"} for c in ("prepare", "build")]
        manifest["status"]["initContainerStatuses"] = [
            {"name": c, "image": "busybox:1.36", "imageID": "", "ready": False, "restartCount": 0,
             "state": terminated_state(0)} for c in ("prepare", "build")]
        double.put(manifest)
        double.append_log(namespace, pod, "INFO Unpacking rootfs", container="build")
        double.append_log(namespace, pod, "pushed registry.example.com/vision/env", container="push")
        double.set_status("batch/v1", "Job", namespace, job["metadata"]["name"], {
            "succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]})

    with app.app_context():
        assert drive(build["id"], poll_seconds=0.01, sleep=kubelet) == "succeeded"
    assert seen
    done = user.get(f"/api/v1/image_build/{build['id']}").get_json()
    assert done["state"] == "succeeded" and done["environment"] is None and done["image_id"]
    lines = [item["line"] for item in user.get(f"/api/v1/image_build/{build['id']}/log").get_json()["items"]]
    assert any("Unpacking rootfs" in line for line in lines) and any("pushed" in line for line in lines), lines
    image = user.get(f"/api/v1/image/{done['image_id']}").get_json()
    assert image["project_id"] == project["id"] and image["repository"] == "registry.example.com/vision/env"


def test_a_failed_kaniko_build_fails_with_the_jobs_reason_and_its_log(app, user, catalog, double, kubernetes_group):
    from myapp.images.drive import drive

    project = created(user.post("/api/v1/project/", json={"name": unique("kf")}))
    build = created(user.post("/api/v1/image_build/", json={
        "project_id": project["id"], "repository": "registry.example.com/vision/env", "tag": unique("v"),
        "dockerfile": "FROM python:3.11-slim\nRUN exit 3\n", "resource_group_id": kubernetes_group}))
    namespace, name = project["namespace"], f"image-build-build-{build['id']}-1"

    def kubelet(seconds):
        pod = f"{name}-x1"
        manifest = make_pod(namespace, pod, {"myapp.io/job-name": name}, containers=("push",), phase="Failed")
        manifest["spec"]["initContainers"] = [{"name": c, "image": "busybox:1.36"} for c in ("prepare", "build")]
        manifest["status"]["initContainerStatuses"] = [
            {"name": c, "image": "busybox:1.36", "imageID": "", "ready": False, "restartCount": 0,
             "state": terminated_state(0 if c == "prepare" else 3)} for c in ("prepare", "build")]
        double.put(manifest)
        double.append_log(namespace, pod, "error building image: RUN exit 3: exit status 3", container="build")
        double.set_status("batch/v1", "Job", namespace, name, {
            "failed": 1, "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}]})

    with app.app_context():
        assert drive(build["id"], poll_seconds=0.01, sleep=kubelet) == "failed"
    done = user.get(f"/api/v1/image_build/{build['id']}").get_json()
    assert done["reason"].startswith("the Kaniko build failed"), done
    assert "RUN exit 3: exit status 3" in done["reason"] and done["image_id"] is None
    assert double.get("batch/v1", "Job", namespace, name) is None  # cleaned up, its log kept in the build's
