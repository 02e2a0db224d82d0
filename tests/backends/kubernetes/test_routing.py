"""A routing-only submission (a serving service's front Service and VirtualService: no workload) against the
double: created, resubmitted (409: adopted, or merge-patched to the new split and mirror), strictly
validated, reported in place or not, and deleted whole by cancel and cleanup without touching pods."""
from __future__ import annotations

import pytest

from myapp.backends.archive import FileLogArchive
from myapp.backends.base import BackendError, InvalidManifest, JobState
from myapp.serving import manifests as serving
from tests.k8s_double.support import NS

VS = ("networking.istio.io/v1", "VirtualService")
SPEC = serving.ServiceSpec(id=7, name="digits", project="demo", namespace=NS, service_account="default-editor")
LABELS = {1: "v1", 2: "v2", 3: "v3"}


def traffic(split: dict[int, int], shadow: int | None = None, percent: int = 0) -> list[dict]:
    return serving.traffic(SPEC, split, LABELS, shadow, percent)


def http(double) -> dict:
    return double.get(*VS, NS, "digits")["spec"]["http"][0]


def test_submit_creates_and_resubmit_adopts_or_patches(double, k8s_backend):
    ref = k8s_backend.submit(traffic({1: 100}))
    assert (ref.primary.kind, ref.primary.name, ref.job_name) == ("VirtualService", "digits", "digits")
    assert [(o.kind, o.name) for o in ref.objects] == [("Service", "digits"), ("VirtualService", "digits")]
    assert double.get("v1", "Service", NS, "digits") is not None
    uid = double.get(*VS, NS, "digits")["metadata"]["uid"]

    assert k8s_backend.submit(traffic({1: 100})) == ref  # the same: 409, read, nothing written
    assert not double.requests_matching("PATCH", ".")

    assert k8s_backend.submit(traffic({1: 70, 2: 30}, shadow=3, percent=25)) == ref
    route = http(double)
    assert [(r["destination"]["host"].split(".")[0], r["weight"]) for r in route["route"]] == [
        ("digits-v1", 70), ("digits-v2", 30)]
    assert (route["mirror"]["host"].split(".")[0], route["mirrorPercentage"]["value"]) == ("digits-v3", 25.0)
    assert [r.path.rsplit("/", 1)[-1] for r in double.requests_matching("PATCH", ".")] == ["digits"]

    k8s_backend.submit(traffic({2: 100}))  # the mirror gone: the custom resource's spec is replaced exactly
    assert "mirror" not in http(double) and len(http(double)["route"]) == 1
    assert double.get(*VS, NS, "digits")["metadata"]["uid"] == uid  # patched in place, never recreated
    assert not double.deletions


def test_status_reports_in_place_or_missing_and_reads_no_pods(double, k8s_backend):
    ref = k8s_backend.submit(traffic({1: 100}))
    status = k8s_backend.status(ref)
    assert (status.state, status.url) == (JobState.RUNNING, f"http://digits.{NS}.svc.cluster.local")
    assert k8s_backend.list_pods(ref) == [] and k8s_backend.metrics(ref) == [] and list(k8s_backend.logs(ref)) == []
    assert k8s_backend.workload_finished(ref)
    assert not double.requests_matching("*", r"/pods")
    k8s_backend.api.delete(ref.objects[1], "Background")  # deleted outside the platform
    status = k8s_backend.status(ref)
    assert status.state is JobState.FAILED and "VirtualService/digits" in status.reason


def test_cancel_and_cleanup_delete_everything_and_are_idempotent(double, k8s_backend, tmp_path):
    ref = k8s_backend.submit(traffic({1: 100}))
    k8s_backend.cancel(ref)
    assert double.get(*VS, NS, "digits") is None and double.get("v1", "Service", NS, "digits") is None
    assert {(d.kind, d.name) for d in double.deletions} == {("Service", "digits"), ("VirtualService", "digits")}
    assert not double.requests_matching("PATCH", ".")  # nothing to annotate
    assert not double.requests_matching("*", r"/pods")
    assert k8s_backend.status(ref).state is JobState.CANCELLED
    k8s_backend.cancel(ref)
    k8s_backend.cleanup(ref, FileLogArchive(tmp_path))
    assert double.store.objects == {}
    # submitted again (a service recreated under the same name): no longer cancelled
    assert k8s_backend.status(k8s_backend.submit(traffic({1: 100}))).state is JobState.RUNNING


def test_strict_validation_and_what_is_still_refused(double, k8s_backend):
    bad = traffic({1: 100})
    bad[1]["spec"]["http"][0]["weightt"] = 1
    with pytest.raises(InvalidManifest, match="weightt"):
        k8s_backend.submit(bad)
    pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": NS},
           "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}
    with pytest.raises(BackendError, match="no workload"):
        k8s_backend.submit([*traffic({1: 100}), pvc])
    with pytest.raises(BackendError, match="no workload"):
        k8s_backend.submit([])
    assert double.get(*VS, NS, "digits") is None
