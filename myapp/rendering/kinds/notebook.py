"""``notebook``: JupyterLab reachable by the project's members only, on an origin of its own:
``<name>.<project>.<MYAPP_NOTEBOOK_DOMAIN>``, under the prefix /notebook/<project>/<name>/.

Objects: the Notebook CR (notebook-controller runs it as a StatefulSet, pods labelled
``statefulset: <name>``), a Service in front of it, a VirtualService on the platform's gateway for the
notebook's host (its prefix, the hand-off path, and its root sent to JupyterLab), an AuthorizationPolicy
whose CUSTOM action sends every request to the platform's ext-authz provider first (the member check and
the hand-off, myapp/web/notebook_extauthz.py), a PersistentVolumeClaim for the work folder, and the
project's outputs claim, mounted read-only at ``myapp.outputs.declarations.MOUNT``. Jupyter's config, data
(its cookie secret) and runtime folders are an emptyDir of the pod (``PRIVATE_DIR``), never the work folder
the project's jobs and members can write.

Jupyter's own token comes from the Secret ``token_secret_name(name)`` (key ``token``), which the
platform puts before it submits (a random value, never rendered, never shown); the ext-authz answer
adds it to the requests it allows. Cluster-wide settings (gateway, ext-authz provider, storage class,
work folder size) come from ``MYAPP_NOTEBOOK_*`` variables read at render time, like
``context.platform_namespace()``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from urllib.parse import quote

from ...notebooks.origins import DEFAULT_DOMAIN, DOMAIN, HANDOFF_PATH, Origins
from ...outputs import declarations as outputs
from ..engine import render_object
from ..errors import ContextError
from ..names import is_dns1123_label, is_dns1123_subdomain, k8s_name
from ..quantity import parse_quantity
from .base import Build, Kind
from .service import fqdn

JUPYTER_PORT = 8888
WORK_DIR = "/home/jovyan"  # the Jupyter images' HOME and root_dir
VOLUME_DIR = f"{WORK_DIR}/volume"  # an optional existing claim, visible in JupyterLab's file browser
PRIVATE_DIR = "/myapp/jupyter"  # an emptyDir: Jupyter's own folders (start.sh), out of the project's reach
# The notebook-controller labels each notebook's pod statefulset=<name> (the Notebook CR's pod
# template has no metadata of ours to select by).
POD_LABEL = "statefulset"
DEFAULTS = {
    # Kubeflow's shared ingress gateway; an install with its own gateway names it here.
    "MYAPP_NOTEBOOK_GATEWAY": "kubeflow/kubeflow-gateway",
    # The extensionProviders entry of the mesh config (install/istio/): the platform's authz endpoint.
    "MYAPP_NOTEBOOK_AUTHZ_PROVIDER": "myapp-notebook-authz",
    "MYAPP_NOTEBOOK_STORAGE_CLASS": "",  # empty: the cluster's default StorageClass
    "MYAPP_NOTEBOOK_VOLUME_SIZE": "10Gi",
    # Each notebook's host is <name>.<project>.<this> (myapp/notebooks/origins.py): wildcard DNS to the gateway.
    "MYAPP_NOTEBOOK_DOMAIN": DEFAULT_DOMAIN,
}


@dataclass(frozen=True)
class NotebookSettings:
    gateway: str
    authz_provider: str
    storage_class: str
    volume_size: str
    domain: str = DEFAULT_DOMAIN


def _setting(name: str) -> str:
    return os.environ.get(name, "").strip() or DEFAULTS[name]


def settings() -> NotebookSettings:
    """The cluster-wide notebook settings, checked (ContextError names the variable)."""
    gateway = _setting("MYAPP_NOTEBOOK_GATEWAY")
    namespace, _, gateway_name = gateway.rpartition("/")
    if not is_dns1123_subdomain(gateway_name) or (namespace and not is_dns1123_label(namespace)):
        raise ContextError("MYAPP_NOTEBOOK_GATEWAY", f"{gateway!r} is not <namespace>/<gateway name>")
    provider = _setting("MYAPP_NOTEBOOK_AUTHZ_PROVIDER")
    if not is_dns1123_subdomain(provider):
        raise ContextError("MYAPP_NOTEBOOK_AUTHZ_PROVIDER", f"{provider!r} is not a valid provider name")
    storage_class = os.environ.get("MYAPP_NOTEBOOK_STORAGE_CLASS", "").strip()
    if storage_class and not is_dns1123_subdomain(storage_class):
        raise ContextError("MYAPP_NOTEBOOK_STORAGE_CLASS", f"{storage_class!r} is not a StorageClass name")
    size = _setting("MYAPP_NOTEBOOK_VOLUME_SIZE")
    try:
        positive = parse_quantity(size) > 0
    except ValueError:
        positive = False
    if not positive:
        raise ContextError("MYAPP_NOTEBOOK_VOLUME_SIZE", f"{size!r} is not a positive quantity such as 10Gi")
    domain = _setting("MYAPP_NOTEBOOK_DOMAIN").lower().rstrip(".")
    if not DOMAIN.fullmatch(domain):
        raise ContextError("MYAPP_NOTEBOOK_DOMAIN", f"{domain!r} is not a domain name such as notebooks.example.com")
    return NotebookSettings(gateway, provider, storage_class, size, domain)


def url_prefix(project: str, name: str) -> str:
    """Where a notebook is served: JupyterLab's base_url, the route, what the authz check reads.
    Project names are DNS labels (the API checks), so quoting changes nothing for a real one."""
    return f"/notebook/{quote(project, safe='')}/{name}/"


def token_secret_name(name: str) -> str:
    """The Secret (key ``token``) holding the notebook's Jupyter token."""
    return k8s_name(name, "jupyter-token", max_len=63)


