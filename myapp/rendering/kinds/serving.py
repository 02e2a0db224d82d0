"""The kinds of a serving object (myapp/serving): one model-server version, the local router, the
Istio split. Unlike ``service`` (one version with its own VirtualService, for a pipeline task), each
version here is rendered on its own and the traffic once per service, so versions come and go
without touching each other.

``model-server``: Deployment + Service ``<service>-<version>`` and an autoscaling/v2 HPA on cpu, gpu
utilisation (DCGM's pod metric) or requests per second (a pods metric of the metrics adapter).
``serving-router``: the local router's Deployment (``router.py``).
The model servers and the router read the service's token (``token_secret``, a Secret's name) by
secretKeyRef: the router demands it of every caller and adds it to its calls to the model servers, which
demand it too (on Kubernetes the platform's forwarder sends it to them through the front Service).
``serving-traffic``: the front Service ``<service>`` and one VirtualService with weights and a mirror.
``kserve-predictor``: on a cluster whose serving engine is KServe, the service as one KServe
``InferenceService`` ``<service>`` (a shadow as a second one, ``<service>-shadow``): the model server as its
predictor (KServe's autoscaler on cpu or rps between min and max replicas, or KEDA on the pods' GPU
utilisation from the cluster's Prometheus), ``storageUris`` for a model stored outside, and
``canaryTrafficPercent`` for the newest predictor while KServe keeps the last rolled-out one. Its pods carry
``app=<service>`` and ``version=v<N>`` like the Deployments', so Istio's figures name them alike.
"""
from __future__ import annotations

from typing import Any

from ..engine import render_object
from ..errors import ArgumentError
from ..names import k8s_name
from .base import Build, Kind
from .service import fqdn, replica_bounds, version_server

POD_METRICS = {"gpu": "DCGM_FI_DEV_GPU_UTIL", "rps": "requests_per_second"}
TOKEN_KEY = "token"  # the key of the service's token in its Secret


def token_env(b: Build, name: str) -> list[dict[str, Any]]:
    """The service's token as ``name``, from its Secret: never a value in the manifest or in argv."""
    secret = b.args.get("token_secret") or ""
    if not secret:
        return []
    return [{"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": TOKEN_KEY}}}]


def hpa_metrics(metric: str, target: int) -> list[dict[str, Any]]:
    if metric == "cpu":
        return [{"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": target}}}]
    return [{"type": "Pods", "pods": {"metric": {"name": POD_METRICS[metric]},
                                      "target": {"type": "AverageValue", "averageValue": str(target)}}}]


def build_model_server(b: Build) -> list[dict]:
    low, high = replica_bounds(b)
    name, server = version_server(b, max(low, 1), token_env(b, "SERVING_TOKEN"))
    return [
        *server,
        render_object("hpa.yaml.j2", {"name": name, "target": name, "min_replicas": max(low, 1),
                                      "max_replicas": high,
                                      "metrics": hpa_metrics(b.args["autoscale_metric"], b.args["autoscale_target"])}),
    ]


def build_router(b: Build) -> list[dict]:
    front = b.args["service_name"]
    name = k8s_name(front, "router")
    selector = {"app": front, "component": "router"}
    deployment = render_object("deployment.yaml.j2", {
        "name": name, "replicas": 1, "selector": selector, "image": b.image,
        "command": ["python", "/app/router.py"], "args": ["--port", str(b.args["port"])], "port": b.args["port"],
        "resources": b.resources.requirements(), "env": token_env(b, "ROUTER_TOKEN"),
    })
    return [deployment]


