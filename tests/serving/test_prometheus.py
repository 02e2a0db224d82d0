"""Per-version figures of a service on Kubernetes, read from Prometheus (myapp/serving/prometheus.py):
the PromQL built for Istio's metrics, and the answers parsed, against a small real HTTP server that
answers in Prometheus's API format; then through GET /api/v1/inference_service/{id}/metrics."""
from __future__ import annotations

import contextlib
import json
import threading
import urllib.parse
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import sqlalchemy as sa

from myapp.errors import DomainError, Kind
from myapp.serving.prometheus import figures, queries
from tests.world import build_catalog, build_project, created, data_file

NOW = 1_800_000_000.0
# What the fake Prometheus holds, per figure and version (constant over time).
HELD = {"requests": {"v1": 600.0, "v2": 300.0}, "errors": {"v1": 3.0}, "0.5": {"v1": 4.0, "v2": 5.0},
        "0.95": {"v1": 12.5, "v2": "NaN"}, "0.99": {"v1": 20.0, "v2": "NaN"}}


def held_for(query: str) -> dict:
    for q in ("0.5", "0.95", "0.99"):
        if query.startswith(f"histogram_quantile({q},"):
            return HELD[q]
    return HELD["errors"] if 'response_code=~"5.."' in query else HELD["requests"]


