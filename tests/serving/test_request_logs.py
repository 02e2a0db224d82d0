"""Sampled request logs where no router of the platform's keeps them: the model server writes every error
and one in ten of its other answers to stdout as marked JSON lines (no headers), and the logs endpoint of a
service on Kubernetes reads the end of its servers' pod logs (tailLines, limitBytes) from the API-server
double, keeps the marked lines containing q, newest first across versions, at most limit; both engines."""
from __future__ import annotations

import importlib.util
import io
import json
import random
import subprocess
import sys

import pytest

from myapp.rendering.contract import JOB_NAME_LABEL
from tests.serving.support import TEMPLATE, Client, _answers, digits_models, kubernetes_services
from tests.serving.test_kserve import settle as settle_kserve
from tests.serving.test_kubernetes import service_row
from tests.serving.test_kubernetes import settle as settle_deployments
from tests.support import free_port, wait_until
from tests.world import created


@pytest.fixture(scope="module")
def server_module():
    spec = importlib.util.spec_from_file_location("deploy_service_main", TEMPLATE / "main.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def marked(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if '"log": "myapp.request"' in line]


def test_every_error_and_about_one_in_ten_of_the_rest_bounded(server_module):
    out = io.StringIO()
    log = server_module.RequestLog(10, out, random.Random(7))
    server_module.VERSION = "v4"
    for _ in range(2000):
        log.record(200, 1.5, b'{"instances": [[1]]}', b'{"predictions": [1]}')
    for status in (400, 503, 0):
        assert log.record(status, 2.0, b"x" * 2000, b"y" * 2000)
    lines = marked(out.getvalue())
    ok = [e for e in lines if e["status"] == 200]
    assert 140 <= len(ok) <= 260  # 200 expected from 2,000 at one in ten
    errors = [e for e in lines if e["status"] != 200]
    assert [e["status"] for e in errors] == [400, 503, 0]
    assert {e["version"] for e in lines} == {"v4"}
    assert len(errors[0]["request"]) == 512 and len(errors[0]["response"]) == 512
    assert set(lines[0]) == {"log", "time", "version", "status", "ms", "request", "response"}


def test_the_model_server_writes_its_sampled_lines_to_stdout_without_headers(tmp_path):
    model, _, images, labels = digits_models(tmp_path)
    port, out = free_port(), tmp_path / "stdout"
    argv = [sys.executable, str(TEMPLATE / "main.py"), "--model-path", str(model), "--version", "v2",
            "--signature", json.dumps({"shape": [None, 64], "dtype": "float32"}), "--port", str(port)]
    with out.open("w") as sink:
        proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT,
                                env={"MODEL_SERVER_LOG_SAMPLE": "1000000", "PATH": "/usr/bin:/bin",
                                     "SERVING_TOKEN": "hidden-service-token"})
        try:
            wait_until(lambda: _answers(port) or proc.poll() is not None, what="model server", timeout=60)
            client = Client(f"http://127.0.0.1:{port}", {"Authorization": "Bearer hidden-secret-token",
                                                         "X-Router-Token": "hidden-service-token"})
            for _ in range(20):
                assert client.call("POST", "/predict", {"instances": images[:2]})[0] == 200
            assert client.call("POST", "/predict", {"instances": [[1, 2]]})[0] == 400
            client.close()
            wait_until(lambda: marked(out.read_text()), what="a request line", timeout=10)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    text = out.read_text()
    assert "hidden-secret-token" not in text and "Authorization" not in text and "hidden-service-token" not in text
    lines = marked(text)  # one in a million of the 200s: the error alone (every error is kept)
    assert [(e["version"], e["status"]) for e in lines] == [("v2", 400)]
    assert "instances[0]" in lines[0]["response"] and lines[0]["request"] == '{"instances": [[1, 2]]}'
    assert lines[0]["ms"] >= 0 and labels  # the startup line and the answers are not marked


def request_line(module, version: str, status: int, when: float, request: str) -> str:
    out = io.StringIO()
    module.VERSION = version
    module.RequestLog(1, out).record(status, 3.25, request.encode(), b'{"predictions": [0]}')
    entry = json.loads(out.getvalue())
    entry["time"] = when  # the order the test wants, whatever the clock did
    return json.dumps(entry)


def serve_pods(app, double, sid: int, key: str, pod: str, lines: list[str], container: str) -> None:
    """What the Deployment / KServe controller and the kubelet would do: a running pod of the job's, with
    its log (the server's startup line and `lines`)."""
    ref = service_row(app, sid).jobs[key]
    double.add_pod(ref["namespace"], pod, {JOB_NAME_LABEL: ref["job_name"]},
                   containers=[container])
    double.append_log(ref["namespace"], pod, "serving v on :8080, model loaded: True", *lines)


@pytest.fixture()
def cluster_backend(k8s_backend):
    """The web resolves the cluster's backend to the one talking to the double."""
    from myapp.backends import registry

    added = []

    def register(cluster_id: int) -> None:
        registry._backends[("cluster", cluster_id)] = k8s_backend
        added.append(("cluster", cluster_id))
    yield register
    for key in added:
        registry._backends.pop(key, None)


