"""A catalog image's `pull_secret` through the Kubernetes backend, on the API-server double: a task's Job and a
notebook's Notebook running the image are submitted with imagePullSecrets naming it (the project's own images
and the shared catalog's; another project's are not consulted), and an attempt whose pull fails says which
Secret its pods pulled with (the platform may not read Secrets to tell whether it exists)."""
from __future__ import annotations

import pytest

from myapp.backends.base import JobState
from myapp.backends.kubernetes import adapters
from tests.backends.kubernetes.test_notebook_lifecycle import reconcile, row
from tests.k8s_double.pods import make_pod
from tests.support import unique
from tests.world import created

SECRET = "team-registry"


@pytest.fixture()
def world(app, admin, user, catalog):
    from myapp.extensions import db
    from myapp.models import Image

    project = created(user.post("/api/v1/project/", json={"name": unique("pull")}))
    other = created(admin.post("/api/v1/project/", json={"name": unique("other")}))
    private = created(admin.post("/api/v1/image/", json={"repository": "registry.private:5000/acme/torch",
                                                         "tag": unique("v"), "pull_secret": SECRET}))
    public = created(admin.post("/api/v1/image/", json={"repository": "ghcr.io/acme/torch", "tag": unique("v")}))
    with app.app_context():
        foreign = Image(repository="registry.private:5000/other/env", tag=unique("v"), project_id=other["id"],
                        pull_secret="other-registry")
        db.session.add(foreign)
        db.session.commit()
        refs = {"foreign": f"{foreign.repository}:{foreign.tag}"}
    refs |= {key: f"{image['repository']}:{image['tag']}" for key, image in (("private", private), ("public", public))}
    pipeline = created(user.post("/api/v1/pipeline/", json={"project_id": project["id"], "name": "p"}))
    return {"project": project, "pipeline": pipeline, "refs": refs, "ns": project["namespace"]}


def test_only_the_projects_images_with_a_secret_are_mapped(app, world):
    from myapp.pipelines.images import pull_secrets

    with app.app_context():
        mapped = pull_secrets(world["project"]["id"])
    assert mapped[world["refs"]["private"]] == SECRET
    assert world["refs"]["public"] not in mapped and world["refs"]["foreign"] not in mapped


def test_a_tasks_job_is_submitted_pulling_with_the_images_secret(app, user, world, catalog, double, k8s_backend):
    from myapp.extensions import db
    from myapp.models import Task
    from myapp.pipelines.manifests import render_task

    submitted = {}
    for key in ("private", "public"):
        task = created(user.post("/api/v1/task/", json={"pipeline_id": world["pipeline"]["id"], "name": unique("t"),
                                                        "template_id": catalog, "image": world["refs"][key]}))
        with app.app_context():
            ref = k8s_backend.submit(render_task(db.session.get(Task, task["id"]), 1))
        job = double.get("batch/v1", "Job", world["ns"], ref.primary.name)
        submitted[key] = (ref, job["spec"]["template"]["spec"])
    assert submitted["private"][1]["imagePullSecrets"] == [{"name": SECRET}]
    assert "imagePullSecrets" not in submitted["public"][1]

    # The pull fails (the Secret missing or wrong): the attempt's reason names the Secret and the namespace.
    ref, spec = submitted["private"]
    pod = make_pod(world["ns"], f"{ref.primary.name}-abcde", {"myapp.io/job-name": ref.job_name}, phase="Pending",
                   image=world["refs"]["private"], container_statuses=[{
                       "name": "main", "ready": False, "restartCount": 0, "imageID": "",
                       "state": {"waiting": {"reason": "ErrImagePull", "message": "401 Unauthorized"}}}])
    pod["spec"]["imagePullSecrets"] = spec["imagePullSecrets"]
    double.put(pod)
    status = k8s_backend.status(ref)
    assert status.state is not JobState.SUCCEEDED
    assert (f"ErrImagePull: 401 Unauthorized (pulled with Secret {SECRET}: it must exist in namespace "
            f"{world['ns']} and hold this registry's credentials)") in status.reason


def test_a_notebook_of_the_image_is_submitted_pulling_with_its_secret(app, user, world, double, k8s_backend,
                                                                      tmp_path):
    ns = world["ns"]
    notebook = created(user.post("/api/v1/notebook/", json={
        "project_id": world["project"]["id"], "name": "lab", "image": world["refs"]["private"]}))
    assert reconcile(app, notebook["id"], k8s_backend, tmp_path) == "pending"
    stored = double.get("kubeflow.org/v1", "Notebook", ns, "lab")
    assert stored["spec"]["template"]["spec"]["imagePullSecrets"] == [{"name": SECRET}]

    pod = make_pod(ns, "lab-0", {"notebook-name": "lab", "statefulset": "lab"}, containers=("lab",),
                   phase="Pending", image=world["refs"]["private"], container_statuses=[{
                       "name": "lab", "ready": False, "restartCount": 0, "imageID": "",
                       "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image"}}}])
    pod["spec"]["imagePullSecrets"] = [{"name": SECRET}]
    double.put(pod)
    assert reconcile(app, notebook["id"], k8s_backend, tmp_path) == "failed"
    assert row(app, notebook["id"])["reason"].endswith(
        f"ImagePullBackOff: Back-off pulling image (pulled with Secret {SECRET}: it must exist in namespace {ns} "
        "and hold this registry's credentials)")


def test_a_pod_without_pull_secrets_gets_no_hint():
    pod = make_pod("ns", "p", None, phase="Pending", container_statuses=[{
        "name": "main", "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off"}}}])
    assert adapters.pull_secret_hint(pod, "ImagePullBackOff") == ""
    assert adapters.pod_problems([pod]) == [("image", "p: ImagePullBackOff: Back-off")]
