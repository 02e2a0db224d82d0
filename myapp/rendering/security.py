"""Who rendered pods run as and what they may do: the restricted securityContext and its exceptions.

pod.py applies these to every pod template, policy.py refuses a manifest that drifted from them;
both read this one table. See docs/rendering.md, "Pod security".
"""
from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

# Pod Security Standard "restricted", the parts a pod spec carries: the pod may not run as
# root, and syscalls go through the runtime's default seccomp filter.
RESTRICTED_POD: dict[str, Any] = {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
# ...and per container: no setuid gains, no Linux capabilities at all.
RESTRICTED_CONTAINER: dict[str, Any] = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}

# Catalog templates whose image runs as root, decided per template (docs/rendering.md): their
# Dockerfiles have no numeric USER and the code writes its model under /mnt/output, which only
# root may create. They keep every other restriction (RuntimeDefault seccomp, no capabilities, no
# privilege escalation), which Pod Security "baseline" admits. tests/rendering/test_catalog.py
# checks this table against the Dockerfiles, so fixing an image means removing its line here.
ROOT_TEMPLATES: Mapping[str, str] = {
    "pytorch-ddp": "python:3.11-slim without USER; saves the model under /mnt/output",
    "tf-distributed": "tensorflow/tensorflow without USER; saves the model under /mnt/output",
    "xgboost": "python:3.11-slim without USER; saves the model under /mnt/output",
    "volcano-job": "python:3.11-slim without USER; writes results under /mnt/output",
    "horovod-mpi": "horovod/horovod runs mpirun as root (--allow-run-as-root); saves under /mnt/output",
}

# The one container allowed root and capabilities: Kaniko's executor unpacks base images (files of
# any owner) and runs the Dockerfile's RUN steps as their USER, which needs these (the set
# Shipwright's Kaniko strategy grants; every one is within Pod Security "baseline"). Pinned image:
# the exception belongs to this executor build, not to whatever a template names "kaniko".
KANIKO_IMAGE = "gcr.io/kaniko-project/executor:v1.23.2"
KANIKO_CAPABILITIES = ("CHOWN", "DAC_OVERRIDE", "FOWNER", "SETGID", "SETUID", "SETFCAP", "KILL")

# Volumes the pods of these templates write to are made group-writable for this group by the kubelet
# (fsGroup, allowed by "restricted"): a fresh PersistentVolumeClaim is owned by root, and the Jupyter
# images run as jovyan (UID 1000) in group users (GID 100).
FS_GROUPS: Mapping[str, int] = {"notebook": 100}


def pod_security(template_name: str) -> dict[str, Any]:
    """The pod-level securityContext for a template's pods."""
    context = copy.deepcopy(RESTRICTED_POD)
    if template_name in ROOT_TEMPLATES:
        del context["runAsNonRoot"]  # the image's own (root) user
    if template_name in FS_GROUPS:
        context["fsGroup"] = FS_GROUPS[template_name]
    return context


def container_security(given: Mapping[str, Any] | None) -> dict[str, Any]:
    """A container's securityContext: the restricted one, plus what its Jinja template adds
    (the Kaniko executor's root and capabilities; policy.check decides whether that is allowed)."""
    return {**copy.deepcopy(RESTRICTED_CONTAINER), **dict(given or {})}


def operator_service_account(obj: Mapping[str, Any], pod_path: str) -> str | None:
    """The account an operator creates for a pod that must call the API itself, else None.

    Only the MPIJob Launcher: mpirun starts the ranks with ``kubectl exec`` into the workers. The
    training operator creates ``<job>-launcher`` with a Role that allows exec into this job's own
    worker pods and nothing else, which is far less than giving the project's account exec rights
    over every pod of the namespace. It is the one rendered pod that mounts an API token.
    """
    if (obj.get("apiVersion"), obj.get("kind")) == ("kubeflow.org/v1", "MPIJob") and \
            pod_path == "spec.mpiReplicaSpecs.Launcher.template":
        return f"{(obj.get('metadata') or {}).get('name')}-launcher"
    return None