def logs(owner, path: str, **query) -> list[dict]:
    resp = owner.get(f"{path}/logs", query_string=query)
    assert resp.status_code == 200, resp.get_json()
    return resp.get_json()["items"]


def check_search(double, owner, path: str, newest: list[tuple[str, int]]) -> None:
    assert [(e["version"], e["status"]) for e in logs(owner, path)] == newest
    assert [(e["version"], e["status"]) for e in logs(owner, path, limit=2)] == newest[:2]
    found = logs(owner, path, q="needle")
    assert [(e["version"], e["status"]) for e in found] == [("v2", 200)] and found[0]["ms"] == 3.25
    assert logs(owner, path, q="nowhere") == []
    reads = double.requests_matching("GET", r"/pods/[^/]+/log$")
    assert reads and all(r.query.get("tailLines") == "2000" and r.query.get("limitBytes") for r in reads)


def test_logs_of_a_service_on_deployments_come_from_its_model_servers(app, double, admin, make_user,
                                                                      k8s_backend, tmp_path, server_module,
                                                                      cluster_backend):
    setup = kubernetes_services(app, make_user(), k8s_backend, tmp_path, "reqlog", "/models/digits-{}.joblib",
                                admin=admin, engine="deployments")
    cluster_backend(setup["cluster"])
    owner, ns, (v1, v2, _) = setup["owner"], setup["namespace"], setup["versions"]
    sid = created(owner.post("/api/v1/inference_service/", json={
        "project_id": setup["pid"], "name": "digits", "model_version_id": v1,
        "resource_group_id": setup["group"]}))["id"]
    path = f"/api/v1/inference_service/{sid}"
    settle_deployments(app, double, setup["controller"], ns, sid)
    assert logs(owner, path) == []  # no pod yet: nothing sampled
    assert owner.post(f"{path}/canary", json={"version_id": v2, "weight": 30}).status_code == 200
    settle_deployments(app, double, setup["controller"], ns, sid)

    serve_pods(app, double, sid, f"v{v1}", "digits-v1-abc", [
        request_line(server_module, "v1", 200, 100.0, '{"instances": [[0]]}'),
        request_line(server_module, "v1", 400, 300.0, '{"instances": []}')], "model-server")
    serve_pods(app, double, sid, f"v{v2}", "digits-v2-def", [
        request_line(server_module, "v2", 200, 200.0, '{"instances": [["needle"]]}'),
        "a line of the server's own that mentions needle", "{\"log\": \"other\", \"needle\": 1}",
        request_line(server_module, "v2", 503, 400.0, '{"instances": [[1]]}')], "model-server")
    check_search(double, owner, path, [("v2", 503), ("v1", 400), ("v2", 200), ("v1", 200)])

    stranger = make_user()
    assert stranger.get(f"{path}/logs").status_code == 404  # another project's service: not found


def test_logs_of_a_service_on_kserve_with_its_shadow(app, double, admin, make_user, k8s_backend, tmp_path,
                                                     server_module, cluster_backend):
    setup = kubernetes_services(app, make_user(), k8s_backend, tmp_path, "reqlogk", "s3://models/digits-{}.joblib",
                                admin=admin, engine="kserve")
    cluster_backend(setup["cluster"])
    owner, ns, (v1, v2, v3) = setup["owner"], setup["namespace"], setup["versions"]
    sid = created(owner.post("/api/v1/inference_service/", json={
        "project_id": setup["pid"], "name": "digits", "model_version_id": v1,
        "resource_group_id": setup["group"]}))["id"]
    path = f"/api/v1/inference_service/{sid}"
    settle_kserve(app, double, setup["controller"], ns, sid)
    assert owner.post(f"{path}/canary", json={"version_id": v2, "weight": 30}).status_code == 200
    assert owner.put(path, json={"shadow_version_id": v3, "mirror_percent": 25}).status_code == 200
    settle_kserve(app, double, setup["controller"], ns, sid)

    # KServe puts the predictor's labels on its pods: the job's label among them selects them.
    predictor = double.get("serving.kserve.io/v1beta1", "InferenceService", ns, "digits")["spec"]["predictor"]
    assert predictor["labels"][JOB_NAME_LABEL] == service_row(app, sid).jobs["kserve"]["job_name"]
    # KServe keeps the previous revision's pods beside the canary's: both are the InferenceService's.
    serve_pods(app, double, sid, "kserve", "digits-predictor-00001", [
        request_line(server_module, "v1", 200, 100.0, '{"instances": [[0]]}'),
        request_line(server_module, "v1", 400, 300.0, '{"instances": []}')], "kserve-container")
    serve_pods(app, double, sid, "kserve", "digits-predictor-00002", [
        request_line(server_module, "v2", 200, 200.0, '{"instances": [["needle"]]}'),
        request_line(server_module, "v2", 503, 400.0, '{"instances": [[1]]}')], "kserve-container")
    serve_pods(app, double, sid, "kserve-shadow", "digits-shadow-predictor-00001", [
        request_line(server_module, "v3", 200, 50.0, '{"instances": [[0]]}')], "kserve-container")
    check_search(double, owner, path, [("v2", 503), ("v1", 400), ("v2", 200), ("v1", 200), ("v3 (shadow)", 200)])
