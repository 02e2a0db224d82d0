"""The Kubernetes install manifests: strict schemas, and RBAC that grants what the code calls and nothing else.

The manifests are read with PyYAML by following each kustomization's `resources` and `components`
(kustomize need not be installed; install/validate.py also builds them when kubectl is there).
WORKER_CALLS / WEB_CALLS (with the manifests as read: tests/install_support.py) are what
myapp/backends/kubernetes calls, derived by reading the code;
the RBAC must equal them, and so must the requests the backend really makes against the
API-server double when it runs every catalog template through its whole lifecycle.
Nothing is granted cluster-wide, except by the opt-in components: volcano (QUEUE_CALLS on the
cluster-scoped Volcano Queues, bound to the worker's account), node-discovery (list nodes, the worker)
and run-watch (list and watch what the platform submits, the beat's own account), and nothing more.
"""
from __future__ import annotations

import ast
import copy
import importlib.util
import re
import subprocess
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from myapp.backends.archive import FileLogArchive
from myapp.backends.kubernetes.resources import KINDS
from myapp.rendering import render
from myapp.rendering.contract import PRIORITY_CLASS
from myapp.rendering.pod import pod_templates
from myapp.rendering.volcano_queue import Amount, QuotaShare, queue_spec
from myapp.serving.manifests import ServiceSpec, VersionSpec
from myapp.serving.manifests import kserve as serving_kserve
from myapp.serving.manifests import traffic as serving_traffic
from tests.install_support import (
    BASE,
    COMPONENT,
    DEMO,
    EVERYTHING,
    INSTALL,
    ISTIO,
    NODES,
    PLATFORM_NS,
    PLATFORM_WRITTEN,
    QUEUE_CALLS,
    ROOT,
    SENSITIVE,
    VOLCANO,
    WATCH,
    WEB_CALLS,
    WITH_NODES,
    WITH_VOLCANO,
    WITH_WATCH,
    WORKER_CALLS,
    WORKLOADS,
    Grants,
    by_kind,
    grants,
    kustomization,
)
from tests.k8s_double.support import NS, manifests
from tests.rendering.support import GPU_GROUP, PLAIN_CTX, REQUIRED_ARGS, SCENARIOS_ALL, catalog
from tests.support import in_thread, wait_until


