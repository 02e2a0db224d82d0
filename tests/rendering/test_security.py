"""Pod security of every render: restricted securityContext, no API token, the project's own
account, reserved namespaces refused; the documented exceptions and nothing else (security.py)."""
from __future__ import annotations

import dataclasses

import pytest

from myapp.rendering import ContextError, ManifestError, render, validate_manifest
from myapp.rendering.context import reserved_namespace
from myapp.rendering.kinds.imagebuild import DOCKER_CONFIG, IMAGE_TAR, PUSH_IMAGE
from myapp.rendering.pod import containers, pod_templates
from myapp.rendering.security import KANIKO_CAPABILITIES, KANIKO_IMAGE, ROOT_TEMPLATES
from tests.rendering.support import PLAIN_CTX, REQUIRED_ARGS, SCENARIOS_ALL, catalog

RESTRICTED_CONTAINER = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
SECCOMP = {"type": "RuntimeDefault"}


def rendered(name: str, **args):
    return render(catalog()[name], {**REQUIRED_ARGS.get(name, {}), **args}, PLAIN_CTX)


def workload(name: str, **args):
    return next(o for o in rendered(name, **args) if list(pod_templates(o)))


def pod_spec(obj, index: int = 0):
    return list(pod_templates(obj))[index].template["spec"]


def is_launcher(obj, pod) -> bool:
    return obj["kind"] == "MPIJob" and pod.path == "spec.mpiReplicaSpecs.Launcher.template"


def test_every_pod_is_restricted_except_the_documented_exceptions():
    seen_root, seen_kaniko, seen_launcher = set(), 0, 0
    for name, _scenario, args, ctx, resources in SCENARIOS_ALL:
        for obj in render(catalog()[name], args, ctx, resources):
            for pod in pod_templates(obj):
                spec = pod.template["spec"]
                assert spec["securityContext"]["seccompProfile"] == SECCOMP, (name, pod.path)
                if name in ROOT_TEMPLATES:
                    seen_root.add(name)
                    assert "runAsNonRoot" not in spec["securityContext"], (name, pod.path)
                else:
                    assert spec["securityContext"]["runAsNonRoot"] is True, (name, pod.path)
                launcher = is_launcher(obj, pod)
                seen_launcher += launcher
                assert spec["automountServiceAccountToken"] is launcher, (name, pod.path)
                for where, container in containers(spec):
                    context = container["securityContext"]
                    if container["image"] == KANIKO_IMAGE:
                        seen_kaniko += 1
                        assert context == {**RESTRICTED_CONTAINER, "runAsUser": 0, "runAsNonRoot": False,
                                           "capabilities": {"drop": ["ALL"], "add": list(KANIKO_CAPABILITIES)}}
                    else:
                        assert {k: context[k] for k in RESTRICTED_CONTAINER} == RESTRICTED_CONTAINER, (name, where)
                        assert context.get("runAsUser") != 0 and context.get("runAsNonRoot") is not False
    assert seen_root == set(ROOT_TEMPLATES) and seen_kaniko == 2 and seen_launcher == 2


def test_the_mpi_launcher_alone_gets_a_token_from_the_operators_per_job_account():
    job = workload("horovod-mpi")
    launcher, worker = pod_spec(job, 0), pod_spec(job, 1)
    assert (launcher["serviceAccountName"], launcher["automountServiceAccountToken"]) == (
        f"{job['metadata']['name']}-launcher", True)
    assert (worker["serviceAccountName"], worker["automountServiceAccountToken"]) == (PLAIN_CTX.service_account, False)


def refused(obj, path_part: str) -> None:
    with pytest.raises(ManifestError) as info:
        validate_manifest(obj)
    assert path_part in info.value.path, info.value


POD = "spec.template.spec"


