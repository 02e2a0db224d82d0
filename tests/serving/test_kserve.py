"""The serving controller where KServe is installed (``kserve=True``), against the API-server double (strict
CRD validation): a service is one InferenceService, ready from its status conditions; a canary at 30 % and
a promote patch it in place (canaryTrafficPercent); a shadow fails the service with the reason; delete
leaves nothing; no Deployment, Service or VirtualService is made."""
from __future__ import annotations

import pytest

from tests.serving.support import kubernetes_services
from tests.serving.test_kubernetes import KINDS, names, service_row
from tests.world import created

ISVC = ("serving.kserve.io/v1beta1", "InferenceService")


@pytest.fixture()
def setup(app, make_user, double, k8s_backend, tmp_path):
    return kubernetes_services(app, make_user(), k8s_backend, tmp_path, "kserve", "s3://models/digits-{}.joblib",
                               kserve=True)


def settle(app, double, controller, namespace: str, service_id: int, passes: int = 10) -> None:
    """Passes until the controller is content, each followed by what KServe would do: Ready, with a URL."""
    for _ in range(passes):
        with app.app_context():
            done = controller.reconcile(service_id)
        for isvc in double.list(*ISVC, namespace):
            name = isvc["metadata"]["name"]
            double.set_status(*ISVC, namespace, name, {"url": f"http://{name}.{namespace}.example.com",
                                                       "conditions": [{"type": "Ready", "status": "True"}]})
        if done:
            return
    raise AssertionError(f"service {service_id} did not settle in {passes} passes")


def predictor(double, namespace: str) -> tuple[str, int]:
    spec = double.get(*ISVC, namespace, "digits")["spec"]["predictor"]
    return spec["labels"]["version"], spec["canaryTrafficPercent"]


def test_deploy_canary_promote_delete_as_one_inference_service(app, double, setup):
    owner, ns, (v1, v2, v3) = setup["owner"], setup["namespace"], setup["versions"]
    controller = setup["controller"]
    sid = created(owner.post("/api/v1/inference_service/", json={
        "project_id": setup["pid"], "name": "digits", "model_version_id": v1}))["id"]
    path = f"/api/v1/inference_service/{sid}"

    with app.app_context():
        assert not controller.reconcile(sid)  # submitted, not ready yet
    assert service_row(app, sid).state.value == "pending"
    assert "InferenceService" in service_row(app, sid).reason
    settle(app, double, controller, ns, sid)
    assert predictor(double, ns) == ("v1", 100)
    row = service_row(app, sid)
    assert (row.state.value, row.url) == ("running", f"http://digits.{ns}.example.com")
    assert row.versions_status[str(v1)]["state"] == "running"
    uid = double.get(*ISVC, ns, "digits")["metadata"]["uid"]
    assert {kind: names(double, ns, kind) for kind in KINDS} == {kind: set() for kind in KINDS}

    assert owner.post(f"{path}/canary", json={"version_id": v2, "weight": 30}).status_code == 200
    settle(app, double, controller, ns, sid)
    assert predictor(double, ns) == ("v2", 30)
    assert set(service_row(app, sid).versions_status) == {str(v1), str(v2)}

    # KServe mirrors nothing: a shadow fails the service with the reason, and nothing changes on the cluster.
    assert owner.put(path, json={"shadow_version_id": v3, "mirror_percent": 25}).status_code == 200
    with app.app_context():
        controller.reconcile(sid)
    row = service_row(app, sid)
    assert row.state.value == "failed" and "mirrors nothing" in row.reason
    assert predictor(double, ns) == ("v2", 30)
    assert owner.put(path, json={"shadow_version_id": None}).status_code == 200

    assert owner.post(f"{path}/promote", json={"version_id": v2}).status_code == 200
    settle(app, double, controller, ns, sid)
    assert predictor(double, ns) == ("v2", 100)
    assert double.get(*ISVC, ns, "digits")["metadata"]["uid"] == uid  # patched in place, never replaced
    assert service_row(app, sid).state.value == "running"

    assert owner.delete(path).status_code in (200, 202, 204)
    settle(app, double, controller, ns, sid)
    assert service_row(app, sid) is None
    assert double.get(*ISVC, ns, "digits") is None


def test_an_inference_service_submitted_by_a_worker_that_died_is_deleted(app, double, setup):
    """The key holds {"submitting": true} (the worker died between the submit and the commit): the deleting
    pass adopts the InferenceService by name and deletes it."""
    from myapp.extensions import db
    from myapp.models import InferenceService
    from myapp.serving.controller import KSERVE

    owner, ns, (v1, _v2, _v3) = setup["owner"], setup["namespace"], setup["versions"]
    sid = created(owner.post("/api/v1/inference_service/", json={
        "project_id": setup["pid"], "name": "digits", "model_version_id": v1}))["id"]
    settle(app, double, setup["controller"], ns, sid)
    with app.app_context():
        row = db.session.get(InferenceService, sid)
        row.jobs = {KSERVE: {"submitting": True}}
        db.session.commit()
    assert owner.delete(f"/api/v1/inference_service/{sid}").status_code in (200, 202, 204)
    settle(app, double, setup["controller"], ns, sid)
    assert service_row(app, sid) is None
    assert double.get(*ISVC, ns, "digits") is None