def test_install_manifests_validate():
    result = subprocess.run([sys.executable, str(INSTALL / "validate.py")], capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    for name in ("ClusterRole/myapp-volcano-queues", "ClusterRoleBinding/myapp-volcano-queues",
                 f"PriorityClass/{PRIORITY_CLASS}"):  # the opt-in component, built into its overlay
        assert f"ok   with-volcano: {name}" in result.stdout.splitlines(), result.stdout


def validate_module():
    spec = importlib.util.spec_from_file_location("install_validate", INSTALL / "validate.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_validate_refuses_any_other_cluster_wide_grant():
    """validate.py lets through the Volcano binding exactly as the component has it, and nothing like it."""
    rbac_problems = validate_module().rbac_problems
    role, binding = (copy.deepcopy(by_kind(VOLCANO, kind)["myapp-volcano-queues"])
                     for kind in ("ClusterRole", "ClusterRoleBinding"))
    assert rbac_problems(role) == [] and rbac_problems(binding) == []
    for change in ({"subjects": [{"kind": "ServiceAccount", "name": "myapp-web", "namespace": PLATFORM_NS}]},
                   {"roleRef": {**binding["roleRef"], "name": "myapp-project-workloads"}},
                   {"metadata": {"name": "myapp-other"}}):
        assert "a cluster-wide binding" in " ".join(rbac_problems({**binding, **change})), change
    for rules in ([{**role["rules"][0], "verbs": ["create", "get", "update", "delete"]}],
                  [*role["rules"], {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]}]):
        assert rbac_problems({**role, "rules": rules}), rules


def test_every_manifest_file_is_part_of_a_kustomization():
    used = {path for path, _ in EVERYTHING}
    files = {p.resolve() for p in INSTALL.rglob("*.yaml") if p.name != "kustomization.yaml"}
    assert files == used, "files no kustomization applies: " + ", ".join(sorted(map(str, files - used)))


def test_no_wildcard_escalation_or_cluster_wide_grant():
    """Nothing cluster-wide but the opt-in Volcano component's binding (test_the_volcano_component_...)."""
    for path, doc in EVERYTHING:
        where = f"{path.relative_to(INSTALL)}: {doc['kind']}/{doc['metadata']['name']}"
        if (path, doc) not in VOLCANO and (path, doc) not in NODES and (path, doc) not in WATCH:
            assert doc["kind"] != "ClusterRoleBinding", f"{where}: roles are bound per namespace"
        assert (doc.get("roleRef") or {}).get("name") not in ("cluster-admin", "admin", "edit"), where
        for rule in doc.get("rules") or []:
            values = [v for key in ("apiGroups", "resources", "verbs", "resourceNames") for v in rule.get(key) or []]
            assert not any("*" in v for v in values), f"{where}: wildcard in {rule}"
            assert not set(rule["verbs"]) & {"escalate", "bind", "impersonate"}, f"{where}: {rule}"
            # Reading nodes is the one exception, opt-in: components/node-discovery (list, nothing else).
            sensitive = SENSITIVE - {"nodes"} if (path, doc) in NODES and set(rule["verbs"]) <= {"list"} else SENSITIVE
            assert not set(rule["resources"]) & sensitive, f"{where}: {rule}"
            if "secrets" in rule["resources"]:  # reading them would reveal every credential of the namespace
                assert not set(rule["verbs"]) & {"get", "list", "watch"}, f"{where}: {rule}"


def test_the_rbac_is_exactly_what_the_backend_calls():
    roles = by_kind(BASE, "ClusterRole")
    assert set(roles) == {"myapp-project-workloads", "myapp-project-observer"}
    assert grants(roles["myapp-project-workloads"]) == WORKER_CALLS
    assert grants(roles["myapp-project-observer"]) == WEB_CALLS
    assert grants(by_kind(VOLCANO, "ClusterRole")["myapp-volcano-queues"]) == QUEUE_CALLS


def test_the_base_grants_nothing_cluster_wide():
    """Without the Volcano component (install/base, and a project namespace): no ClusterRoleBinding, and every
    ClusterRole is bound by a RoleBinding in a project namespace only."""
    plain = [*BASE, *COMPONENT, *DEMO, *ISTIO]
    assert not [doc for _, doc in plain if doc["kind"] == "ClusterRoleBinding"]
    for _, doc in plain:
        if doc["kind"] == "RoleBinding" and doc["roleRef"]["kind"] == "ClusterRole":
            assert doc["metadata"]["namespace"] == "PROJECT-NAMESPACE", doc
    assert QUEUE_CALLS.keys().isdisjoint(grants(by_kind(BASE, "ClusterRole")["myapp-project-workloads"]))


def test_the_volcano_component_grants_the_queue_verbs_to_the_worker_and_nothing_else():
    """Opt-in: a ClusterRole of exactly QUEUE_CALLS bound cluster-wide to the worker's account (the one the
    worker Deployment runs as, in the base), and the PriorityClass the PodGroups name."""
    assert kustomization(INSTALL / "components" / "volcano")["kind"] == "Component"
    assert sorted((doc["kind"], doc["metadata"]["name"]) for _, doc in VOLCANO) == [
        ("ClusterRole", "myapp-volcano-queues"), ("ClusterRoleBinding", "myapp-volcano-queues"),
        ("PriorityClass", PRIORITY_CLASS)]
    assert all("namespace" not in doc["metadata"] for _, doc in VOLCANO)  # all cluster-scoped
    binding = by_kind(VOLCANO, "ClusterRoleBinding")["myapp-volcano-queues"]
    assert subject(binding) == ("ClusterRole", "myapp-volcano-queues", "ServiceAccount", "myapp", PLATFORM_NS)
    assert pod_spec(by_kind(BASE, "Deployment")["myapp-worker"])["serviceAccountName"] == "myapp"
    priority = by_kind(VOLCANO, "PriorityClass")[PRIORITY_CLASS]
    assert priority["globalDefault"] is False and priority["preemptionPolicy"] == "Never"
    assert 0 < priority["value"] < 1_000_000_000  # user range: below the system-* classes
    # The overlay is the base plus exactly these, unchanged.
    assert sorted(map(repr, (d for _, d in WITH_VOLCANO))) == sorted(map(repr, (d for _, d in [*BASE, *VOLCANO])))


def test_the_node_discovery_component_lets_the_worker_list_nodes_and_nothing_else():
    """Opt-in: a ClusterRole of exactly `list` on nodes (what capacity.py calls) bound cluster-wide to the
    worker's account; validate.py refuses any more on that name; the overlay is the base plus these."""
    from myapp.backends.kubernetes import capacity

    assert kustomization(INSTALL / "components" / "node-discovery")["kind"] == "Component"
    assert sorted((doc["kind"], doc["metadata"]["name"]) for _, doc in NODES) == [
        ("ClusterRole", "myapp-node-reader"), ("ClusterRoleBinding", "myapp-node-reader")]
    assert grants(by_kind(NODES, "ClusterRole")["myapp-node-reader"]) == {("", "nodes"): {"list"}}
    assert "list_node(" in Path(capacity.__file__).read_text()  # the one call it grants
    binding = by_kind(NODES, "ClusterRoleBinding")["myapp-node-reader"]
    assert subject(binding) == ("ClusterRole", "myapp-node-reader", "ServiceAccount", "myapp", PLATFORM_NS)
    rbac_problems = validate_module().rbac_problems
    role = by_kind(NODES, "ClusterRole")["myapp-node-reader"]
    assert rbac_problems(role) == [] and rbac_problems(binding) == []
    assert rbac_problems({**role, "rules": [{**role["rules"][0], "verbs": ["list", "patch"]}]})
    assert "a cluster-wide binding" in " ".join(rbac_problems({**binding, "subjects": [
        {"kind": "ServiceAccount", "name": "myapp-web", "namespace": PLATFORM_NS}]}))
    assert sorted(map(repr, (d for _, d in WITH_NODES))) == sorted(map(repr, (d for _, d in [*BASE, *NODES])))


def test_the_run_watch_component_lets_the_beat_list_and_watch_what_the_platform_submits_and_nothing_else():
    """Opt-in: a ClusterRole of exactly list+watch on the kinds watch.py follows, bound cluster-wide to an
    account of its own that only the beat runs as (with its token); the worker and web are unchanged."""
    from myapp.backends.kubernetes.watch import WATCHED

    assert kustomization(INSTALL / "components" / "run-watch")["kind"] == "Component"
    assert sorted((doc["kind"], doc["metadata"]["name"]) for _, doc in WATCH) == [
        ("ClusterRole", "myapp-run-watch"), ("ClusterRoleBinding", "myapp-run-watch"),
        ("ServiceAccount", "myapp-watch")]
    watched = {("", "pods") if w.typed and w.typed[0] == "CoreV1Api" else ("batch", "jobs") if w.typed
               else (w.custom[0], w.custom[2]) for w in WATCHED if w.typed or w.custom}
    assert grants(by_kind(WATCH, "ClusterRole")["myapp-run-watch"]) == {kind: {"list", "watch"} for kind in watched}
    binding = by_kind(WATCH, "ClusterRoleBinding")["myapp-run-watch"]
    assert subject(binding) == ("ClusterRole", "myapp-run-watch", "ServiceAccount", "myapp-watch", PLATFORM_NS)
    deployments = by_kind(WITH_WATCH, "Deployment")
    beat = pod_spec(deployments["myapp-beat"])
    assert (beat["serviceAccountName"], beat["automountServiceAccountToken"]) == ("myapp-watch", True)
    for name in ("myapp-worker", "myapp-web"):
        assert deployments[name] == by_kind(BASE, "Deployment")[name], name
    assert pod_spec(by_kind(BASE, "Deployment")["myapp-beat"])["serviceAccountName"] == "myapp-no-api"
    rbac_problems = validate_module().rbac_problems
    role = by_kind(WATCH, "ClusterRole")["myapp-run-watch"]
    assert rbac_problems(role) == [] and rbac_problems(binding) == []
    assert rbac_problems({**role, "rules": [*role["rules"], {"apiGroups": [""], "resources": ["pods/log"],
                                                            "verbs": ["get"]}]})
    assert "a cluster-wide binding" in " ".join(rbac_problems({**binding, "subjects": [
        {"kind": "ServiceAccount", "name": "myapp", "namespace": PLATFORM_NS}]}))


def test_the_table_names_every_kind_the_catalog_renders():
    """`create` on exactly the resources of the kinds templates render (KINDS gives their plural)."""
    rendered = set()
    for name, _scenario, args, ctx, resources in SCENARIOS_ALL:
        for obj in render(catalog()[name], args, ctx, resources):
            kind = KINDS[(obj["apiVersion"], obj["kind"])]
            rendered.add((kind.group, kind.plural))
    assert rendered == {resource for resource, verbs in WORKER_CALLS.items() if "create" in verbs} - PLATFORM_WRITTEN
    workloads = {(k.group, k.plural) for k in KINDS.values() if k.workload}
    assert workloads == WORKLOADS


# --- the table against the requests the backend really makes -------------------------------------

def rbac_of(request) -> tuple[bool, tuple[str, str], str]:
    """An HTTP request to the API server -> (namespaced?, (group, resource[/subresource]), RBAC verb)."""
    parts = request.path.strip("/").split("/")
    group, rest = ("", parts[2:]) if parts[0] == "api" else (parts[1], parts[3:])
    namespaced = len(rest) >= 3 and rest[0] == "namespaces"
    if namespaced:
        rest = rest[2:]
    resource, name, sub = rest[0], (rest[1] if len(rest) > 1 else None), (rest[2] if len(rest) > 2 else None)
    verbs = {"POST": "create", "PATCH": "patch", "PUT": "update"}
    if request.method == "GET":
        verb = "get" if name else ("watch" if request.query.get("watch") in ("true", "1") else "list")
    elif request.method == "DELETE":
        verb = "delete" if name else "deletecollection"
    else:
        verb = verbs[request.method]
    return namespaced, (group, f"{resource}/{sub}" if sub else resource), verb


def observed(requests) -> tuple[Grants, Grants]:
    """What the requests needed: (in a namespace, cluster-wide)."""
    namespaced: Grants = defaultdict(set)
    cluster: Grants = defaultdict(set)
    for request in requests:
        in_namespace, resource, verb = rbac_of(request)
        (namespaced if in_namespace else cluster)[resource].add(verb)
    return dict(namespaced), dict(cluster)


def with_queue(ctx, quota_gpus: int):
    """The gang context with the group's Volcano Queue rendered (its spec from one project's quota)."""
    spec = queue_spec(GPU_GROUP.queue, GPU_GROUP.name, Amount(gpus=16), (QuotaShare(Amount(gpus=quota_gpus)),))
    return replace(ctx, resource_group=replace(ctx.resource_group, volcano_queue=spec))


def add_pods(server, ref, objects) -> None:
    """Pods as the controllers would make them (two at most), each with a log line and a metrics sample."""
    labels = ({"notebook-name": ref.primary.name} if ref.primary.kind == "Notebook"
              else {"myapp.io/job-name": ref.job_name})
    templates = [pod.template for obj in objects for pod in pod_templates(obj)][:2]
    for index, template in enumerate(templates):
        name = f"{ref.job_name}-{index}"
        names = [c["name"] for c in template["spec"]["containers"]]
        server.add_pod(ref.namespace, name, labels, containers=names)
        server.append_log(ref.namespace, name, "hello")
        server.set_pod_metrics(ref.namespace, name, {c: {"cpu": "1", "memory": "1Mi"} for c in names})


def lifecycle(server, kube, objects, tmp_path) -> None:
    ref = kube.submit(objects)
    assert kube.submit(objects) == ref  # adopted: 409, then read
    add_pods(server, ref, objects)
    kube.status(ref)
    assert list(kube.logs(ref))
    assert kube.metrics(ref)
    kube.cancel(ref)
    kube.cleanup(ref, FileLogArchive(tmp_path))


def test_the_backend_calls_exactly_the_table(double, k8s_backend, tmp_path):
    """Every catalog template (and one gang-scheduled, for its PodGroup and its group's Queue): submit,
    adopt, status, logs, metrics, cancel, cleanup. Then the paths the catalog walk does not reach.
    In a namespace: exactly the base's WORKER_CALLS; cluster-wide: exactly the Volcano component's."""
    gang = None
    for name, scenario, args, ctx, resources in SCENARIOS_ALL:
        if scenario != "default" and name != "pytorch-ddp":
            continue  # the gang scenario renders the same kinds plus a PodGroup: one is enough
        if scenario != "default":
            gang = (name, args, ctx, resources)
            ctx = with_queue(ctx, 8)
        lifecycle(double, k8s_backend, render(catalog()[name], args, ctx, resources), tmp_path)
    # The next gang of the group, after its quota changed: the Queue is read (409) and replaced (PUT).
    assert gang is not None
    name, args, ctx, resources = gang
    k8s_backend.submit(render(catalog()[name], args, replace(with_queue(ctx, 12), run_id=998), resources))
    assert double.get("scheduling.volcano.sh/v1beta1", "Queue", "", GPU_GROUP.queue)["spec"]["weight"] == 12
    # Another run of a service version finds its Services, HPA and VirtualService in place with
    # other labels (and weights): converged with a merge patch.
    for run in (1, 2):
        args = {**REQUIRED_ARGS["deploy-service"], "previous_version": "v1", "canary_weight": 10 * run}
        k8s_backend.submit(render(catalog()["deploy-service"], args, replace(PLAIN_CTX, run_id=100 + run)))
    # A serving service's traffic (no workload): created, patched to a new split, cancelled, cleaned up.
    spec = ServiceSpec(id=1, name="split", project=PLAIN_CTX.project, namespace=NS,
                       service_account=PLAIN_CTX.service_account)
    for weights in ({1: 100}, {1: 70, 2: 30}):
        ref = k8s_backend.submit(serving_traffic(spec, weights, {1: "v1", 2: "v2"}, 2, 10))
    k8s_backend.cancel(ref)
    k8s_backend.cleanup(ref, FileLogArchive(tmp_path))
    # Where KServe is installed, a service is one InferenceService: created, patched to a canary, read, deleted.
    for number, percent in ((1, 100), (2, 30)):
        ref = k8s_backend.submit(serving_kserve(spec, VersionSpec(id=number, version=number, framework="sklearn",
                                                                  uri="s3://models/model.joblib"), percent))
    k8s_backend.status(ref)
    k8s_backend.cancel(ref)
    k8s_backend.cleanup(ref, FileLogArchive(tmp_path))
    # Log following reads the pod to see whether a container has ended.
    ref = k8s_backend.submit(render(catalog()["python"], {}, replace(PLAIN_CTX, run_id=999)))
    double.add_pod(NS, f"{ref.job_name}-0", {"myapp.io/job-name": ref.job_name}, phase="Succeeded")
    double.append_log(NS, f"{ref.job_name}-0", "done")
    thread, out = in_thread(lambda: list(k8s_backend.logs(ref, follow=True)))
    wait_until(lambda: double.requests_matching("GET", rf"/pods/{ref.job_name}-0$"), timeout=10,
               what="the log follower to read the pod")
    double.set_status("batch/v1", "Job", NS, ref.primary.name, {"conditions": [{"type": "Complete", "status": "True"}]})
    thread.join(15)
    assert out and [line.line for line in out[0]] == ["done"]
    # A run's token Secret: put (create), put again (409, then replace), deleted when the run ends.
    for _ in range(2):
        k8s_backend.put_secret(NS, "myapp-run-999-token", {"token": "t"})
    k8s_backend.delete_secret(NS, "myapp-run-999-token")
    # An ended attempt's outputs read off the project's claim: the reader pod created, read, its log, deleted.
    assert k8s_backend.fetch_outputs(NS, 999, "999/python/1", tmp_path / "outputs").files == []
    assert observed(double.requests) == (WORKER_CALLS, QUEUE_CALLS)


def test_the_web_reads_logs_and_metrics_only(double, k8s_backend):
    """observation.py (the web's only way to a backend) calls logs(follow=False), metrics(), recent_logs() and, on a
    backend that reads its own files (local), log_source(); run those on Kubernetes, and the requests are
    exactly WEB_CALLS."""
    tree = ast.parse((ROOT / "myapp" / "pipelines" / "observation.py").read_text())

    def on_backend(receiver: ast.expr) -> bool:  # _backend(...).x, backend.x, self.backend.x
        return (isinstance(receiver, ast.Call) and getattr(receiver.func, "id", "") == "_backend") \
            or (isinstance(receiver, ast.Name) and receiver.id == "backend") \
            or (isinstance(receiver, ast.Attribute) and receiver.attr == "backend")

    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
             and on_backend(node.func.value)]
    assert {c.func.attr for c in calls} == {"logs", "metrics", "log_source", "recent_logs"}  # the last: serving
    logs = [c for c in calls if c.func.attr == "logs"]
    follow = [kw.value.value for c in logs for kw in c.keywords if kw.arg == "follow"]
    assert logs and follow == [False] * len(logs)
    objects = manifests("pytorch-ddp")
    ref = k8s_backend.submit(objects)
    add_pods(double, ref, objects)
    before = len(double.requests)
    assert list(k8s_backend.logs(ref, follow=False))
    k8s_backend.metrics(ref)
    assert observed(double.requests[before:]) == (WEB_CALLS, {})


