"""The serving controller on the Kubernetes backend, against the API-server double (strict CRD validation):
a service deploy, a canary at 30 %, a shadow, promote and delete through the API and the controller, with
the VirtualService's weights and mirror checked at each step and nothing left in the namespace at the end."""
from __future__ import annotations

import base64
import json

import pytest

from myapp.serving.router_client import router_token
from tests.serving.support import kubernetes_services
from tests.world import created

VS = ("networking.istio.io/v1", "VirtualService")
# Everything a service may leave in its namespace (the double's kinds the serving manifests use).
KINDS = [("apps/v1", "Deployment"), ("v1", "Service"), ("autoscaling/v2", "HorizontalPodAutoscaler"), VS]


@pytest.fixture()
def setup(app, make_user, double, k8s_backend, tmp_path):
    return kubernetes_services(app, make_user(), k8s_backend, tmp_path, "k8srv", "/models/digits-{}.joblib")


def settle(app, double, controller, namespace: str, service_id: int, passes: int = 10) -> None:
    """Passes until the controller is content, each followed by what the Deployment controller would do:
    every Deployment's replicas become available."""
    for _ in range(passes):
        with app.app_context():
            done = controller.reconcile(service_id)
        for deployment in double.list("apps/v1", "Deployment", namespace):
            replicas = deployment["spec"].get("replicas", 1)
            if (deployment.get("status") or {}).get("availableReplicas") != replicas:
                double.set_status("apps/v1", "Deployment", namespace, deployment["metadata"]["name"],
                                  {"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas})
        if done:
            return
    raise AssertionError(f"service {service_id} did not settle in {passes} passes")


def split(double, namespace: str, name: str) -> tuple[dict[str, int], tuple[str, float] | None]:
    """The VirtualService's weights by destination Service, and its mirror (Service, percent)."""
    vs = double.get(*VS, namespace, name)
    assert vs is not None, "no VirtualService"
    (http,) = vs["spec"]["http"]
    weights = {r["destination"]["host"].split(".")[0]: r["weight"] for r in http["route"]}
    mirror = (http["mirror"]["host"].split(".")[0], http["mirrorPercentage"]["value"]) if "mirror" in http else None
    return weights, mirror


def names(double, namespace: str, kind: tuple[str, str]) -> set[str]:
    return {o["metadata"]["name"] for o in double.list(*kind, namespace)}


def service_row(app, service_id: int):
    from myapp.extensions import db
    from myapp.models import InferenceService

    with app.app_context():
        return db.session.get(InferenceService, service_id)


def test_deploy_canary_shadow_promote_delete(app, double, setup):
    owner, ns, (v1, v2, v3) = setup["owner"], setup["namespace"], setup["versions"]
    controller = setup["controller"]
    service = created(owner.post("/api/v1/inference_service/", json={
        "project_id": owner.get(f"/api/v1/model_version/{v1}").get_json()["project_id"], "name": "digits",
        "model_version_id": v1}))
    sid, path = service["id"], f"/api/v1/inference_service/{service['id']}"

    settle(app, double, controller, ns, sid)
    assert split(double, ns, "digits") == ({"digits-v1": 100}, None)
    assert names(double, ns, ("apps/v1", "Deployment")) == {"digits-v1"}
    assert names(double, ns, ("v1", "Service")) == {"digits", "digits-v1"}
    assert names(double, ns, ("autoscaling/v2", "HorizontalPodAutoscaler")) == {"digits-v1"}
    row = service_row(app, sid)
    assert row.state.value == "running" and row.url == f"http://digits.{ns}.svc.cluster.local"
    first_vs = double.get(*VS, ns, "digits")
    # The service's token: in its Secret, read by the model server (the forwarder sends it through the front).
    secret = double.get("v1", "Secret", ns, f"myapp-serving-{sid}-router")
    assert base64.b64decode(secret["data"]["token"]).decode() == router_token(app.config["SECRET_KEY"], sid)
    server = double.get("apps/v1", "Deployment", ns, "digits-v1")["spec"]["template"]["spec"]["containers"][0]
    assert {"name": "SERVING_TOKEN", "valueFrom": {"secretKeyRef": {
        "name": f"myapp-serving-{sid}-router", "key": "token"}}} in server["env"]
    assert router_token(app.config["SECRET_KEY"], sid) not in json.dumps(server)

    # Canary at 30 %: a second server, and the same VirtualService patched in place (never deleted).
    assert owner.post(f"{path}/canary", json={"version_id": v2, "weight": 30}).status_code == 200
    settle(app, double, controller, ns, sid)
    assert split(double, ns, "digits") == ({"digits-v1": 70, "digits-v2": 30}, None)
    assert names(double, ns, ("apps/v1", "Deployment")) == {"digits-v1", "digits-v2"}
    assert double.get(*VS, ns, "digits")["metadata"]["uid"] == first_vs["metadata"]["uid"]
    assert not [d for d in double.deletions if d.kind in ("VirtualService", "Service")]
    assert double.requests_matching("PATCH", r"/virtualservices/digits$")

    # A shadow gets a copy of 25 % of the requests; taking it away removes the mirror again.
    assert owner.put(path, json={"shadow_version_id": v3, "mirror_percent": 25}).status_code == 200
    settle(app, double, controller, ns, sid)
    assert split(double, ns, "digits") == ({"digits-v1": 70, "digits-v2": 30}, ("digits-v3", 25.0))
    assert names(double, ns, ("apps/v1", "Deployment")) == {"digits-v1", "digits-v2", "digits-v3"}
    assert owner.put(path, json={"shadow_version_id": None}).status_code == 200
    settle(app, double, controller, ns, sid)
    assert split(double, ns, "digits") == ({"digits-v1": 70, "digits-v2": 30}, None)
    assert names(double, ns, ("apps/v1", "Deployment")) == {"digits-v1", "digits-v2"}

    # Promote: the canary takes everything, the old version's server and its objects go.
    assert owner.post(f"{path}/promote", json={"version_id": v2}).status_code == 200
    settle(app, double, controller, ns, sid)
    assert split(double, ns, "digits") == ({"digits-v2": 100}, None)
    assert names(double, ns, ("apps/v1", "Deployment")) == {"digits-v2"}
    assert names(double, ns, ("v1", "Service")) == {"digits", "digits-v2"}
    assert names(double, ns, ("autoscaling/v2", "HorizontalPodAutoscaler")) == {"digits-v2"}
    assert double.get(*VS, ns, "digits")["metadata"]["uid"] == first_vs["metadata"]["uid"]

    # Delete: every object of the service, the front Service and VirtualService included, then the row.
    assert owner.delete(path).status_code in (200, 202, 204)
    settle(app, double, controller, ns, sid)
    assert service_row(app, sid) is None
    assert {kind: names(double, ns, kind) for kind in KINDS} == {kind: set() for kind in KINDS}
    assert double.get("v1", "Secret", ns, f"myapp-serving-{sid}-router") is None


def test_traffic_submitted_by_a_worker_that_died_before_its_commit_is_deleted(app, double, setup):
    """The traffic's key holds {"submitting": true} (the worker died between the submit and the commit): the
    deleting pass adopts the Service and VirtualService by name and deletes them."""
    from myapp.extensions import db
    from myapp.models import InferenceService
    from myapp.serving.controller import TRAFFIC

    owner, ns, (v1, _v2, _v3) = setup["owner"], setup["namespace"], setup["versions"]
    project_id = owner.get(f"/api/v1/model_version/{v1}").get_json()["project_id"]
    sid = created(owner.post("/api/v1/inference_service/", json={
        "project_id": project_id, "name": "lost", "model_version_id": v1}))["id"]
    settle(app, double, setup["controller"], ns, sid)
    with app.app_context():
        row = db.session.get(InferenceService, sid)
        row.jobs = {**row.jobs, TRAFFIC: {"submitting": True}}
        db.session.commit()
    assert double.get(*VS, ns, "lost") is not None
    assert owner.delete(f"/api/v1/inference_service/{sid}").status_code in (200, 202, 204)
    settle(app, double, setup["controller"], ns, sid)
    assert service_row(app, sid) is None
    assert {kind: names(double, ns, kind) for kind in KINDS} == {kind: set() for kind in KINDS}
