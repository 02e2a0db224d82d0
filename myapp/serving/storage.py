"""Model versions stored outside the platform: ``s3://``, ``gs://``, ``pvc://<claim>/<path>``, ``https://``.

Registration checks the form (``check_uri``: 400 naming ``uri``). A server reads the file at
``MOUNT/<file name>``: with KServe its storage initializer puts it there (``storageUris`` on the
predictor); with plain Deployments ``fetch_into`` adds what does (an init container downloading into an
emptyDir, or the claim itself, read-only, for ``pvc://``). Locally nothing fetches them: a local service
refuses such a version (the API, naming ``uri``).
"""
from __future__ import annotations

import posixpath
import re
from typing import Any

from ..errors import FieldError
from ..outputs import s3 as outputs_s3

SCHEMES = ("s3", "gs", "pvc", "https")
MOUNT = "/mnt/models"
VOLUME = "model-store"
INIT = "model-download"
GCS_IMAGE = "gcr.io/google.com/cloudsdktool/google-cloud-cli:slim"
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]$")
# Fixed scripts: the uri and the destination reach them as environment, never inside the text.
SCRIPTS = {
    "s3": 'set -e; aws s3 cp --only-show-errors "$MODEL_URI" "$MODEL_DEST"',
    "gs": 'set -e; gcloud storage cp "$MODEL_URI" "$MODEL_DEST"',
    "https": ("import os, shutil, urllib.request\n"
              "with urllib.request.urlopen(os.environ['MODEL_URI'], timeout=60) as r, "
              "open(os.environ['MODEL_DEST'], 'wb') as f:\n    shutil.copyfileobj(r, f)\n"),
}


def scheme(uri: str) -> str | None:
    """The remote scheme of a uri, None for a path (a file the server reads where it is; ``file://`` too)."""
    head, sep, _ = uri.partition("://")
    return head.lower() if sep and head.lower() != "file" else None


def check_uri(uri: str) -> None:
    """A supported remote uri naming one file, or a path; else 400 naming ``uri`` with the reason."""
    found = scheme(uri)
    if found is None:
        return
    if found not in SCHEMES:
        raise FieldError("uri", f"scheme {found}:// is not supported (s3://, gs://, pvc://<claim>/<path>, https://, "
                                "or a path)")
    rest = uri.partition("://")[2]
    host, _, path = rest.partition("/")
    parts = path.split("/")
    if not path or path.endswith("/") or any(p in ("", ".", "..") for p in parts):
        raise FieldError("uri", "must name one file: <scheme>://<bucket or claim or host>/<path to the file>")
    if found == "pvc" and not _DNS_LABEL.match(host):
        raise FieldError("uri", f"{host!r} is not a claim name (a DNS label)")
    if found in ("s3", "gs") and not _BUCKET.match(host):
        raise FieldError("uri", f"{host!r} is not a bucket name")
    if found == "https" and (not host or any(c in host for c in "@ ")):
        raise FieldError("uri", "needs a host, without credentials")


def is_remote(uri: str) -> bool:
    return scheme(uri) is not None


def server_path(uri: str) -> str:
    """Where the server reads the model: the uri's own path, or ``MOUNT/<file>`` for a remote one."""
    return posixpath.join(MOUNT, posixpath.basename(uri)) if is_remote(uri) else uri


def kserve_storage(uri: str) -> list[dict[str, str]]:
    """KServe's storage initializer fetches the file into MOUNT (``spec.predictor.storageUris``)."""
    return [{"uri": uri, "mountPath": MOUNT}] if is_remote(uri) else []


def fetch_into(pod_spec: dict[str, Any], uri: str, store: outputs_s3.Settings | None, server_image: str) -> None:
    """Plain Deployments: make the file appear at ``server_path(uri)`` in every container of the pod."""
    found = scheme(uri)
    if found is None:
        return
    containers = pod_spec.get("containers") or []
    if found == "pvc":
        claim, _, path = uri.partition("://")[2].partition("/")
        pod_spec["volumes"] = [*(pod_spec.get("volumes") or []),
                               {"name": VOLUME, "persistentVolumeClaim": {"claimName": claim, "readOnly": True}}]
        mount = {"name": VOLUME, "mountPath": MOUNT, "readOnly": True, "subPath": posixpath.dirname(path)}
        if not mount["subPath"]:
            mount.pop("subPath")
        for container in containers:
            container["volumeMounts"] = [*(container.get("volumeMounts") or []), mount]
        return
    pod_spec["volumes"] = [*(pod_spec.get("volumes") or []), {"name": VOLUME, "emptyDir": {}}]
    for container in containers:
        container["volumeMounts"] = [*(container.get("volumeMounts") or []),
                                     {"name": VOLUME, "mountPath": MOUNT, "readOnly": True}]
    # The platform's own variables (MYAPP_PROJECT, ...: every container carries them), then the transfer's;
    # not the server's secrets (its service token): the download has no use for them.
    env: list[dict[str, Any]] = [dict(e) for e in containers[0].get("env") or [] if "valueFrom" not in e] \
        if containers else []
    env += [{"name": "MODEL_URI", "value": uri}, {"name": "MODEL_DEST", "value": server_path(uri)}]
    if found == "s3":
        image, command = (store.image if store else outputs_s3.DEFAULT_IMAGE), ["sh", "-c", SCRIPTS["s3"]]
        if store is not None:  # the project's own Secret (outputs_s3.JOB_SECRET): credentials never in clear
            env += [{"name": "AWS_DEFAULT_REGION", "value": store.region}]
            if store.endpoint:
                env.append({"name": "AWS_ENDPOINT_URL", "value": store.endpoint})
            env += [{"name": key, "valueFrom": {"secretKeyRef": {"name": store.job_secret, "key": key}}}
                    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")]
    elif found == "gs":  # the pod's service account (workload identity) reads the bucket
        image, command = GCS_IMAGE, ["sh", "-c", SCRIPTS["gs"]]
    else:
        image, command = server_image, ["python", "-c", SCRIPTS["https"]]
    security = (containers[0].get("securityContext") if containers else None) or {}
    init = {"name": INIT, "image": image, "command": command, "env": env,
            "volumeMounts": [{"name": VOLUME, "mountPath": MOUNT}],
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}},
            **({"securityContext": dict(security)} if security else {})}
    pod_spec["initContainers"] = [*(pod_spec.get("initContainers") or []), init]
