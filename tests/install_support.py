"""What tests/test_install.py compares: the Kubernetes calls the backend makes, by process (WORKER_CALLS,
WEB_CALLS, QUEUE_CALLS on the opt-in Volcano Queues) with what no platform account may ever hold
(SENSITIVE); and the install manifests as kustomize would build them, read with PyYAML by following each
kustomization's `resources` and `components` (the base, the opt-in components, the demo project, Istio).
"""

from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
INSTALL = ROOT / "install"
PLATFORM_NS = "myapp-system"
Grants = dict[tuple[str, str], set[str]]

# --- what the backend calls, read from the code -------------------------------------------------
# resources.KubeApi: create/get/patch/delete of one object, list/get/deletecollection of pods,
# read_namespaced_pod_log, and metrics.k8s.io list. Who calls what (backend.py; _create_or_adopt and
# _apply_shared in apply.py):
#   create  submit (_create_or_adopt), every object a template renders
#   get     _create_or_adopt adopts on 409; status/_get_optional and workload_finished read the
#           workload; status reads PodGroups while the workload is pending
#   patch   _create_or_adopt converges CONVERGE_KINDS (Service, VirtualService, HPA, InferenceService); cancel
#           annotates the primary, i.e. a workload. PodGroups are never patched.
#   delete  cancel (workload, PodGroup; every object of a routing-only submission), cleanup (every
#           submitted object)
#   pods    list_pods (status, logs, metrics), read_pod (log following: _container_done),
#           delete_pods = deletecollection (cancel, cleanup); pods/log: read_log, stream_log
#   metrics.k8s.io pods: pod_metrics (metrics() without Prometheus)
#   secrets put_secret = create, or update (replace) on 409; delete_secret: a run's token Secret, never read
#   pods    fetch_outputs (kubernetes/outputs.py): create the outputs reader, get it, read its log, deletecollection
# Never called: watch, events, configmaps (KINDS has ConfigMap, no template renders one), get/list of secrets.
WORKLOADS = {("batch", "jobs"), ("apps", "deployments"), ("batch.volcano.sh", "jobs"),
             ("serving.kserve.io", "inferenceservices"),
             *(("kubeflow.org", plural) for plural in ("tfjobs", "pytorchjobs", "xgboostjobs", "mpijobs", "notebooks"))}
WORKER_CALLS: Grants = {
    **{resource: {"create", "get", "patch", "delete"} for resource in WORKLOADS},
    ("scheduling.volcano.sh", "podgroups"): {"create", "get", "delete"},
    ("", "services"): {"create", "get", "patch", "delete"},
    ("autoscaling", "horizontalpodautoscalers"): {"create", "get", "patch", "delete"},
    ("networking.istio.io", "virtualservices"): {"create", "get", "patch", "delete"},
    ("security.istio.io", "authorizationpolicies"): {"create", "get", "delete"},
    ("", "persistentvolumeclaims"): {"create", "get", "delete"},
    ("", "pods"): {"create", "get", "list", "deletecollection"},
    ("", "pods/log"): {"get"},
    ("metrics.k8s.io", "pods"): {"list"},
    ("", "secrets"): {"create", "update", "delete"},
}
# Cluster-scoped, so granted only by the opt-in components/volcano (a ClusterRoleBinding): a gang-scheduled
# group's Queue (_apply_shared): create; on 409 get; update (PUT) when its spec changed. Never listed,
# watched, patched or deleted (the group's jobs share it).
QUEUE_CALLS: Grants = {("scheduling.volcano.sh", "queues"): {"create", "get", "update"}}
# Written by the platform itself, not rendered from a catalog template: the run's token Secret, and the KServe
# InferenceService the serving controller renders where KServe is installed (myapp/serving/manifests.kserve).
# And the reader pod of an ended attempt's outputs on the project's claim (rendering/kinds/outputs_reader.py).
PLATFORM_WRITTEN = {("", "secrets"), ("serving.kserve.io", "inferenceservices"), ("", "pods")}
# The web process reads through myapp/pipelines/observation.py only: backend.logs(follow=False), backend.metrics().
WEB_CALLS: Grants = {("", "pods"): {"list"}, ("", "pods/log"): {"get"}, ("metrics.k8s.io", "pods"): {"list"}}
# Rights that hand out rights, run code in others' pods or reach past a namespace: never to the platform.
SENSITIVE = {"namespaces", "serviceaccounts", "serviceaccounts/token", "roles", "rolebindings", "clusterroles",
             "clusterrolebindings", "pods/exec", "pods/attach", "nodes"}


# --- reading the kustomizations ------------------------------------------------------------------

def kustomization(folder: Path) -> dict[str, Any]:
    return yaml.safe_load((folder / "kustomization.yaml").read_text())


def documents(folder: Path) -> list[tuple[Path, dict[str, Any]]]:
    """(file, document) of everything a kustomization includes, components and patches applied as
    far as these manifests use them (JSON6902 replace/add on a kind)."""
    spec = kustomization(folder)
    docs: list[tuple[Path, dict[str, Any]]] = []
    for entry in spec.get("resources") or []:
        path = (folder / entry).resolve()
        if path.is_dir():
            docs += documents(path)
        else:
            docs += [(path, doc) for doc in yaml.safe_load_all(path.read_text()) if doc]
    for entry in spec.get("components") or []:
        docs += documents((folder / entry).resolve())
        for patch in kustomization((folder / entry).resolve()).get("patches") or []:
            for _, doc in docs:
                target, name = patch["target"], doc["metadata"]["name"]
                if doc["kind"] == target["kind"] and target.get("name", name) == name:
                    json_patch(doc, yaml.safe_load(patch["patch"]))
    return docs


def json_patch(doc: dict[str, Any], ops: list[dict[str, Any]]) -> None:
    for op in ops:
        assert op["op"] in ("add", "replace"), op
        *parents, last = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        target = doc
        for key in parents:
            target = target[key]
        assert op["op"] == "add" or last in target, f"replace of a missing {op['path']}"
        target[last] = op["value"]


def by_kind(docs, kind: str) -> dict[str, dict[str, Any]]:
    return {doc["metadata"]["name"]: doc for _, doc in docs if doc["kind"] == kind}


def grants(role: dict[str, Any]) -> Grants:
    out: Grants = defaultdict(set)
    for rule in role.get("rules") or []:
        assert not rule.get("resourceNames") and not rule.get("nonResourceURLs"), rule
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                out[(group, resource)] |= set(rule["verbs"])
    return dict(out)


BASE = documents(INSTALL / "base")
COMPONENT = documents(INSTALL / "components" / "namespace-management")
DEMO = documents(INSTALL / "projects" / "demo")
ISTIO = documents(INSTALL / "istio")
VOLCANO = documents(INSTALL / "components" / "volcano")
WITH_VOLCANO = documents(INSTALL / "with-volcano")
NODES = documents(INSTALL / "components" / "node-discovery")  # opt-in: a group's capacity discovered
WITH_NODES = documents(INSTALL / "with-node-discovery")
WATCH = documents(INSTALL / "components" / "run-watch")  # opt-in: the beat's watches (no patch applied here)
WITH_WATCH = documents(INSTALL / "with-run-watch")
EVERYTHING = [*BASE, *COMPONENT, *DEMO, *ISTIO, *VOLCANO, *NODES, *WATCH]
