"""submit through the official client against the API-server double: real rendered manifests,
409 adoption, strict validation, dry-run, retries with backoff, give-up."""
from __future__ import annotations

import copy

import pytest

from myapp.backends.base import BackendError, JobRef, UnsupportedKind
from myapp.backends.kubernetes import RetryPolicy
from myapp.rendering.contract import JOB_NAME_LABEL
from tests.k8s_double.support import NS, make_backend, manifests

# template, gang scenario, expected primary kind
CASES = [
    ("pytorch-ddp", True, "PyTorchJob"),
    ("pytorch-ddp", False, "PyTorchJob"),
    ("tf-distributed", True, "TFJob"),
    ("xgboost", False, "XGBoostJob"),
    ("horovod-mpi", False, "MPIJob"),
    ("python", False, "Job"),
    ("volcano-job", True, "Job"),
    ("deploy-service", False, "Deployment"),
    ("notebook", False, "Notebook"),
]


def stored(double, objs):
    return [double.get(o["apiVersion"], o["kind"], o["metadata"]["namespace"], o["metadata"]["name"]) for o in objs]


@pytest.mark.parametrize(("template", "gang", "primary_kind"), CASES)
def test_render_then_submit_creates_every_object(double, k8s_backend, template, gang, primary_kind):
    objs = manifests(template, gang=gang)
    ref = k8s_backend.submit(objs)
    assert ref.backend == "kubernetes"
    assert ref.primary.kind == primary_kind
    assert [(o.kind, o.name) for o in ref.objects] == [(m["kind"], m["metadata"]["name"]) for m in objs]
    for want, got in zip(objs, stored(double, objs), strict=True):
        assert got is not None, want["kind"]
        assert got["spec"] == want["spec"]
        assert got["metadata"]["labels"] == want["metadata"]["labels"]
    if primary_kind != "Notebook":  # every pod template carries the attempt's job-name label
        assert ref.job_name == ref.primary.name or primary_kind == "Deployment"
    assert JobRef.from_dict(ref.as_dict()) == ref
    # every create asked the server for strict field validation
    posts = double.requests_matching("POST", ".")
    assert posts and all(r.query.get("fieldValidation") == "Strict" for r in posts)


def test_submit_twice_adopts_and_creates_nothing_new(double, k8s_backend):
    objs = manifests("pytorch-ddp", gang=True)
    first = k8s_backend.submit(objs)
    versions = [o["metadata"]["resourceVersion"] for o in stored(double, objs)]
    rv = double.store.rv
    second = k8s_backend.submit(copy.deepcopy(objs))
    assert second == first
    assert double.store.rv == rv  # not one write
    assert [o["metadata"]["resourceVersion"] for o in stored(double, objs)] == versions
    assert len(double.list("kubeflow.org/v1", "PyTorchJob", NS)) == 1
    assert len(double.requests_matching("POST", ".")) == 4  # 2 created + 2 answered 409
    assert not double.requests_matching("PATCH", ".")


def test_job_name_is_the_pod_label(k8s_backend):
    objs = manifests("deploy-service", version="v3")
    ref = k8s_backend.submit(objs)
    labels = objs[0]["spec"]["template"]["metadata"]["labels"]
    assert ref.job_name == labels[JOB_NAME_LABEL] == "digits-v3"


def test_shared_routing_objects_converge_on_a_new_version(double, k8s_backend):
    k8s_backend.submit(manifests("deploy-service", version="v1"))
    route_v1 = double.get("networking.istio.io/v1", "VirtualService", NS, "digits")
    assert [r["destination"]["host"].split(".")[0] for r in route_v1["spec"]["http"][0]["route"]] == ["digits-v1"]
    k8s_backend.submit(manifests("deploy-service", version="v2", previous_version="v1", canary_weight=25))
    route = double.get("networking.istio.io/v1", "VirtualService", NS, "digits")["spec"]["http"][0]["route"]
    assert [(r["destination"]["host"].split(".")[0], r["weight"]) for r in route] == [("digits-v1", 75),
                                                                                     ("digits-v2", 25)]
    # the stable Service was already right: only the VirtualService was patched
    patches = double.requests_matching("PATCH", ".")
    assert [p.path.rsplit("/", 1)[1] for p in patches] == ["digits"]
    assert "virtualservices" in patches[0].path


def test_dry_run_validates_and_stores_nothing(double, sleeps):
    dry = make_backend(double, sleeps, dry_run=True)
    objs = manifests("tf-distributed", gang=True)
    ref = dry.submit(objs)
    assert ref.primary.kind == "TFJob"
    assert double.store.objects == {}
    assert all(r.query.get("dryRun") == "All" for r in double.requests_matching("POST", "."))
    bad = copy.deepcopy(objs)
    bad[1]["spec"]["tfReplicaSpecs"]["Worker"]["replicass"] = 3
    with pytest.raises(BackendError, match=r"replicass"):
        dry.submit(bad)
    dry.close()