@pytest.mark.parametrize("mutate,path", [
    (lambda s: s["securityContext"].pop("seccompProfile"), f"{POD}.securityContext.seccompProfile"),
    (lambda s: s["securityContext"].update(seccompProfile={"type": "Unconfined"}), "seccompProfile"),
    (lambda s: s["securityContext"].pop("runAsNonRoot"), f"{POD}.securityContext.runAsNonRoot"),
    (lambda s: s["securityContext"].update(runAsUser=0), f"{POD}.securityContext.runAsUser"),
    (lambda s: s.update(hostPID=True), f"{POD}.hostPID"),
    (lambda s: s.pop("automountServiceAccountToken"), f"{POD}.automountServiceAccountToken"),
    (lambda s: s.update(automountServiceAccountToken=True), f"{POD}.automountServiceAccountToken"),
    (lambda s: s["containers"][0]["securityContext"].pop("allowPrivilegeEscalation"),
     f"{POD}.containers[0].securityContext.allowPrivilegeEscalation"),
    (lambda s: s["containers"][0]["securityContext"].update(allowPrivilegeEscalation=True), "allowPrivilegeEscalation"),
    (lambda s: s["containers"][0]["securityContext"].update(privileged=True), "securityContext.privileged"),
    (lambda s: s["containers"][0]["securityContext"]["capabilities"].update(drop=["NET_RAW"]), "capabilities.drop"),
    (lambda s: s["containers"][0]["securityContext"]["capabilities"].update(add=["NET_ADMIN"]), "capabilities.add"),
    (lambda s: s["containers"][0]["securityContext"].update(runAsNonRoot=False), "containers[0].securityContext"),
    (lambda s: s["containers"][0]["securityContext"].update(seccompProfile={"type": "Unconfined"}),
     "containers[0].securityContext.seccompProfile"),
])
def test_policy_refuses_a_pod_that_drifted_from_restricted(mutate, path):
    job = workload("python")
    validate_manifest(job)
    mutate(pod_spec(job))
    refused(job, path)


def test_root_templates_may_only_skip_run_as_non_root():
    job = workload("pytorch-ddp")
    validate_manifest(job)  # no runAsNonRoot: the image's own (root) user
    spec = pod_spec(job)
    spec["containers"][0]["securityContext"]["capabilities"]["add"] = ["SYS_ADMIN"]
    refused(job, "capabilities.add")
    job = workload("pytorch-ddp")
    pod_spec(job)["securityContext"]["seccompProfile"] = {"type": "Unconfined"}
    refused(job, "seccompProfile")
    # The label names the template: another template's pods claiming it stay restricted.
    job = workload("python")
    pod_spec(job)["securityContext"].pop("runAsNonRoot")
    job["metadata"]["labels"]["myapp.io/template"] = "python"
    refused(job, "runAsNonRoot")


@pytest.mark.parametrize("mutate,path", [
    # Only the pinned executor image carries the exception...
    (lambda s: s["initContainers"][1].update(image="gcr.io/kaniko-project/executor:debug"),
     "initContainers[1].securityContext"),
    # ...and only the capabilities it needs.
    (lambda s: s["initContainers"][1]["securityContext"]["capabilities"]["add"].append("SYS_ADMIN"),
     "initContainers[1].securityContext.capabilities.add"),
    (lambda s: s["initContainers"][1]["securityContext"].update(allowPrivilegeEscalation=True),
     "initContainers[1].securityContext.allowPrivilegeEscalation"),
    (lambda s: s["containers"][0]["securityContext"].update(runAsUser=0), "containers[0].securityContext"),
    (lambda s: s["initContainers"][0]["securityContext"].update(runAsNonRoot=False), "initContainers[0]"),
])
def test_kaniko_exception_is_the_executor_alone(mutate, path):
    job = workload("image-build")
    validate_manifest(job)
    mutate(pod_spec(job))
    refused(job, path)


def test_mpi_launcher_account_is_the_operators_and_only_there():
    job = workload("horovod-mpi")
    pod_spec(job, 0)["serviceAccountName"] = PLAIN_CTX.service_account
    refused(job, "Launcher.template.spec.serviceAccountName")
    job = workload("horovod-mpi")
    pod_spec(job, 0)["automountServiceAccountToken"] = False
    refused(job, "Launcher.template.spec.automountServiceAccountToken")
    job = workload("horovod-mpi")
    pod_spec(job, 1)["automountServiceAccountToken"] = True
    refused(job, "Worker.template.spec.automountServiceAccountToken")


