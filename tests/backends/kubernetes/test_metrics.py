"""metrics: Prometheus range queries (against a canned local Prometheus) and the metrics API."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from myapp.backends.base import BackendError, MetricSample
from tests.k8s_double.support import NS, make_backend, manifests

T0 = 1_700_000_000.0


class CannedPrometheus:
    """Answers /api/v1/query_range from canned series keyed by metric name; records queries."""

    def __init__(self, series: dict[str, list[dict]], fail: list[tuple[int, dict]] | None = None):
        self.series, self.fail, self.queries = series, list(fail or []), []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                url = urlsplit(self.path)
                params = {k: v[0] for k, v in parse_qs(url.query).items()}
                owner.queries.append(params)
                if owner.fail:
                    code, body = owner.fail.pop(0)
                else:
                    metric = next((m for m in owner.series if m in params.get("query", "")), None)
                    code, body = (200, {"status": "success", "data": {
                        "resultType": "matrix", "result": owner.series.get(metric, [])}})
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def series(pod, *values):
    return {"metric": {"pod": pod, "namespace": NS}, "values": [[T0 + 15 * i, str(v)] for i, v in enumerate(values)]}


@pytest.fixture
def job(double, k8s_backend):
    ref = k8s_backend.submit(manifests("pytorch-ddp", workers=1))
    for replica in ("master-0", "worker-0"):
        rtype, index = replica.split("-")
        double.add_pod(NS, f"train-42-1-{replica}", {
            "myapp.io/job-name": ref.job_name, "training.kubeflow.org/replica-type": rtype,
            "training.kubeflow.org/replica-index": index}, containers=("pytorch",))
    double.add_pod(NS, "someone-else", {"myapp.io/job-name": "other"})
    return ref


def test_prometheus_series_are_merged_per_time_and_replica(double, sleeps, job):
    prom = CannedPrometheus({
        "container_cpu_usage_seconds_total": [series("train-42-1-master-0", 0.5, 1.5),
                                              series("train-42-1-worker-0", 2.0, 2.0),
                                              series("someone-else", 9)],
        "container_memory_working_set_bytes": [series("train-42-1-master-0", 1024, 2048)],
        "DCGM_FI_DEV_GPU_UTIL": [series("train-42-1-worker-0", 87, "NaN")],
        "DCGM_FI_DEV_FB_USED": [series("train-42-1-worker-0", 100, 200)],
    })
    try:
        samples = make_backend(double, sleeps, prometheus_url=prom.url).metrics(job, since=T0 - 60)
    finally:
        prom.close()
    assert samples == [
        MetricSample(T0, "master-0", cpu_cores=0.5, memory_bytes=1024),
        MetricSample(T0, "worker-0", cpu_cores=2.0, gpu_utilization=87.0, gpu_memory_bytes=100 * 2 ** 20),
        MetricSample(T0 + 15, "master-0", cpu_cores=1.5, memory_bytes=2048),
        MetricSample(T0 + 15, "worker-0", cpu_cores=2.0, gpu_memory_bytes=200 * 2 ** 20),
    ]
    assert len(prom.queries) == 4
    cpu = prom.queries[0]
    assert "rate(container_cpu_usage_seconds_total{" in cpu["query"]
    assert f'namespace="{NS}"' in cpu["query"]
    assert 'pod=~"train-42-1-master-0|train-42-1-worker-0"' in cpu["query"]
    assert float(cpu["start"]) == T0 - 60 and float(cpu["step"]) >= 15


def test_prometheus_errors_are_retried_then_raised(double, sleeps, job):
    busy = (503, {"status": "error", "errorType": "unavailable", "error": "overloaded"})
    prom = CannedPrometheus({"container_cpu_usage_seconds_total": [series("train-42-1-master-0", 1)]},
                            fail=[busy, busy])
    try:
        backend_ = make_backend(double, sleeps, prometheus_url=prom.url)
        assert backend_.metrics(job, since=T0)[0].cpu_cores == 1.0
        assert len(sleeps) == 2
        prom.fail = [(400, {"status": "error", "errorType": "bad_data", "error": "parse error at char 3"})]
        with pytest.raises(BackendError, match="parse error at char 3"):
            backend_.metrics(job, since=T0)
        assert len(sleeps) == 2  # a bad query is not retried
    finally:
        prom.close()


def test_metrics_api_quantities_are_parsed_and_summed(double, k8s_backend, job):
    double.set_pod_metrics(NS, "train-42-1-master-0", {"pytorch": {"cpu": "250m", "memory": "512Mi"},
                                                       "istio-proxy": {"cpu": "1500000n", "memory": "40Ki"}},
                           timestamp="2023-11-14T22:13:20Z")
    double.set_pod_metrics(NS, "train-42-1-worker-0", {"pytorch": {"cpu": "2", "memory": "1Gi"}},
                           timestamp="2023-11-14T22:13:35Z")
    double.set_pod_metrics(NS, "someone-else", {"main": {"cpu": "9", "memory": "9Gi"}})
    samples = k8s_backend.metrics(job)
    assert samples == [
        MetricSample(T0, "master-0", cpu_cores=pytest.approx(0.2515), memory_bytes=512 * 2 ** 20 + 40 * 1024),
        MetricSample(T0 + 15, "worker-0", cpu_cores=2.0, memory_bytes=2 ** 30),
    ]
    assert k8s_backend.metrics(job, since=T0 + 10) == samples[1:]
    lists = double.requests_matching("GET", r"/apis/metrics.k8s.io/v1beta1/namespaces/proj-vision/pods$")
    assert lists[0].query["labelSelector"] == "myapp.io/job-name=train-42-1"


def test_metrics_api_missing_is_an_error(double, k8s_backend, job):
    double.inject_fault("GET", r"metrics.k8s.io", status=404)
    with pytest.raises(BackendError, match=r"PodMetrics.*404"):
        k8s_backend.metrics(job)
