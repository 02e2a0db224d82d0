"""The serving controller stops and removes a service's backend objects (cancel, cleanup, its token Secret) with
no transaction of its worker open and the service's row free for other writers: the calls can take seconds
(a cancel waits out a grace period, a cleanup archives logs), and a worker that dies meanwhile leaves the row
naming what is left, which the next pass stops (tests/serving/test_kubernetes.py: a worker that died before
its commit)."""
from __future__ import annotations

import pytest

from tests.serving.support import kubernetes_services
from tests.serving.test_kubernetes import settle
from tests.support import StopProbe
from tests.world import created

pytestmark = pytest.mark.backends  # what each database holds while a pass runs


@pytest.fixture()
def setup(app, make_user, double, k8s_backend, tmp_path):
    return kubernetes_services(app, make_user(), k8s_backend, tmp_path, "k8srv", "/models/digits-{}.joblib")


def test_a_retired_version_and_a_deleted_service_are_stopped_with_no_row_held(app, double, k8s_backend, setup):
    from myapp.extensions import db
    from myapp.models import InferenceService

    backend = StopProbe(k8s_backend, InferenceService, "generation")
    controller = setup["controller"]
    controller.backend_for = lambda _service: backend
    owner, (v1, v2, _) = setup["owner"], setup["versions"]
    service = created(owner.post("/api/v1/inference_service/", json={
        "project_id": setup["pid"], "name": "digits", "model_version_id": v1}))
    backend.row_id = service["id"]
    settle(app, double, controller, setup["namespace"], service["id"])
    path = f"/api/v1/inference_service/{service['id']}"
    assert owner.post(f"{path}/canary", json={"version_id": v2, "weight": 30}).status_code == 200
    settle(app, double, controller, setup["namespace"], service["id"])
    assert owner.post(f"{path}/promote", json={"version_id": v2}).status_code == 200  # v1 retired
    settle(app, double, controller, setup["namespace"], service["id"])
    assert backend.calls and {call[0] for call in backend.calls} >= {"cancel", "cleanup"}
    assert {call[1:] for call in backend.calls} == {(False, True)}, backend.calls

    backend.calls.clear()
    assert owner.delete(path).status_code == 200
    settle(app, double, controller, setup["namespace"], service["id"])
    with app.app_context():
        assert db.session.get(InferenceService, service["id"]) is None
    assert [call[0] for call in backend.calls][-1] == "delete_secret", backend.calls
    assert {call[1:] for call in backend.calls} == {(False, True)}, backend.calls
