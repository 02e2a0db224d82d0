"""Services on a cluster whose serving engine is KServe, through the API and the controller against the
API-server double (strict CRD validation of every object): a service is one InferenceService, ready from its
status conditions; a canary at 30 % and a promote patch it in place (canaryTrafficPercent); a shadow is its
own InferenceService behind the platform's mirroring front; a model in S3 is fetched by KServe's storage
initializer (storageUris); autoscaling on rps, and on GPU through KEDA only where the cluster has a
Prometheus; the cluster's engine changed under a running service moves it without orphans; delete leaves
nothing."""
from __future__ import annotations

import pytest

from tests.serving.support import kubernetes_services
from tests.serving.test_kubernetes import KINDS, VS, names, service_row, split
from tests.world import created

ISVC = ("serving.kserve.io/v1beta1", "InferenceService")
DEPLOYMENT = ("apps/v1", "Deployment")


@pytest.fixture()
def setup(app, make_user, admin, double, k8s_backend, tmp_path):
    return kubernetes_services(app, make_user(), k8s_backend, tmp_path, "kserve", "s3://models/digits-{}.joblib",
                               admin=admin, engine="kserve")


def settle(app, double, controller, namespace: str, service_id: int, passes: int = 12) -> None:
    """Passes until the controller is content, each followed by what KServe (an InferenceService is Ready,
    with a URL) and the Deployment controller (replicas available) would do."""
    for _ in range(passes):
        with app.app_context():
            done = controller.reconcile(service_id)
        for isvc in double.list(*ISVC, namespace):
            name = isvc["metadata"]["name"]
            double.set_status(*ISVC, namespace, name, {"url": f"http://{name}.{namespace}.example.com",
                                                       "conditions": [{"type": "Ready", "status": "True"}]})
        for deployment in double.list(*DEPLOYMENT, namespace):
            replicas = deployment["spec"].get("replicas", 1)
            double.set_status(*DEPLOYMENT, namespace, deployment["metadata"]["name"],
                              {"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas})
        if done:
            return
    raise AssertionError(f"service {service_id} did not settle in {passes} passes: "
                         f"{service_row(app, service_id).reason}")


def fields(resp) -> list[str]:
    return [e["field"] for e in resp.get_json().get("errors", [])]


def predictor(double, namespace: str, name: str = "digits") -> dict:
    return double.get(*ISVC, namespace, name)["spec"]["predictor"]


def create(setup, **body) -> tuple[int, str]:
    sid = created(setup["owner"].post("/api/v1/inference_service/", json={
        "project_id": setup["pid"], "name": "digits", "model_version_id": setup["versions"][0],
        "resource_group_id": setup["group"], **body}))["id"]
    return sid, f"/api/v1/inference_service/{sid}"


def test_deploy_canary_shadow_promote_delete_on_kserve(app, double, setup):
    owner, ns, (v1, v2, v3) = setup["owner"], setup["namespace"], setup["versions"]
    controller = setup["controller"]
    sid, path = create(setup)

    with app.app_context():
        assert not controller.reconcile(sid)  # submitted, not ready yet
    assert service_row(app, sid).state.value == "pending"
    assert "InferenceService" in service_row(app, sid).reason
    settle(app, double, controller, ns, sid)
    spec = predictor(double, ns)
    assert (spec["labels"]["app"], spec["labels"]["version"], spec["canaryTrafficPercent"]) == ("digits", "v1", 100)
    # The model in S3: KServe's storage initializer puts it where the server reads it.
    assert spec["storageUris"] == [{"uri": "s3://models/digits-1.joblib", "mountPath": "/mnt/models"}]
    args = spec["containers"][0]["args"]
    assert args[args.index("--model-path") + 1] == "/mnt/models/digits-1.joblib"
    row = service_row(app, sid)
    assert (row.state.value, row.url) == ("running", f"http://digits.{ns}.example.com")
    uid = double.get(*ISVC, ns, "digits")["metadata"]["uid"]
    assert {kind: names(double, ns, kind) for kind in KINDS} == {kind: set() for kind in KINDS}

    assert owner.post(f"{path}/canary", json={"version_id": v2, "weight": 30}).status_code == 200
    settle(app, double, controller, ns, sid)
    assert (predictor(double, ns)["labels"]["version"], predictor(double, ns)["canaryTrafficPercent"]) == ("v2", 30)
    assert set(service_row(app, sid).versions_status) == {str(v1), str(v2)}
    # KServe splits between two revisions: a third weighted version is refused, nothing stored.
    resp = owner.put(path, json={"traffic": {str(v1): 40, str(v2): 30, str(v3): 30}})
    assert resp.status_code == 400 and fields(resp) == ["traffic"]

    # A shadow: its own InferenceService (labelled as the service's, for the figures) and a front that
    # routes everything to the service's predictor and mirrors 25 % to the shadow's; the front is the URL.
    assert owner.put(path, json={"shadow_version_id": v3, "mirror_percent": 25}).status_code == 200
    settle(app, double, controller, ns, sid)
    shadow = predictor(double, ns, "digits-shadow")["labels"]
    assert (shadow["app"], shadow["version"]) == ("digits", "v3")
    assert split(double, ns, "digits-mirror") == ({"digits-predictor": 100}, ("digits-shadow-predictor", 25.0))
    row = service_row(app, sid)
    assert (row.state.value, row.url) == ("running", f"http://digits-mirror.{ns}.svc.cluster.local")
    assert row.versions_status[str(v3)]["label"] == "v3"
    assert predictor(double, ns)["canaryTrafficPercent"] == 30  # the split itself untouched
    assert owner.put(path, json={"shadow_version_id": None}).status_code == 200
    settle(app, double, controller, ns, sid)
    assert names(double, ns, ISVC) == {"digits"} and names(double, ns, VS) == set()
    assert service_row(app, sid).url == f"http://digits.{ns}.example.com"

    assert owner.post(f"{path}/promote", json={"version_id": v2}).status_code == 200
    settle(app, double, controller, ns, sid)
    assert predictor(double, ns)["canaryTrafficPercent"] == 100
    assert double.get(*ISVC, ns, "digits")["metadata"]["uid"] == uid  # patched in place, never replaced

    assert owner.delete(path).status_code in (200, 202, 204)
    settle(app, double, controller, ns, sid)
    assert service_row(app, sid) is None
    assert names(double, ns, ISVC) == set()
    assert {kind: names(double, ns, kind) for kind in KINDS} == {kind: set() for kind in KINDS}


def test_autoscaling_on_kserve_rps_and_gpu_only_with_the_cluster_s_prometheus(app, admin, double, setup):
    owner, ns, controller = setup["owner"], setup["namespace"], setup["controller"]
    sid, path = create(setup, min_replicas=1, max_replicas=4, autoscale_metric="rps", autoscale_target=50)
    settle(app, double, controller, ns, sid)
    spec = predictor(double, ns)
    assert (spec["minReplicas"], spec["maxReplicas"], spec["scaleMetric"], spec["scaleTarget"]) == (1, 4, "rps", 50)
    assert owner.put(path, json={"autoscale_metric": "cpu", "autoscale_target": 60}).status_code == 200
    settle(app, double, controller, ns, sid)
    assert (predictor(double, ns)["scaleMetric"], predictor(double, ns)["scaleTarget"]) == ("cpu", 60)

    # GPU utilisation: KEDA from the cluster's Prometheus; without one, 400 naming the field and the reason.
    resp = owner.post("/api/v1/inference_service/", json={
        "project_id": setup["pid"], "name": "gpu", "model_version_id": setup["versions"][0],
        "resource_group_id": setup["group"], "autoscale_metric": "gpu"})
    assert resp.status_code == 400 and fields(resp) == ["autoscale_metric"]
    assert "prometheus_url" in resp.get_json()["message"]
    prometheus = "http://prometheus.monitoring:9090"
    assert admin.put(f"/api/v1/cluster/{setup['cluster']}", json={"prometheus_url": prometheus}).status_code == 200
    # ... nor does one autoscaler replace the other in place.
    resp = owner.put(path, json={"autoscale_metric": "gpu"})
    assert resp.status_code == 400 and fields(resp) == ["autoscale_metric"] and "in place" in resp.get_json()["message"]
    assert owner.get(path).get_json()["autoscale_metric"] == "cpu"

    gpu = created(owner.post("/api/v1/inference_service/", json={
        "project_id": setup["pid"], "name": "gpu", "model_version_id": setup["versions"][0],
        "resource_group_id": setup["group"], "autoscale_metric": "gpu", "autoscale_target": 80}))["id"]
    settle(app, double, controller, ns, gpu)
    isvc = double.get(*ISVC, ns, "gpu")
    assert isvc["metadata"]["annotations"]["serving.kserve.io/autoscalerClass"] == "keda"
    (metric,) = isvc["spec"]["predictor"]["autoScaling"]["metrics"]
    assert metric["external"]["metric"]["serverAddress"] == prometheus
    query = f'avg(DCGM_FI_DEV_GPU_UTIL{{namespace="{ns}",pod=~"gpu-predictor-.*"}})'
    assert metric["external"]["metric"]["query"] == query
    assert metric["external"]["target"] == {"type": "Value", "value": "80"}
    assert "scaleMetric" not in isvc["spec"]["predictor"]


def test_the_cluster_s_engine_changed_moves_the_service_without_orphans(app, admin, double, setup):
    """deployments -> kserve -> deployments: each time the new objects are made first, the old ones are
    deleted once the new answer (the service keeps a URL that answers throughout), nothing is left."""
    owner, ns, controller = setup["owner"], setup["namespace"], setup["controller"]
    cluster = f"/api/v1/cluster/{setup['cluster']}"
    assert admin.put(cluster, json={"serving_engine": "deployments"}).status_code == 200
    sid, path = create(setup)
    settle(app, double, controller, ns, sid)
    assert names(double, ns, DEPLOYMENT) == {"digits-v1"} and names(double, ns, ISVC) == set()
    (init,) = double.get(*DEPLOYMENT, ns, "digits-v1")["spec"]["template"]["spec"]["initContainers"]
    assert init["name"] == "model-download"  # plain Deployments fetch the S3 model themselves

    assert admin.put(cluster, json={"serving_engine": "kserve"}).status_code == 200
    with app.app_context():
        controller.reconcile(sid)  # the InferenceService is submitted; it is not Ready yet
    assert names(double, ns, ISVC) == {"digits"}
    assert names(double, ns, DEPLOYMENT) == {"digits-v1"} and names(double, ns, VS) == {"digits"}
    settle(app, double, controller, ns, sid)
    assert {kind: names(double, ns, kind) for kind in KINDS} == {kind: set() for kind in KINDS}
    assert service_row(app, sid).url == f"http://digits.{ns}.example.com"

    assert admin.put(cluster, json={"serving_engine": "deployments"}).status_code == 200
    settle(app, double, controller, ns, sid)
    assert names(double, ns, ISVC) == set() and names(double, ns, DEPLOYMENT) == {"digits-v1"}
    assert service_row(app, sid).url == f"http://digits.{ns}.svc.cluster.local"

    assert owner.delete(path).status_code in (200, 202, 204)
    settle(app, double, controller, ns, sid)
    assert {kind: names(double, ns, kind) for kind in [*KINDS, ISVC]} == {kind: set() for kind in [*KINDS, ISVC]}


def test_an_inference_service_submitted_by_a_worker_that_died_is_deleted(app, double, setup):
    """The key holds {"submitting": true} (the worker died between the submit and the commit): the deleting
    pass adopts the InferenceService by name and deletes it."""
    from myapp.extensions import db
    from myapp.models import InferenceService
    from myapp.serving.controller import KSERVE

    ns = setup["namespace"]
    sid, path = create(setup)
    settle(app, double, setup["controller"], ns, sid)
    with app.app_context():
        row = db.session.get(InferenceService, sid)
        row.jobs = {KSERVE: {"submitting": True}}
        db.session.commit()
    assert setup["owner"].delete(path).status_code in (200, 202, 204)
    settle(app, double, setup["controller"], ns, sid)
    assert service_row(app, sid) is None
    assert double.get(*ISVC, ns, "digits") is None


def test_a_shadow_the_split_already_serves_needs_nothing_more(app, double, setup):
    ns, controller = setup["namespace"], setup["controller"]
    sid, path = create(setup)
    assert setup["owner"].put(path, json={"shadow_version_id": setup["versions"][0]}).status_code == 200
    settle(app, double, controller, ns, sid)
    assert names(double, ns, ISVC) == {"digits"} and names(double, ns, VS) == set()
    assert service_row(app, sid).state.value == "running"