@contextlib.contextmanager
def fake_prometheus(fail: bool = False) -> Iterator[tuple[str, list[dict]]]:
    seen: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            parts = urllib.parse.urlsplit(self.path)
            args = dict(urllib.parse.parse_qsl(parts.query))
            seen.append({"path": parts.path, **args})
            if fail:
                body, status = {"status": "error", "errorType": "bad_data", "error": "parse error"}, 400
            else:
                start, end, step = float(args["start"]), float(args["end"]), float(args["step"])
                times = [start + i * step for i in range(int((end - start) // step) + 1)]
                result = [{"metric": {"destination_version": version}, "values": [[t, str(value)] for t in times]}
                          for version, value in held_for(args["query"]).items()]
                body, status = {"status": "success", "data": {"resultType": "matrix", "result": result}}, 200
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_the_queries_select_the_service_s_model_servers_by_version():
    built = queries("proj-a", "digits", 300, 15)
    assert set(built) == {f"{p}_{f}" for p in ("total", "step") for f in ("n", "errors", "p50", "p95", "p99")}
    selector = 'destination_workload_namespace="proj-a",destination_app="digits",reporter="destination"'
    assert built["total_n"] == f"sum by (destination_version) (increase(istio_requests_total{{{selector}}}[300s]))"
    assert built["step_errors"] == ("sum by (destination_version) (increase(istio_requests_total"
                                    f'{{{selector},response_code=~"5.."}}[30s]))')
    assert built["total_p95"] == ("histogram_quantile(0.95, sum by (destination_version, le) (rate("
                                  f"istio_request_duration_milliseconds_bucket{{{selector}}}[300s])))")


def test_figures_per_version_from_prometheus_answers():
    with fake_prometheus() as (url, seen):
        got = figures(url, "proj-a", "digits", 300, frozenset({"v2"}), now=lambda: NOW)
    assert got["window"] == 300
    assert got["versions"] == {
        "v1": {"requests": 600, "errors": 3, "rps": 2.0, "p50": 4.0, "p95": 12.5, "p99": 20.0},
        "v2 (shadow)": {"requests": 300, "errors": 0, "rps": 1.0, "p50": 5.0, "p95": None, "p99": None}}
    points = got["series"]["v1"]
    assert [p["t"] for p in points] == list(range(int(NOW) - 300, int(NOW) + 1, 15))
    # increase() over 30 s scaled to the 15 s step.
    assert points[0] == {"t": int(NOW) - 300, "n": 300, "errors": 2, "p50": 4.0, "p95": 12.5, "p99": 20.0}
    assert got["series"]["v2 (shadow)"][0]["p95"] is None
    totals = [q for q in seen if "[300s]" in q["query"]]
    assert len(seen) == 10 and len(totals) == 5
    assert all(q["path"] == "/api/v1/query_range" and float(q["start"]) == float(q["end"]) == NOW for q in totals)


def test_a_failing_prometheus_is_unavailable_with_its_reason():
    with fake_prometheus(fail=True) as (url, _), pytest.raises(DomainError) as caught:
        figures(url, "proj-a", "digits", 60, now=lambda: NOW)
    assert caught.value.kind == Kind.UNAVAILABLE and "parse error" in caught.value.message


def test_the_metrics_api_answers_from_prometheus_for_a_service_on_kubernetes(app, make_user, admin):
    from myapp.extensions import db
    from myapp.models import InferenceService

    owner = make_user()
    pid = build_project(owner, build_catalog(admin), app).ids["project"]
    version = created(owner.post("/api/v1/model_version/", json={"project_id": pid, "name": "mnist",
                                                                  "uri": data_file(app, pid)}))
    service = created(owner.post("/api/v1/inference_service/", json={
        "project_id": pid, "name": "mnist", "model_version_id": version["id"]}))
    path = f"/api/v1/inference_service/{service['id']}/metrics?window=60"
    with app.app_context():
        db.session.execute(sa.update(InferenceService).where(InferenceService.id == service["id"])
                           .values(url="http://mnist.ns.svc.cluster.local"))
        db.session.commit()
    before = app.config["MYAPP_PROMETHEUS_URL"]
    try:
        app.config["MYAPP_PROMETHEUS_URL"] = ""
        assert owner.get(path).get_json() == {"window": 60, "versions": {}, "series": {}}
        with fake_prometheus() as (url, seen):
            app.config["MYAPP_PROMETHEUS_URL"] = url
            got = owner.get(path).get_json()
        assert got["versions"]["v1"]["requests"] == 600 and got["versions"]["v2"]["p95"] is None
        namespace = owner.get(f"/api/v1/project/{pid}").get_json()["namespace"]
        assert all(f'destination_workload_namespace="{namespace}",destination_app="mnist"' in q["query"]
                   for q in seen)
        with fake_prometheus(fail=True) as (url, _):
            app.config["MYAPP_PROMETHEUS_URL"] = url
            resp = owner.get(path)
        assert resp.status_code == 503 and "parse error" in resp.get_json()["message"]
    finally:
        app.config["MYAPP_PROMETHEUS_URL"] = before


def test_a_kserve_service_s_figures_come_from_its_cluster_s_prometheus(app, make_user, admin):
    """KServe's predictor pods (the service's and its shadow's InferenceServices) carry app=<service> and
    version=v<N> like the Deployments' (tests/serving/test_kserve.py), so Istio names them alike; the
    figures are read from the Prometheus of the service's cluster, a shadow labelled as such."""
    from myapp.extensions import db
    from myapp.models import InferenceService
    from tests.support import unique

    owner = make_user()
    project = created(owner.post("/api/v1/project/", json={"name": unique("kfig")}))
    v1, v2 = (created(owner.post("/api/v1/model_version/", json={
        "project_id": project["id"], "name": "digits", "uri": f"s3://models/digits-{i}.joblib"}))["id"] for i in (1, 2))
    before = app.config["MYAPP_PROMETHEUS_URL"]
    with fake_prometheus() as (url, seen):
        cluster = created(admin.post("/api/v1/cluster/", json={
            "name": unique("k8s"), "kind": "kubernetes", "serving_engine": "kserve", "prometheus_url": url}))
        group = created(admin.post("/api/v1/resource_group/", json={"name": unique("rg"),
                                                                    "cluster_id": cluster["id"]}))
        service = created(owner.post("/api/v1/inference_service/", json={
            "project_id": project["id"], "name": "digits", "model_version_id": v1, "resource_group_id": group["id"],
            "shadow_version_id": v2}))
        with app.app_context():
            db.session.execute(sa.update(InferenceService).where(InferenceService.id == service["id"])
                               .values(url="http://digits-mirror.ns.svc.cluster.local"))
            db.session.commit()
        try:
            app.config["MYAPP_PROMETHEUS_URL"] = ""  # the cluster's is used, not the platform's
            got = owner.get(f"/api/v1/inference_service/{service['id']}/metrics?window=60").get_json()
        finally:
            app.config["MYAPP_PROMETHEUS_URL"] = before
    assert got["versions"]["v1"]["requests"] == 600 and got["versions"]["v2 (shadow)"]["requests"] == 300
    assert seen and all(f'destination_workload_namespace="{project["namespace"]}",destination_app="digits"'
                        in q["query"] for q in seen)
