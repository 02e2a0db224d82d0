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
BUILDS = [HERE / "base", HERE / "projects" / "demo", HERE / "istio", HERE / "with-volcano"]
# The one cluster-wide grant, opt-in (components/volcano): the worker's account may create, read and
# update Volcano Queues (cluster-scoped), nothing else cluster-wide; see install/README.md.
VOLCANO_GRANT = "myapp-volcano-queues"
VOLCANO_RULES = [{"apiGroups": ["scheduling.volcano.sh"], "resources": ["queues"],
                  "verbs": ["create", "get", "update"]}]
VOLCANO_SUBJECTS = [{"kind": "ServiceAccount", "name": "myapp", "namespace": "myapp-system"}]


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
    Volcano Queue one, exactly as components/volcano has it."""
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
            name == VOLCANO_GRANT and doc.get("subjects") == VOLCANO_SUBJECTS
            and doc.get("roleRef") == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                       "name": VOLCANO_GRANT}):
        problems.append("a cluster-wide binding (bind ClusterRoles per namespace with a RoleBinding; the one "
                        f"exception is {VOLCANO_GRANT}, the worker's Volcano Queues)")
    if doc.get("kind") == "ClusterRole" and name == VOLCANO_GRANT and doc.get("rules") != VOLCANO_RULES:
        problems.append(f"{VOLCANO_GRANT} is bound cluster-wide: it may grant {VOLCANO_RULES} and nothing else")
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