# --- the namespace-management option and the platform's own pods -----------------------------------

def subject(binding) -> tuple[str, str, str, str, str]:
    (who,) = binding["subjects"]
    return (binding["roleRef"]["kind"], binding["roleRef"]["name"], who["kind"], who["name"], who["namespace"])


def test_namespace_management_grants_only_what_it_says():
    """Per project namespace: the worker's and the web's ClusterRole bound there (nowhere else), and a
    job account with no token and an empty Role. Nothing cluster-scoped but the Namespace itself."""
    kinds = sorted(doc["kind"] for _, doc in COMPONENT)
    assert kinds == ["Namespace", "ResourceQuota", "Role", "RoleBinding", "RoleBinding", "RoleBinding",
                     "ServiceAccount"]
    namespaced = [doc for _, doc in COMPONENT if doc["kind"] != "Namespace"]
    assert {doc["metadata"]["namespace"] for doc in namespaced} == {"PROJECT-NAMESPACE"}
    bindings = {name: subject(doc) for name, doc in by_kind(COMPONENT, "RoleBinding").items()}
    assert bindings == {
        "myapp-platform": ("ClusterRole", "myapp-project-workloads", "ServiceAccount", "myapp", PLATFORM_NS),
        "myapp-web": ("ClusterRole", "myapp-project-observer", "ServiceAccount", "myapp-web", PLATFORM_NS),
        "myapp-job": ("Role", "myapp-job", "ServiceAccount", "myapp-PROJECT", "PROJECT-NAMESPACE"),
    }
    assert by_kind(COMPONENT, "Role")["myapp-job"]["rules"] == []
    assert by_kind(COMPONENT, "ServiceAccount")["myapp-PROJECT"]["automountServiceAccountToken"] is False
    platform_accounts = by_kind(BASE, "ServiceAccount")
    for kind, role, _, account, _ns in bindings.values():
        if kind == "ClusterRole":  # what it binds is defined in the base, for these accounts
            assert role in by_kind(BASE, "ClusterRole") and account in platform_accounts
    assert kustomization(INSTALL / "base")["namespace"] == PLATFORM_NS


