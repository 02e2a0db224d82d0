"""A Kaniko build's calls that stop and remove its Job (cleanup, its registry Secret's delete, a cancel at the
timeout) run with no transaction of the worker open: they take seconds against a slow API server, and the
build's row must be free for other writers (a delete of its project) meanwhile."""
from __future__ import annotations

import pytest

from tests.support import StopProbe, unique
from tests.world import created

pytestmark = pytest.mark.backends  # what each database holds while the worker waits


@pytest.fixture()
def probing(kubernetes_group, k8s_backend) -> StopProbe:
    """The group's backend, probed."""
    from myapp.backends import registry
    from myapp.models import ImageBuild

    key = next(k for k, v in registry._backends.items() if v is k8s_backend)
    registry._backends[key] = wrapped = StopProbe(k8s_backend, ImageBuild, "tag")
    return wrapped


@pytest.mark.parametrize("outcome", ["failed", "timed out"])
def test_the_kaniko_job_is_removed_with_no_transaction_open(app, user, catalog, double, kubernetes_group, probing,
                                                            outcome, monkeypatch):
    """The Job ends (failed) or the build times out (cancelled): either way its Job and the build's registry
    Secret are removed with nothing held, and the build says why it failed."""
    from myapp.images.drive import drive

    project = created(user.post("/api/v1/project/", json={"name": unique("kc")}))
    assert user.put(f"/api/v1/image_build/project/{project['id']}/registry_credentials", json={
        "registry": "registry.example.com", "username": "robot", "password": "s3cret-pass"}).status_code == 200
    build = created(user.post("/api/v1/image_build/", json={
        "project_id": project["id"], "repository": "registry.example.com/vision/env", "tag": unique("v"),
        "dockerfile": "FROM python:3.11-slim\nRUN exit 3\n", "resource_group_id": kubernetes_group}))
    probing.row_id = build["id"]
    name = f"image-build-build-{build['id']}-1"
    if outcome == "timed out":
        monkeypatch.setitem(app.config, "MYAPP_ENV_BUILD_TIMEOUT", 0.001)

    def kubelet(seconds):  # the cluster, while the worker waits: the Job fails (or never ends: timed out)
        if outcome == "failed":
            double.set_status("batch/v1", "Job", project["namespace"], name, {
                "failed": 1, "conditions": [{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}]})

    with app.app_context():
        assert drive(build["id"], poll_seconds=0.01, sleep=kubelet) == "failed"
    calls = [call[0] for call in probing.calls]
    assert calls == (["cleanup", "delete_secret"] if outcome == "failed" else ["cancel", "cleanup", "delete_secret"])
    assert {call[1:] for call in probing.calls} == {(False, True)}, probing.calls
    assert double.get("batch/v1", "Job", project["namespace"], name) is None
    reason = user.get(f"/api/v1/image_build/{build['id']}").get_json()["reason"]
    assert reason.startswith("the Kaniko build failed" if outcome == "failed" else "the Kaniko build did not finish")
