"""Builds on Kubernetes: the Kaniko Job (pure rendering, strict-valid) and the worker's drive against the
API-server double (submit, logs copied into the build's log, the image registered for the project)."""
from __future__ import annotations

import pytest

from myapp.images.dockerfile import dockerfile_for
from myapp.images.kaniko import REGISTRY_SECRET, render_build
from myapp.rendering.catalog import get_template
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


def test_registry_credentials_are_set_by_owners_sealed_and_never_answered(app, user, make_user):
    from myapp.extensions import db
    from myapp.models.workspace import RegistryCredentials
    from tests.world import add_member

    project = created(user.post("/api/v1/project/", json={"name": unique("rc")}))
    url = f"/api/v1/image_build/project/{project['id']}/registry_credentials"
    developer, viewer, stranger = make_user(), make_user(), make_user()
    add_member(user, project["id"], developer.username, "developer")
    add_member(user, project["id"], viewer.username, "viewer")
    body = {"registry": "Registry.Example.com:5000", "username": "robot", "password": "pushing-secret-value"}

    assert viewer.get(url).get_json() == {"set": False, "registry": None, "updated_at": None}
    assert developer.put(url, json=body).status_code == 403 and viewer.put(url, json=body).status_code == 403
    assert stranger.get(url).status_code == 404 and stranger.put(url, json=body).status_code == 404
    bad = user.put(url, json={**body, "registry": "https://x/y"})
    assert bad.status_code == 400 and bad.get_json()["errors"][0]["field"] == "registry"
    assert user.put(url, json={k: v for k, v in body.items() if k != "password"}).status_code == 400
    saved = user.put(url, json=body)
    assert saved.status_code == 200 and saved.headers["Cache-Control"] == "no-store"
    shown = viewer.get(url).get_json()
    assert (shown["set"], shown["registry"]) == (True, "registry.example.com:5000")
    assert "pushing-secret-value" not in saved.get_data(as_text=True) + viewer.get(url).get_data(as_text=True)
    with app.app_context():
        row = db.session.get(RegistryCredentials, project["id"])
        assert row.sealed_config.startswith("sealed:") and "pushing-secret-value" not in row.sealed_config
    assert developer.delete(url).status_code == 403
    assert user.delete(url).status_code == 200 and viewer.get(url).get_json()["set"] is False
    assert user.delete(url).status_code == 404  # nothing left to forget


def test_a_build_pushes_with_the_projects_credentials_in_a_secret_of_its_own(app, user, catalog, double,
                                                                            kubernetes_group):
    import base64
    import json

    from myapp.images.drive import drive

    project = created(user.post("/api/v1/project/", json={"name": unique("kc")}))
    assert user.put(f"/api/v1/image_build/project/{project['id']}/registry_credentials", json={
        "registry": "registry.example.com", "username": "robot", "password": "pushing-secret-value"}).status_code == 200
    build = created(user.post("/api/v1/image_build/", json={
        "project_id": project["id"], "repository": "registry.example.com/vision/env", "tag": unique("v"),
        "packages": ["six==1.17.0"], "resource_group_id": kubernetes_group}))
    namespace, name = project["namespace"], f"image-build-build-{build['id']}-1"
    secret = f"image-build-{build['id']}-registry"
    seen = {}

    def kubelet(seconds):  # while the build runs: its Secret holds the config, only push mounts it
        job = double.get("batch/v1", "Job", namespace, name)
        pod = job["spec"]["template"]["spec"]
        volumes = {v["name"]: v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v}
        seen["volumes"] = list(volumes.values())
        seen["mounting"] = [c["name"] for c in (*pod["initContainers"], *pod["containers"])
                            if {m["name"] for m in c.get("volumeMounts", [])} & set(volumes)]
        data = double.get("v1", "Secret", namespace, secret)["data"]
        seen["config"] = json.loads(base64.b64decode(data[".dockerconfigjson"]))
        double.set_status("batch/v1", "Job", namespace, name, {
            "succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]})

    with app.app_context():
        assert drive(build["id"], poll_seconds=0.01, sleep=kubelet) == "succeeded"
    assert seen["volumes"] == [secret] and seen["mounting"] == ["push"]
    auth = seen["config"]["auths"]["registry.example.com"]
    assert (auth["username"], auth["password"]) == ("robot", "pushing-secret-value")
    assert base64.b64decode(auth["auth"]).decode() == "robot:pushing-secret-value"
    assert double.get("v1", "Secret", namespace, secret) is None  # gone with the build
    log = user.get(f"/api/v1/image_build/{build['id']}/log").get_data(as_text=True)
    assert "pushing with the project's registry credentials" in log and "pushing-secret-value" not in log
