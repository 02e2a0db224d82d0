"""An inference service rendered as one KServe InferenceService (myapp/serving/manifests.kserve) against the
API-server double, which validates it strictly against KServe's CRD: created, its readiness read from its
status conditions (and its URL from its status), a canary patched in place through canaryTrafficPercent,
an invalid object refused, and cancel deleting it."""
from __future__ import annotations

import copy

import pytest

from myapp.backends.archive import FileLogArchive
from myapp.backends.base import InvalidManifest, JobState
from myapp.rendering import ArgumentError
from myapp.rendering.contract import JOB_NAME_LABEL
from myapp.rendering.security import RESTRICTED_CONTAINER, RESTRICTED_POD
from myapp.serving import manifests as serving
from tests.k8s_double.support import NS

ISVC = ("serving.kserve.io/v1beta1", "InferenceService")
SPEC = serving.ServiceSpec(id=7, name="digits", project="demo", namespace=NS, service_account="default-editor",
                           min_replicas=1, max_replicas=4, autoscale_metric="rps", autoscale_target=20)


def version(number: int) -> serving.VersionSpec:
    return serving.VersionSpec(id=10 + number, version=number, framework="sklearn",
                               uri=f"s3://models/digits/{number}/model.joblib",
                               signature={"shape": [None, 64], "dtype": "float32"})


def predictor(double) -> dict:
    return double.get(*ISVC, NS, "digits")["spec"]["predictor"]


def test_rendered_predictor_is_restricted_and_carries_the_split():
    (isvc,) = serving.kserve(SPEC, version(2), canary_percent=30)
    pod = isvc["spec"]["predictor"]
    assert (pod["minReplicas"], pod["maxReplicas"], pod["scaleMetric"], pod["scaleTarget"]) == (1, 4, "rps", 20)
    assert pod["canaryTrafficPercent"] == 30
    assert pod["labels"]["version"] == "v2" and pod["labels"][JOB_NAME_LABEL] == "digits"
    assert pod["securityContext"] == RESTRICTED_POD and pod["automountServiceAccountToken"] is False
    (container,) = pod["containers"]
    assert container["securityContext"] == RESTRICTED_CONTAINER
    assert container["args"][:2] == ["--version", "v2"]


def test_bad_settings_are_refused_naming_the_field():
    with pytest.raises(ArgumentError) as caught:
        serving.kserve(serving.ServiceSpec(**{**SPEC.__dict__, "autoscale_metric": "gpu"}), version(1))
    assert caught.value.field == "autoscale_metric"
    with pytest.raises(ArgumentError) as caught:
        serving.kserve(SPEC, version(1), canary_percent=101)
    assert caught.value.field == "canary_percent"
    with pytest.raises(ArgumentError) as caught:
        serving.kserve(serving.ServiceSpec(**{**SPEC.__dict__, "min_replicas": 5}), version(1))
    assert caught.value.field == "min_replicas"


def test_submit_status_canary_in_place_and_cancel(double, k8s_backend, tmp_path):
    ref = k8s_backend.submit(serving.kserve(SPEC, version(1)))
    assert (ref.primary.kind, ref.primary.name, ref.job_name) == ("InferenceService", "digits", "digits")
    uid = double.get(*ISVC, NS, "digits")["metadata"]["uid"]
    assert k8s_backend.status(ref).state is JobState.PENDING

    double.set_status(*ISVC, NS, "digits", {"conditions": [
        {"type": "PredictorReady", "status": "False", "reason": "RevisionMissing", "message": "image not pulled"},
        {"type": "Ready", "status": "False"}]})
    pending = k8s_backend.status(ref)
    assert pending.state is JobState.PENDING and "image not pulled" in pending.reason

    url = f"http://digits.{NS}.example.com"
    double.set_status(*ISVC, NS, "digits", {"url": url, "conditions": [{"type": "Ready", "status": "True"}]})
    running = k8s_backend.status(ref)
    assert (running.state, running.url) == (JobState.RUNNING, url)

    # A canary: the same object, its predictor now the new version with 30 % (KServe keeps the old revision).
    assert k8s_backend.submit(serving.kserve(SPEC, version(2), canary_percent=30)) == ref
    assert double.get(*ISVC, NS, "digits")["metadata"]["uid"] == uid
    assert (predictor(double)["labels"]["version"], predictor(double)["canaryTrafficPercent"]) == ("v2", 30)
    assert k8s_backend.submit(serving.kserve(SPEC, version(2))) == ref  # promoted: all of it
    assert predictor(double)["canaryTrafficPercent"] == 100

    k8s_backend.cancel(ref)
    k8s_backend.cleanup(ref, FileLogArchive(tmp_path / "logs"))
    assert double.get(*ISVC, NS, "digits") is None


def test_the_double_refuses_what_the_crd_does_not_allow(double, k8s_backend):
    (isvc,) = serving.kserve(SPEC, version(1))
    bad = copy.deepcopy(isvc)
    bad["spec"]["predictor"]["canaryTrafficPercent"] = "thirty"
    with pytest.raises(InvalidManifest):
        k8s_backend.submit([bad])
    unknown = copy.deepcopy(isvc)
    unknown["spec"]["predictor"]["replicas"] = 2  # not a field of the predictor: strict validation refuses it
    with pytest.raises(InvalidManifest):
        k8s_backend.submit([unknown])
    assert double.get(*ISVC, NS, "digits") is None
