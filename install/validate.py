#!/usr/bin/env python
"""Validate the manifests under install/ against the Kubernetes OpenAPI schemas, and RBAC for least privilege.

Builds each kustomization with `kubectl kustomize` (or `kustomize build`) and checks every
document with kubernetes_validate in strict mode (unknown fields are errors). Without either
tool it validates the raw YAML files instead (placeholders and all).

    .venv/bin/python install/validate.py [--k8s-version 1.30]
"""
from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import kubernetes_validate
import yaml

HERE = Path(__file__).resolve().parent
BUILDS = [HERE / "base", HERE / "projects" / "demo", HERE / "istio", HERE / "with-volcano",
          HERE / "with-node-discovery", HERE / "with-run-watch"]
# The one cluster-wide grant, opt-in (components/volcano): the worker's account may create, read and
# update Volcano Queues (cluster-scoped), nothing else cluster-wide; see install/README.md.
VOLCANO_GRANT = "myapp-volcano-queues"
VOLCANO_RULES = [{"apiGroups": ["scheduling.volcano.sh"], "resources": ["queues"],
                  "verbs": ["create", "get", "update"]}]
VOLCANO_SUBJECTS = [{"kind": "ServiceAccount", "name": "myapp", "namespace": "myapp-system"}]
# The second, also opt-in (components/node-discovery): the worker's account may list Nodes, to discover
# a resource group's capacity (myapp/backends/kubernetes/capacity.py).
NODES_GRANT = "myapp-node-reader"
NODES_RULES = [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["list"]}]
# The third, also opt-in (components/run-watch): the beat's own account may list and watch what the
# platform submits across namespaces (myapp/backends/kubernetes/watch.py), read-only.
WATCH_GRANT = "myapp-run-watch"
WATCH_RULES = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "watch"]},
               {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["list", "watch"]},
               {"apiGroups": ["kubeflow.org"], "resources": ["tfjobs", "pytorchjobs", "xgboostjobs", "mpijobs"],
                "verbs": ["list", "watch"]},
               {"apiGroups": ["batch.volcano.sh"], "resources": ["jobs"], "verbs": ["list", "watch"]}]
WATCH_SUBJECTS = [{"kind": "ServiceAccount", "name": "myapp-watch", "namespace": "myapp-system"}]
CLUSTER_GRANTS = {VOLCANO_GRANT: VOLCANO_RULES, NODES_GRANT: NODES_RULES, WATCH_GRANT: WATCH_RULES}  # exactly these
GRANT_SUBJECTS = {VOLCANO_GRANT: VOLCANO_SUBJECTS, NODES_GRANT: VOLCANO_SUBJECTS, WATCH_GRANT: WATCH_SUBJECTS}


def build(path: Path) -> str:
    if shutil.which("kubectl"):
        cmd = ["kubectl", "kustomize", str(path)]
    elif shutil.which("kustomize"):
        cmd = ["kustomize", "build", str(path)]
    else:
        return ""
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def documents() -> list[tuple[str, dict]]:
    docs: list[tuple[str, dict]] = []
    built = {path: build(path) for path in BUILDS}
    if all(built.values()):
        for path, text in built.items():
            docs += [(str(path.relative_to(HERE)), d) for d in yaml.safe_load_all(text) if d]
    else:
        print("no kubectl/kustomize: validating the raw files", file=sys.stderr)
        for file in sorted(HERE.rglob("*.yaml")):
            if file.name != "kustomization.yaml":
                docs += [(str(file.relative_to(HERE)), d) for d in yaml.safe_load_all(file.read_text()) if d]
    return docs


def rbac_problems(doc: dict) -> list[str]:
    """Least privilege: no wildcard in any rule, no escalate/impersonate, bind only by name, no
    binding to cluster-admin and no cluster-wide binding (roles are bound per namespace) but the
    Volcano Queue one, the Node reading one and the beat's watches, exactly as components/volcano,
    components/node-discovery and components/run-watch have them."""
    problems = []
    for rule in doc.get("rules") or []:
        for key in ("apiGroups", "resources", "verbs", "resourceNames", "nonResourceURLs"):
            if any("*" in value for value in rule.get(key) or []):
                problems.append(f"wildcard in {key}: {rule[key]}")
        verbs = set(rule.get("verbs") or [])
        if verbs & {"escalate", "impersonate"}:
            problems.append(f"grants {sorted(verbs & {'escalate', 'impersonate'})}")
        if "bind" in verbs and not rule.get("resourceNames"):
            problems.append("bind without resourceNames")
    if doc.get("roleRef", {}).get("name") == "cluster-admin":
        problems.append("binds cluster-admin")
    name = (doc.get("metadata") or {}).get("name")
    if doc.get("kind") == "ClusterRoleBinding" and not (
            name in CLUSTER_GRANTS and doc.get("subjects") == GRANT_SUBJECTS[name]
            and doc.get("roleRef") == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                       "name": name}):
        problems.append("a cluster-wide binding (bind ClusterRoles per namespace with a RoleBinding; the "
                        f"exceptions are {VOLCANO_GRANT}, the worker's Volcano Queues, {NODES_GRANT}, "
                        f"its reading of Nodes, and {WATCH_GRANT}, the beat's watches)")
    if doc.get("kind") == "ClusterRole" and name in CLUSTER_GRANTS and doc.get("rules") != CLUSTER_GRANTS[name]:
        problems.append(f"{name} is bound cluster-wide: it may grant {CLUSTER_GRANTS[name]} and nothing else")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k8s-version", default="1.30")
    args = parser.parse_args()
    failed = 0
    for source, doc in documents():
        name = f"{source}: {doc.get('kind')}/{doc.get('metadata', {}).get('name')}"
        try:
            kubernetes_validate.validate(doc, args.k8s_version, strict=True)
            problems = rbac_problems(doc)
        except (kubernetes_validate.ValidationError, kubernetes_validate.SchemaNotFoundError) as exc:
            problems = [getattr(exc, "message", str(exc))]
        failed += bool(problems)
        print(f"FAIL {name}: {'; '.join(problems)}" if problems else f"ok   {name}")
    print(f"{failed} failed" if failed else f"all valid against Kubernetes {args.k8s_version} (strict)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
