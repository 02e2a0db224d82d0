"""What a service's parts render to: plain data in, validated manifests out (no database, no network).

Each part is rendered through ``myapp.rendering.render`` with the deploy-service template's image and
files (so the local backend finds ``main.py`` and ``router.py``) and a kind of
``myapp/rendering/kinds/serving.py``; the labels carry the project, ``pipeline=serving`` and the part
as the task, so every object the platform starts for a service says whose it is.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..outputs import declarations as outputs
from ..outputs import s3 as outputs_s3
from ..rendering import RenderContext, render, validate_manifests
from ..rendering.catalog import get_template
from ..rendering.kinds.serving import TOKEN_KEY
from ..rendering.pod import pod_templates
from . import storage

PORT = 8080
ROUTER_SECRET_KEY = TOKEN_KEY
PIPELINE = "serving"


@dataclass(frozen=True)
class VersionSpec:
    id: int
    version: int  # the model's version number: its label is v<number>
    framework: str
    uri: str
    signature: dict[str, Any] = field(default_factory=dict)
    image: str | None = None

    @property
    def label(self) -> str:
        return f"v{self.version}"


@dataclass(frozen=True)
class ServiceSpec:
    id: int
    name: str
    project: str
    namespace: str
    service_account: str = ""
    min_replicas: int = 1
    max_replicas: int = 1
    autoscale_metric: str = "cpu"
    autoscale_target: int = 70
    resources: dict[str, Any] = field(default_factory=dict)
    prometheus_url: str = ""  # the cluster's: KServe's GPU autoscaling (KEDA) reads it
    pull_secrets: dict[str, str] = field(default_factory=dict)  # the project's images' (RenderContext.pull_secrets)


SHADOW = "shadow"  # KServe: the shadow's InferenceService is <service>-shadow
MIRROR = "mirror"  # KServe: the front that mirrors, <service>-mirror


def router_secret(service_id: int) -> str:
    """The Secret holding the service's token: the router demands it of every caller (the web and the
    worker) and adds it to its calls to the model servers, which demand it too. (Named for the router,
    which had it first: a running service's Secret keeps its name.)"""
    return f"myapp-serving-{service_id}-router"


def _string(**extra: Any) -> dict[str, Any]:
    return {"type": "string", "maxLength": 4096, **extra}


def _integer(low: int, high: int, **extra: Any) -> dict[str, Any]:
    return {"type": "integer", "minimum": low, "maximum": high, **extra}


_MODEL_SERVER: dict[str, Any] = {
    "service_name": _string(), "version": _string(x_flag="--version"),
    "model_path": _string(x_flag="--model-path"), "framework": _string(x_flag="--framework", default="sklearn"),
    "signature": _string(x_flag="--signature", default="{}"), "port": _integer(1024, 65535, x_flag="--port"),
    "min_replicas": _integer(0, 100), "max_replicas": _integer(1, 100),
    "autoscale_metric": {"type": "string", "enum": ["cpu", "gpu", "rps"]}, "autoscale_target": _integer(1, 100000),
    "image": _string(default=""), "token_secret": _string(default=""),
}

SCHEMAS: dict[str, dict[str, Any]] = {
    "model-server": {"type": "object", "required": ["service_name", "version", "model_path"],
                     "properties": _MODEL_SERVER},
    # The same server as a KServe predictor, with the share of traffic KServe sends to it.
    "kserve-predictor": {"type": "object", "required": ["service_name", "version", "model_path"],
                         "properties": {**_MODEL_SERVER, "canary_percent": _integer(0, 100), "app": _string(default=""),
                                        "storage_uri": _string(default=""), "mount_path": _string(default=""),
                                        "prometheus_url": _string(default="")}},
    "serving-router": {"type": "object", "required": ["service_name"], "properties": {
        "service_name": _string(), "port": _integer(1024, 65535), "token_secret": _string(default=""),
    }},
    "serving-traffic": {"type": "object", "required": ["service_name", "routes"], "properties": {
        "service_name": _string(), "routes": {"type": "array", "items": {"type": "string"}},
        "mirror": _string(default=""), "port": _integer(1024, 65535), "upstream": _string(default=""),
    }},
}


def _schema(kind: str) -> dict[str, Any]:
    schema = json.loads(json.dumps(SCHEMAS[kind]))
    for prop in schema["properties"].values():
        if "x_flag" in prop:
            prop["x-flag"] = prop.pop("x_flag")
    return schema


def _template(kind: str, base: dict[str, Any] | None = None) -> dict[str, Any]:
    base = base or get_template("deploy-service")
    return {**base, "kind": kind, "command": ["python", "/app/main.py"], "args_schema": _schema(kind)}


def _ctx(service: ServiceSpec, part: str) -> RenderContext:
    return RenderContext(project=service.project, namespace=service.namespace, pipeline=PIPELINE,
                         task=f"{service.name}-{part}", service_account=service.service_account,
                         pull_secrets=service.pull_secrets)


def _with_model(manifests: list[dict], uri: str, fetch: bool = False) -> list[dict]:
    """Where the server finds the model: a task's outputs (registration checked it is the project's): that
    one attempt's folder mounted read-only where the path says (myapp/outputs/declarations.py), nothing else of the
    volume; a remote uri (``fetch``, plain Deployments): fetched or mounted at ``storage.server_path``."""
    found = outputs.attempt_of(uri)
    if found is None and not (fetch and storage.is_remote(uri)):
        return manifests
    for obj in manifests:
        for pod in pod_templates(obj):
            if found is not None:
                outputs.mount_read_only(pod.template["spec"], found[1])
            else:
                image = pod.template["spec"]["containers"][0]["image"]
                storage.fetch_into(pod.template["spec"], uri, outputs_s3.settings(), image)
    validate_manifests(manifests)
    return manifests


def _server_args(service: ServiceSpec, version: VersionSpec) -> dict[str, Any]:
    return {"service_name": service.name, "version": version.label, "model_path": storage.server_path(version.uri),
            "framework": version.framework, "signature": json.dumps(version.signature, sort_keys=True),
            "port": PORT, "min_replicas": service.min_replicas, "max_replicas": max(service.max_replicas, 1),
            "autoscale_metric": service.autoscale_metric, "autoscale_target": service.autoscale_target,
            "image": version.image or "", "token_secret": router_secret(service.id)}


def model_server(service: ServiceSpec, version: VersionSpec, base: dict[str, Any] | None = None) -> list[dict]:
    return _with_model(render(_template("model-server", base), _server_args(service, version),
                              _ctx(service, version.label), service.resources or None), version.uri, fetch=True)


def kserve(service: ServiceSpec, version: VersionSpec, canary_percent: int = 100, shadow: bool = False,
           base: dict[str, Any] | None = None) -> list[dict]:
    """On a KServe cluster: the service as one InferenceService whose predictor is ``version``; at
    ``canary_percent`` < 100 KServe sends the rest to the predictor it last rolled out (so a canary is a
    resubmit with the new version, patched in place, and a promote the same at 100). ``shadow``: the
    shadow version's own InferenceService ``<service>-shadow`` (its pods labelled as the service's)."""
    name = f"{service.name}-{SHADOW}" if shadow else service.name
    args = {**_server_args(service, version), "service_name": name, "app": service.name,
            "canary_percent": 100 if shadow else canary_percent, "prometheus_url": service.prometheus_url}
    if storage.is_remote(version.uri):
        args.update(storage_uri=version.uri, mount_path=storage.MOUNT)
    part = f"kserve-{SHADOW}" if shadow else "kserve"
    return _with_model(render(_template("kserve-predictor", base), args, _ctx(service, part),
                              service.resources or None), version.uri)


def mirror(service: ServiceSpec, percent: int, base: dict[str, Any] | None = None) -> list[dict]:
    """KServe mirrors nothing: a front Service + VirtualService ``<service>-mirror`` sending every request to
    the service's predictor and a copy of ``percent`` % to the shadow's (``<service>-shadow-predictor``)."""
    return render(_template("serving-traffic", base), {
        "service_name": f"{service.name}-{MIRROR}", "upstream": service.name, "routes": ["predictor=100"],
        "mirror": f"{SHADOW}-predictor={percent}", "port": PORT}, _ctx(service, MIRROR))


def router(service: ServiceSpec, base: dict[str, Any] | None = None) -> list[dict]:
    return render(_template("serving-router", base), {"service_name": service.name, "port": PORT,
                                                      "token_secret": router_secret(service.id)},
                  _ctx(service, "router"))


def traffic(service: ServiceSpec, split: dict[int, int], labels: dict[int, str], shadow: int | None,
            mirror_percent: int, base: dict[str, Any] | None = None) -> list[dict]:
    """Kubernetes: the front Service and the VirtualService (weights by version label, the mirror)."""
    routes = [f"{labels[vid]}={weight}" for vid, weight in sorted(split.items())]
    mirror = f"{labels[shadow]}={mirror_percent}" if shadow else ""
    return render(_template("serving-traffic", base), {"service_name": service.name, "routes": routes,
                                                       "mirror": mirror, "port": PORT}, _ctx(service, "traffic"))
