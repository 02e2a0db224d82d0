"""cancel, cleanup (archive before delete, idempotent) and from_cluster (one configuration per cluster)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
import yaml
from kubernetes import client

from myapp.backends.archive import FileLogArchive
from myapp.backends.base import Backend, BackendError, JobState
from myapp.backends.kubernetes import KubernetesBackend, from_cluster
from tests.k8s_double import ApiServerDouble
from tests.k8s_double.support import NS, manifests

PYTORCH = ("kubeflow.org/v1", "PyTorchJob")


def add_pods(double, ref, replicas=("master-0", "worker-0", "worker-1"), kind=PYTORCH):
    names = []
    for replica in replicas:
        rtype, index = replica.split("-")
        name = f"{ref.job_name}-{replica}"
        double.add_pod(NS, name, {"myapp.io/job-name": ref.job_name, "training.kubeflow.org/replica-type": rtype,
                                  "training.kubeflow.org/replica-index": index},
                       containers=("pytorch",), owner=(*kind, ref.primary.name))
        double.append_log(NS, name, f"{replica} says hi", f"{replica} says bye")
        names.append(name)
    return names


def test_the_backend_implements_the_protocol(k8s_backend):
    assert isinstance(k8s_backend, Backend) and k8s_backend.name == "kubernetes"


def test_cancel_deletes_workload_podgroup_and_pods_and_reports_cancelled(double, k8s_backend):
    ref = k8s_backend.submit(manifests("pytorch-ddp", gang=True))
    double.set_status(*PYTORCH, NS, ref.primary.name, {"conditions": [{"type": "Running", "status": "True"}]})
    add_pods(double, ref)
    k8s_backend.cancel(ref)
    assert double.get(*PYTORCH, NS, ref.primary.name) is None
    assert double.get("scheduling.volcano.sh/v1beta1", "PodGroup", NS, ref.primary.name) is None
    assert double.list("v1", "Pod", NS) == []
    # the annotation went on before the delete, and deletes cascade in the foreground
    patch = double.requests_matching("PATCH", "/pytorchjobs/")[0]
    assert patch.body == {"metadata": {"annotations": {"myapp.io/cancelled": "true"}}}
    assert {(d.kind, d.propagation) for d in double.deletions if d.kind != "Pod"} == {
        ("PyTorchJob", "Foreground"), ("PodGroup", "Foreground")}
    assert k8s_backend.status(ref).state is JobState.CANCELLED
    k8s_backend.cancel(ref)  # again: nothing left, no error


def test_a_workload_still_terminating_with_the_annotation_reads_cancelled(double, k8s_backend):
    ref = k8s_backend.submit(manifests("python"))
    double.patch_metadata("batch/v1", "Job", NS, ref.primary.name, {"annotations": {"myapp.io/cancelled": "true"}})
    other_process = KubernetesBackend(double.api_client(), sleep=lambda s: None)
    assert other_process.status(ref).state is JobState.CANCELLED
    other_process.close()


def test_cleanup_archives_every_pod_log_before_deleting(double, k8s_backend, tmp_path):
    ref = k8s_backend.submit(manifests("pytorch-ddp", gang=True))
    add_pods(double, ref)
    archive = FileLogArchive(tmp_path)
    writes = []

    class Watching(FileLogArchive):
        def write(self, ref_, lines, **kwargs):
            writes.append({"pods": len(double.list("v1", "Pod", NS)),
                           "job": double.get(*PYTORCH, NS, ref_.primary.name) is not None})
            super().write(ref_, lines, **kwargs)

    k8s_backend.cleanup(ref, Watching(tmp_path))
    assert writes == [{"pods": 3, "job": True}]  # archived while everything still existed
    archived = archive.read(ref)
    assert sorted((ln.replica, ln.seq, ln.line) for ln in archived) == sorted(
        (r, s, f"{r} says {w}") for r in ("master-0", "worker-0", "worker-1") for s, w in ((1, "hi"), (2, "bye")))
    assert double.store.objects == {}
    assert {d.propagation for d in double.deletions if d.kind != "Pod"} == {"Background"}
    # idempotent: a second cleanup finds nothing, deletes nothing, keeps the archive
    k8s_backend.cleanup(ref, archive)
    assert archive.read(ref) == archived


def test_cleanup_does_not_delete_when_the_logs_cannot_be_archived(double, k8s_backend, tmp_path):
    ref = k8s_backend.submit(manifests("python"))
    double.add_pod(NS, "train-42-1-abcde", {"myapp.io/job-name": ref.job_name})
    double.inject_fault("GET", r"/log$", status=500, times=10)
    with pytest.raises(BackendError, match="open log"):
        k8s_backend.cleanup(ref, FileLogArchive(tmp_path))
    assert double.get("batch/v1", "Job", NS, ref.primary.name) is not None


def test_cleanup_of_a_service_deletes_every_object(double, k8s_backend, tmp_path):
    ref = k8s_backend.submit(manifests("deploy-service"))
    k8s_backend.cleanup(ref, FileLogArchive(tmp_path))
    assert [(d.kind, d.name) for d in double.deletions] == [
        ("VirtualService", "digits"), ("HorizontalPodAutoscaler", "digits-v2"), ("Service", "digits"),
        ("Service", "digits-v2"), ("Deployment", "digits-v2")]
    assert double.store.objects == {}


# --- from_cluster ------------------------------------------------------------------------

def kubeconfig(tmp_path, contexts):
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": next(iter(contexts)),
           "clusters": [{"name": n, "cluster": {"server": url}} for n, url in contexts.items()],
           "users": [{"name": n, "user": {"token": f"token-{n}"}} for n in contexts],
           "contexts": [{"name": n, "context": {"cluster": n, "user": n}} for n in contexts]}
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def test_from_cluster_builds_one_client_per_kubeconfig_context(tmp_path):
    with ApiServerDouble() as east, ApiServerDouble() as west:
        path = kubeconfig(tmp_path, {"east": east.url, "west": west.url})
        default_host = client.Configuration.get_default_copy().host
        backends = {name: from_cluster(SimpleNamespace(name=name, kind="kubernetes", kube_context=name,
                                                       in_cluster=False, prometheus_url=None),
                                       config_file=path, sleep=lambda s: None)
                    for name in ("east", "west")}
        backends["west"].submit(manifests("python"))
        assert west.list("batch/v1", "Job") and not east.list("batch/v1", "Job")
        assert {r.headers.get("authorization") for r in west.requests} == {"Bearer token-west"}
        east_cfg = backends["east"].api_client.configuration
        assert east_cfg.host == east.url and east_cfg.auth_settings()["BearerToken"]["value"] == "Bearer token-east"
        assert east_cfg.retries is False
        assert east_cfg is not backends["west"].api_client.configuration
        assert client.Configuration.get_default_copy().host == default_host  # global default untouched
        classmethod_backend = KubernetesBackend.from_cluster(
            {"name": "west", "kind": "kubernetes", "kube_context": "west", "prometheus_url": "http://prom:9090"},
            config_file=path)
        assert classmethod_backend.prometheus_url == "http://prom:9090"
        for b in [*backends.values(), classmethod_backend]:
            b.close()


def test_from_cluster_in_cluster_uses_the_service_account(tmp_path, monkeypatch):
    from kubernetes.config import incluster_config

    token, cert = tmp_path / "token", tmp_path / "ca.crt"
    token.write_text("sa-token")
    cert.write_text("not really a cert")
    monkeypatch.setattr(incluster_config, "SERVICE_TOKEN_FILENAME", str(token))
    monkeypatch.setattr(incluster_config, "SERVICE_CERT_FILENAME", str(cert))
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    default_host = client.Configuration.get_default_copy().host
    backend_ = from_cluster({"name": "here", "kind": "kubernetes", "in_cluster": True})
    cfg = backend_.api_client.configuration
    assert cfg.host == "https://10.0.0.1:443"
    assert cfg.auth_settings()["BearerToken"]["value"].lower() == "bearer sa-token"
    assert client.Configuration.get_default_copy().host == default_host
    backend_.close()


@pytest.mark.parametrize(("cluster", "message"), [
    ({"name": "c", "kind": "local"}, "not a Kubernetes cluster"),
    ({"name": "c", "kind": "kubernetes"}, "set kube_context or in_cluster"),
    ({"name": "c", "kind": "kubernetes", "kube_context": "nowhere"}, "cluster c:"),
])
def test_from_cluster_refuses_unusable_rows(tmp_path, cluster, message):
    path = kubeconfig(tmp_path, {"east": "http://127.0.0.1:1"})
    with pytest.raises(BackendError, match=message):
        from_cluster(cluster, config_file=path)