def pss(namespace) -> dict[str, str]:
    prefix = "pod-security.kubernetes.io/"
    return {k[len(prefix):]: v for k, v in namespace["metadata"]["labels"].items() if k.startswith(prefix)}


def test_namespaces_carry_pod_security_labels():
    restricted = {"enforce": "restricted", "warn": "restricted", "audit": "restricted"}
    assert pss(by_kind(BASE, "Namespace")[PLATFORM_NS]) == restricted
    assert pss(by_kind(COMPONENT, "Namespace")["PROJECT-NAMESPACE"]) == restricted
    # The baseline option relaxes enforce only (image builds, MPI, root images); warnings stay.
    assert pss(by_kind(DEMO, "Namespace")["PROJECT-NAMESPACE"]) == {**restricted, "enforce": "baseline"}
    (patch,) = kustomization(INSTALL / "components" / "pod-security-baseline")["patches"]
    assert yaml.safe_load(patch["patch"]) == [{"op": "replace", "value": "baseline",
                                               "path": "/metadata/labels/pod-security.kubernetes.io~1enforce"}]


def pod_spec(deployment_or_job) -> dict[str, Any]:
    return deployment_or_job["spec"]["template"]["spec"]


@pytest.mark.parametrize("kind,name,account,token", [
    ("Deployment", "myapp-web", "myapp-web", True),
    ("Deployment", "myapp-worker", "myapp", True),
    ("Deployment", "myapp-beat", "myapp-no-api", False),
    ("Job", "myapp-init", "myapp-no-api", False),
])
def test_platform_pods_run_restricted_under_their_own_account(kind, name, account, token):
    spec = pod_spec(by_kind(BASE, kind)[name])
    assert (spec["serviceAccountName"], spec["automountServiceAccountToken"]) == (account, token)
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    for container in spec["containers"]:
        context = container["securityContext"]
        assert context["allowPrivilegeEscalation"] is False and context["capabilities"] == {"drop": ["ALL"]}
        env = {var["name"]: var for var in container.get("env") or []}
        if token:  # the API and the renderer refuse the platform's own namespace as a project's
            assert env["MYAPP_NAMESPACE"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.namespace"}}
    bound = {subject(doc)[3] for _, doc in EVERYTHING if doc["kind"] == "RoleBinding"}
    assert (account in bound) is token


# ---- docker compose -----------------------------------------------------------------------------------
def test_compose_starts_the_notebook_proxy_where_local_notebooks_listen(app, monkeypatch):
    """The proxy shares the worker's network (local JupyterLab listens on its loopback), asks the web's
    member check with the key both derive from SECRET_KEY, and browsers reach it where the API's links say."""
    import myapp.notebooks.proxy as proxy_module
    from myapp.api.notebooks import proxy_key

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    proxy = services["notebook-proxy"]
    assert proxy["image"] == services["worker"]["image"] == services["web"]["image"]
    assert proxy["command"][:3] == ["python", "-m", "myapp.notebooks.proxy"]
    assert proxy["network_mode"] == "service:worker" and services["worker"]["command"] == ["myapp", "worker"]

    started: dict[str, Any] = {}

    class Recorded(proxy_module.NotebookProxy):
        def __init__(self, web_url: str, key: str, **kwargs: Any) -> None:
            super().__init__(web_url, key, **kwargs)
            started.update(web=web_url, key=key)

    monkeypatch.setattr(proxy_module, "NotebookProxy", Recorded)
    monkeypatch.setattr(proxy_module.web, "run_app", lambda _app, host, port, print: started.update(bind=(host, port)))
    monkeypatch.delenv("MYAPP_NOTEBOOK_PROXY_KEY", raising=False)
    monkeypatch.setenv("SECRET_KEY", app.config["SECRET_KEY"])
    proxy_module.main(proxy["command"][3:])
    # The web service by its compose name and port; the same key the web's authz check expects.
    web_port = services["web"]["command"][services["web"]["command"].index("--bind") + 1].rsplit(":", 1)[1]
    assert started["web"] == f"http://web:{web_port}"
    with app.test_request_context():
        assert app.config.get("MYAPP_NOTEBOOK_PROXY_KEY") is None and started["key"] == proxy_key()
    host, port = started["bind"]
    assert host == "0.0.0.0"
    published = [m for p in services["worker"]["ports"] if (m := re.fullmatch(
        r"\$\{MYAPP_BIND:-127\.0\.0\.1\}:\$\{MYAPP_NOTEBOOK_PORT:-(\d+)\}:" + str(port), p))]
    assert published, services["worker"]["ports"]
    # MYAPP_NOTEBOOK_URL (the API's notebook links) names the published port by default.
    assert proxy["environment"]["MYAPP_NOTEBOOK_URL"] == f"${{MYAPP_NOTEBOOK_URL:-http://127.0.0.1:{published[0][1]}}}"
    assert "MYAPP_NOTEBOOK_URL" in services["web"]["environment"]


def test_the_image_installs_what_local_notebooks_and_model_servers_need():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert 'pip install -e ".[notebook,serving]"' in dockerfile
    setup = (ROOT / "setup.py").read_text()
    assert '"notebook": ["jupyterlab' in setup and '"serving": [' in setup