@pytest.mark.parametrize("cache", [False, True])
def test_registry_credentials_never_reach_the_build(cache):
    """Kaniko runs the Dockerfile's RUN steps in its own container: they can read whatever it
    mounts. The Secret goes only to the push container, which runs after the build has exited."""
    job = workload("image-build", cache=cache, dockerfile="FROM busybox\nRUN cat /kaniko/.docker/config.json\n")
    spec = pod_spec(job)
    secret_volumes = {v["name"] for v in spec["volumes"] if "secret" in v}
    assert secret_volumes == {"registry-credentials"}
    prepare, build = spec["initContainers"]  # init containers: both have exited before push starts
    (push,) = spec["containers"]
    mounting = {c["name"]: m for _, c in containers(spec) for m in c.get("volumeMounts", [])
                if m["name"] in secret_volumes}
    assert mounting == {"push": {"name": "registry-credentials", "mountPath": DOCKER_CONFIG, "readOnly": True}}
    for container in (prepare, build, push):  # no credential in env, from any source
        assert "envFrom" not in container
        assert all("valueFrom" not in var for var in container["env"]), container["name"]
    assert {"name": "DOCKER_CONFIG", "value": DOCKER_CONFIG} in push["env"]
    assert spec["automountServiceAccountToken"] is False  # no API token to fetch the Secret with either
    # The build writes a tarball and pushes nothing; push runs a fixed program on it, read-only.
    args = build["args"]
    assert build["image"] == KANIKO_IMAGE and "--no-push" in args
    assert args[args.index("--tar-path") + 1] == IMAGE_TAR and args[args.index("--cache") + 1] == str(cache).lower()
    assert (push["image"], push["args"]) == (PUSH_IMAGE, ["push", IMAGE_TAR, "registry.example.com/vision/digits:1.0"])
    assert "command" not in push and push["securityContext"]["runAsUser"] == 65532
    assert {"name": "workspace", "mountPath": "/workspace", "readOnly": True} in push["volumeMounts"]


RESERVED = ["kube-system", "kube-public", "kube-node-lease", "kube-flannel", "default", "istio-system", "istio-ingress",
            "volcano-system", "volcano-monitoring", "kubeflow", "cert-manager", "knative-serving", "kserve", "myapp"]


@pytest.mark.parametrize("namespace", RESERVED)
def test_reserved_namespaces_are_refused(namespace, monkeypatch):
    monkeypatch.delenv("MYAPP_NAMESPACE", raising=False)
    with pytest.raises(ContextError) as info:
        render(catalog()["python"], {}, dataclasses.replace(PLAIN_CTX, namespace=namespace))
    assert info.value.field == "namespace" and repr(namespace) in info.value.reason


def test_the_platform_namespace_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("MYAPP_NAMESPACE", "myapp-system")
    assert "platform's own" in reserved_namespace("myapp-system")
    assert reserved_namespace("myapp") is None
    render(catalog()["python"], {}, dataclasses.replace(PLAIN_CTX, namespace="myapp"))
    with pytest.raises(ContextError):
        render(catalog()["python"], {}, dataclasses.replace(PLAIN_CTX, namespace="myapp-system"))


@pytest.mark.parametrize("namespace", ["proj-vision", "kubeflow-user-example-com", "kubernetes-lab", "defaults",
                                       "team-istio", "kserve-models"])
def test_ordinary_namespaces_render(namespace, monkeypatch):
    monkeypatch.delenv("MYAPP_NAMESPACE", raising=False)
    assert reserved_namespace(namespace) is None
    manifests = render(catalog()["python"], {}, dataclasses.replace(PLAIN_CTX, namespace=namespace))
    assert {m["metadata"]["namespace"] for m in manifests} == {namespace}
