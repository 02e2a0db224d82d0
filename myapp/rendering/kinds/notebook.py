"""``notebook`` (internal): a Jupyter Notebook CR reachable at /notebook/<namespace>/<name>/."""
from __future__ import annotations

from ..engine import render_object
from ..names import k8s_name
from .base import Build, Kind
from .service import fqdn

# The platform's shared ingress gateway (Kubeflow convention).
GATEWAY = "kubeflow/kubeflow-gateway"
JUPYTER_PORT = 8888


def build(b: Build) -> list[dict]:
    name, namespace = b.args["name"], b.ctx.namespace
    prefix = f"/notebook/{namespace}/{name}/"
    http = [{
        "name": "notebook",
        "match": [{"uri": {"prefix": prefix}}],
        "rewrite": {"uri": prefix},
        "route": [{"destination": {"host": fqdn(name, namespace), "port": {"number": 80}}}],
        "timeout": "300s",
    }]
    return [
        render_object("notebook.yaml.j2", {
            "name": name, "image": b.image, "command": b.command, "prefix": prefix.rstrip("/"),
            "resources": b.resources.requirements(), "volume_claim": b.args.get("volume_claim", ""),
        }),
        # notebook-controller labels the pod statefulset=<name>.
        render_object("service.yaml.j2", {
            "name": name, "selector": {"statefulset": name}, "port_name": "http-notebook",
            "target_port": JUPYTER_PORT,
        }),
        render_object("virtualservice.yaml.j2", {
            "name": k8s_name("notebook", name), "hosts": ["*"], "gateways": [GATEWAY], "http": http,
        }),
    ]


KIND = Kind("notebook", build, batch=False, gang=None, required_args={"name": "string"},
            optional_args={"image": "string", "volume_claim": "string"})