def build_traffic(b: Build) -> list[dict]:
    front, namespace = b.args["service_name"], b.ctx.namespace
    upstream = b.args.get("upstream") or front  # whose <upstream>-<target> Services the routes name
    routes, mirror = b.args["routes"], b.args.get("mirror") or ""
    weights: list[dict[str, Any]] = []
    total = 0
    for item in routes:
        version, _, weight = item.partition("=")
        if not weight.isdigit():
            raise ArgumentError("routes", f"{item!r} is not version=weight")
        weights.append({"destination": {"host": fqdn(k8s_name(upstream, version), namespace), "port": {"number": 80}},
                        "weight": int(weight)})
        total += int(weight)
    if total != 100:
        raise ArgumentError("routes", "weights must add up to 100")
    http: dict[str, Any] = {"name": "traffic-split", "route": weights}
    if mirror:
        version, _, percent = mirror.partition("=")
        http["mirror"] = {"host": fqdn(k8s_name(upstream, version), namespace), "port": {"number": 80}}
        http["mirrorPercentage"] = {"value": float(percent or 100)}
    return [
        render_object("service.yaml.j2", {"name": front, "selector": {"app": front}, "port_name": "http",
                                          "target_port": b.args["port"]}),
        render_object("virtualservice.yaml.j2", {"name": front, "hosts": [fqdn(front, namespace)], "gateways": [],
                                                 "http": [http]}),
    ]


KSERVE_METRICS = {"cpu": "cpu", "rps": "rps"}  # KServe's own autoscaler; GPU utilisation goes through KEDA
KEDA = "serving.kserve.io/autoscalerClass"


def gpu_query(namespace: str, name: str) -> str:
    """The predictor pods' mean GPU utilisation (DCGM's exporter); both names are checked DNS labels."""
    return f'avg(DCGM_FI_DEV_GPU_UTIL{{namespace="{namespace}",pod=~"{name}-predictor-.*"}})'


def build_kserve(b: Build) -> list[dict]:
    low, high = replica_bounds(b)
    metric, target = b.args["autoscale_metric"], b.args["autoscale_target"]
    name = b.args["service_name"]
    values: dict[str, Any] = {"annotations": {}, "scale_metric": None, "auto_scaling": None}
    if metric in KSERVE_METRICS:
        values.update(scale_metric=KSERVE_METRICS[metric], scale_target=target)
    elif metric == "gpu" and b.args.get("prometheus_url"):
        values["annotations"] = {KEDA: "keda"}
        values["auto_scaling"] = {"metrics": [{"type": "External", "external": {
            "metric": {"backend": "prometheus", "serverAddress": b.args["prometheus_url"],
                       "query": gpu_query(b.ctx.namespace, name)},
            "target": {"type": "Value", "value": str(target)}}}]}
    else:
        raise ArgumentError("autoscale_metric", f"KServe cannot scale on {metric!r} here (cpu or rps; gpu through "
                                                "KEDA needs the cluster's prometheus_url)")
    storage = [{"uri": b.args["storage_uri"], "mountPath": b.args["mount_path"]}] if b.args.get("storage_uri") else []
    return [render_object("inferenceservice.yaml.j2", {
        **values, "name": name,
        "labels": {"app": b.args.get("app") or name, "version": b.args["version"]},
        "min_replicas": low, "max_replicas": high, "canary_percent": b.args["canary_percent"], "image": b.image,
        "command": b.command, "args": b.cli_args, "port": b.args["port"], "resources": b.resources.requirements(),
        "storage_uris": storage, "env": token_env(b, "SERVING_TOKEN"),
    })]


MODEL_SERVER = Kind("model-server", build_model_server, batch=False, gang=None, required_args={
    "service_name": "string", "version": "string", "port": "integer", "min_replicas": "integer",
    "max_replicas": "integer", "autoscale_metric": "string", "autoscale_target": "integer",
}, optional_args={"image": "string", "token_secret": "string"})
ROUTER = Kind("serving-router", build_router, batch=False, gang=None,
              required_args={"service_name": "string", "port": "integer"}, optional_args={"token_secret": "string"})
TRAFFIC = Kind("serving-traffic", build_traffic, batch=False, gang=None,
               required_args={"service_name": "string", "routes": "array", "port": "integer"},
               optional_args={"mirror": "string", "upstream": "string"})
KSERVE = Kind("kserve-predictor", build_kserve, batch=False, gang=None, required_args={
    "service_name": "string", "version": "string", "port": "integer", "min_replicas": "integer",
    "max_replicas": "integer", "autoscale_metric": "string", "autoscale_target": "integer",
    "canary_percent": "integer",
}, optional_args={"image": "string", "app": "string", "storage_uri": "string", "mount_path": "string",
                  "prometheus_url": "string", "token_secret": "string"})