def work_claim_name(name: str) -> str:
    return k8s_name(name, "work", max_len=63)


def build(b: Build) -> list[dict]:
    name, namespace = b.args["name"], b.ctx.namespace
    config = settings()
    prefix = url_prefix(b.ctx.project, name)
    host = Origins(config.domain).host(b.ctx.project, name)
    to_pod = [{"destination": {"host": fqdn(name, namespace), "port": {"number": 80}}}]
    http = [{
        "name": "notebook",
        "match": [{"uri": {"prefix": prefix}}],
        "rewrite": {"uri": prefix},
        "route": to_pod,
        # No route timeout: Envoy applies it to upgraded connections too, and a kernel's or terminal's
        # websocket would be cut when it ran out (kubeflow/kubeflow#6126 removed the 300s it once had).
    }, {
        # The platform's one-time code: the pod's ext-authz check redeems it and answers (Jupyter never does).
        "name": "handoff", "match": [{"uri": {"exact": HANDOFF_PATH}}], "route": to_pod,
    }, {
        "name": "root", "match": [{"uri": {"exact": "/"}}], "redirect": {"uri": prefix + "lab"},
    }]
    notebook = render_object("notebook.yaml.j2", {
        "name": name, "image": b.image, "command": b.command, "prefix": prefix.rstrip("/"), "host": host,
        "private_dir": PRIVATE_DIR,
        "resources": b.resources.requirements(), "port": JUPYTER_PORT, "token_secret": token_secret_name(name),
        "work_claim": work_claim_name(name), "work_dir": WORK_DIR,
        "volume_claim": b.args.get("volume_claim", ""), "volume_dir": VOLUME_DIR,
    })
    # The project's task outputs, read-only where tasks see them (a path copied from a run view works).
    outputs.mount_read_only(notebook["spec"]["template"]["spec"])
    return [
        # Every request reaching the pod, whatever its path or origin, is checked: rules [{}] match all.
        # Created before the notebook and (cleanup goes backwards) deleted after it: never a moment
        # when its pod answers without the check.
        render_object("authorizationpolicy.yaml.j2", {
            "name": k8s_name("notebook", name), "match_labels": {POD_LABEL: name},
            "provider": config.authz_provider, "rules": [{}],
        }),
        notebook,
        # The work folder (its pod waits for the claim to be bound).
        render_object("persistentvolumeclaim.yaml.j2", {
            "name": work_claim_name(name), "storage_class": config.storage_class, "size": config.volume_size,
        }),
        render_object("service.yaml.j2", {
            "name": name, "selector": {POD_LABEL: name}, "port_name": "http-notebook",
            "target_port": JUPYTER_PORT,
        }),
        render_object("virtualservice.yaml.j2", {
            "name": k8s_name("notebook", name), "hosts": [host], "gateways": [config.gateway], "http": http,
        }),
        # The outputs claim (adopted if a task made it; never deleted with the notebook): the pod waits for it.
        outputs.claim_manifest(namespace),
    ]


KIND = Kind("notebook", build, batch=False, gang=None, required_args={"name": "string"},
            optional_args={"image": "string", "volume_claim": "string"})
