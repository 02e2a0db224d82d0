"""``service``: one model-server version behind a stable name, with a weighted canary split.

Pipelines may not use it (``pipeline_refusal``): a server started by a task is one the serving
controller does not own and nobody stops; a pipeline serves through ``serve-model``, which asks the API
for an inference service. The kind stays for rendering the model-server image on its own (tests, tools).

Objects: Deployment + Service for the new version ``<service>-<version>``, a front Service
``<service>`` selecting every version (so the host resolves in DNS), an HPA, and a
VirtualService on the front host that sends ``canary_weight`` % to the new version and the
rest to ``previous_version`` (routing to per-version Services needs no DestinationRule).
"""
from __future__ import annotations

from typing import Any

from ..engine import render_object
from ..errors import ArgumentError
from ..names import k8s_name
from .base import Build, Kind


def pipeline_refusal(kind: str) -> str | None:
    """Why a pipeline task may not use a template of this kind (None: it may)."""
    if kind == "service":
        return ("a template of kind service starts a model server no inference service manages; "
                "use serve-model, which deploys or updates an inference service")
    return None


def fqdn(service: str, namespace: str) -> str:
    return f"{service}.{namespace}.svc.cluster.local"


def _routes(b: Build, front: str, current: str) -> list[dict[str, Any]]:
    namespace, previous = b.ctx.namespace, b.args.get("previous_version", "")
    if not previous:
        return [{"destination": {"host": fqdn(current, namespace), "port": {"number": 80}}, "weight": 100}]
    if previous == b.args["version"]:
        raise ArgumentError("previous_version", "must differ from version")
    weight = b.args["canary_weight"]
    return [
        {"destination": {"host": fqdn(k8s_name(front, previous), namespace), "port": {"number": 80}},
         "weight": 100 - weight},
        {"destination": {"host": fqdn(current, namespace), "port": {"number": 80}}, "weight": weight},
    ]


def replica_bounds(b: Build) -> tuple[int, int]:
    low, high = b.args["min_replicas"], b.args["max_replicas"]
    if low > high:
        raise ArgumentError("min_replicas", f"{low} is greater than max_replicas {high}")
    return low, high


def version_server(b: Build, replicas: int, env: list[dict[str, Any]] | None = None) -> tuple[str, list[dict]]:
    """One version's Deployment and its own Service (selected by app=<service>, version=<version>)."""
    front, version = b.args["service_name"], b.args["version"]
    name = k8s_name(front, version)
    selector = {"app": front, "version": version}
    return name, [
        render_object("deployment.yaml.j2", {
            "name": name, "replicas": replicas, "selector": selector, "image": b.image,
            "command": b.command, "args": b.cli_args, "port": b.args["port"],
            "resources": b.resources.requirements(), "env": env or [],
        }),
        render_object("service.yaml.j2", {
            "name": name, "selector": selector, "port_name": "http", "target_port": b.args["port"],
        }),
    ]


def build(b: Build) -> list[dict]:
    front = b.args["service_name"]
    low, high = replica_bounds(b)
    current, server = version_server(b, low)
    return [
        *server,
        render_object("service.yaml.j2", {
            "name": front, "selector": {"app": front}, "port_name": "http", "target_port": b.args["port"],
        }),
        render_object("hpa.yaml.j2", {
            "name": current, "target": current, "min_replicas": low, "max_replicas": high,
            "target_cpu_utilization": b.args["target_cpu_utilization"],
        }),
        render_object("virtualservice.yaml.j2", {
            "name": front, "hosts": [fqdn(front, b.ctx.namespace)], "gateways": [],
            "http": [{"name": "traffic-split", "route": _routes(b, front, current)}],
        }),
    ]


KIND = Kind("service", build, batch=False, gang=None, required_args={
    "service_name": "string", "version": "string", "previous_version": "string",
    "canary_weight": "integer", "port": "integer", "min_replicas": "integer",
    "max_replicas": "integer", "target_cpu_utilization": "integer",
}, optional_args={"image": "string"})