def test_strict_validation_of_a_custom_resource_names_the_field(double, k8s_backend):
    objs = manifests("pytorch-ddp")
    objs[0]["spec"]["pytorchReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "x"
    with pytest.raises(BackendError) as info:
        k8s_backend.submit(objs)
    message = str(info.value)
    assert "create PyTorchJob/train-42-1" in message and "422" in message
    assert "spec.pytorchReplicaSpecs.Worker.template.spec.containers[0]" in message
    assert "imagePullPolicyy" in message
    assert double.store.objects == {}


def test_server_side_semantics_of_a_builtin_name_the_field(double, k8s_backend):
    objs = manifests("python")
    objs[0]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] = "lots"
    with pytest.raises(BackendError, match=r"422 Invalid.*resources\.limits\.cpu"):
        k8s_backend.submit(objs)
    assert double.store.objects == {}


def test_unknown_field_in_a_builtin_is_refused_before_sending(double, k8s_backend):
    objs = manifests("python")
    objs[0]["spec"]["backoffLimitt"] = 2
    with pytest.raises(BackendError, match=r"spec\.backoffLimitt"):
        k8s_backend.submit(objs)
    assert not double.requests_matching("POST", ".")


def test_unsupported_kind_and_missing_workload(k8s_backend):
    with pytest.raises(UnsupportedKind):
        k8s_backend.submit([{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": NS}}])
    podgroup = [m for m in manifests("pytorch-ddp", gang=True) if m["kind"] == "PodGroup"]
    with pytest.raises(BackendError, match="no workload"):  # routing kinds alone are accepted (test_routing.py)
        k8s_backend.submit(podgroup)


def test_retries_500_then_succeeds_with_exponential_backoff(double, k8s_backend, sleeps):
    fault = double.inject_fault("POST", r"/pytorchjobs$", status=500, times=3)
    ref = k8s_backend.submit(manifests("pytorch-ddp"))
    assert fault.hits == 3
    assert double.get("kubeflow.org/v1", "PyTorchJob", NS, ref.primary.name) is not None
    assert len(sleeps) == 3
    for n, delay in enumerate(sleeps):  # 0.1 * 2**n, +-20% jitter, capped at 1.0
        assert 0.1 * 2 ** n * 0.8 <= delay <= min(1.0, 0.1 * 2 ** n) * 1.2


def test_429_honours_retry_after(double, k8s_backend, sleeps):
    double.inject_fault("POST", r"/jobs$", status=429, retry_after=7)
    k8s_backend.submit(manifests("python"))
    assert sleeps and sleeps[0] >= 7
    assert len(double.list("batch/v1", "Job", NS)) == 1


def test_timeout_is_retried(double, k8s_backend, sleeps):
    fault = double.inject_fault("GET", r"/pytorchjobs/", hang=3)
    ref = k8s_backend.submit(manifests("pytorch-ddp"))
    double.set_status("kubeflow.org/v1", "PyTorchJob", NS, ref.primary.name,
                      {"conditions": [{"type": "Running", "status": "True"}]})
    assert k8s_backend.status(ref).state.value == "running"
    assert fault.hits == 1 and len(sleeps) == 1


def test_lost_answer_of_a_create_is_adopted_on_retry(double, k8s_backend, sleeps):
    # the server creates the object but the answer never arrives: the retry gets 409 -> adopt
    double.inject_fault("POST", r"/jobs$", hang=3, process=True)
    ref = k8s_backend.submit(manifests("python"))
    assert len(double.list("batch/v1", "Job", NS)) == 1
    posts = double.requests_matching("POST", r"/jobs$")
    assert len(posts) == 2 and len(sleeps) == 1
    assert ref.primary.name == "train-42-1"


def test_gives_up_after_the_budget(double, k8s_backend, sleeps):
    double.inject_fault("POST", r"/pytorchjobs$", status=503, times=100)
    with pytest.raises(BackendError, match=r"create PyTorchJob/train-42-1: 503 .*gave up after 4 attempts"):
        k8s_backend.submit(manifests("pytorch-ddp"))
    assert len(sleeps) == 3
    assert double.store.objects == {}


def test_client_errors_are_not_retried(double, k8s_backend, sleeps):
    double.inject_fault("POST", r"/jobs$", status=403)
    with pytest.raises(BackendError, match="403"):
        k8s_backend.submit(manifests("python"))
    assert sleeps == []


def test_backoff_is_bounded_and_jittered():
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0, jitter=0.5, max_retry_after=30)
    assert policy.delay(0, rand=lambda: 0.5) == 1.0
    assert policy.delay(10, rand=lambda: 0.5) == 5.0
    assert policy.delay(10, rand=lambda: 1.0) == 7.5  # cap * (1 + jitter)
    assert policy.delay(0, rand=lambda: 0.0) == 0.5
    assert policy.delay(0, retry_after=12, rand=lambda: 0.5) == 12
    assert policy.delay(0, retry_after=999, rand=lambda: 0.5) == 30
    with pytest.raises(ValueError):
        RetryPolicy(attempts=0)
