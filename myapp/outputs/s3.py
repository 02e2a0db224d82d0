"""Task outputs in an S3-compatible store (MinIO, Ceph, AWS S3), where one is configured.

On Kubernetes the platform cannot read the project's outputs claim; with a store configured
(``MYAPP_OUTPUTS_S3_BUCKET``) the attempt's folder is an emptyDir instead, and the Kubernetes backend
rewrites every pod it submits (``to_store``): an init container downloads the upstream attempt folders
the pod's command, arguments and environment name (``{{ tasks.<t>.outputs.<k> }}`` resolved to
``/myapp/outputs/<run>/<task>/<attempt>/...``) to the same paths, and a native sidecar uploads the
attempt's folder when the pod's main containers have ended (the kubelet stops sidecars last, with
SIGTERM). The platform lists, previews and downloads from the store (``Store``).

Objects live at ``<prefix><namespace>/<run>/<task>/<attempt>/<path>``: a prefix per project. Jobs use
the Secret ``myapp-outputs-s3`` of their own namespace (keys ``AWS_ACCESS_KEY_ID``,
``AWS_SECRET_ACCESS_KEY``), which an admin creates with credentials limited to that project's prefix;
the platform's own credentials (``MYAPP_OUTPUTS_S3_ACCESS_KEY_ID``/``..._SECRET_ACCESS_KEY``, else the
SDK's default chain) never reach a job.
"""
from __future__ import annotations

import copy
import functools
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any

from ..errors import DomainError, Kind
from .declarations import MOUNT, READ_ENV, VOLUME

DEFAULT_IMAGE = "public.ecr.aws/aws-cli/aws-cli:2.22.35"  # has `aws s3 sync` and a shell
JOB_SECRET = "myapp-outputs-s3"
UPLOAD_GRACE_SECONDS = 300  # how long a pod may take to upload after its main containers ended
# An attempt folder a job names (its own or an upstream one): what myapp/outputs.attempt_dir makes.
NAMED_DIR = re.compile(re.escape(MOUNT)
                       + r"/([A-Za-z0-9_-]{1,64}/[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?/[0-9]{1,6})(?![A-Za-z0-9_-])")
DOWNLOAD = "outputs-download"
UPLOAD = "outputs-upload"
# The transfers' scripts are fixed text: folders and the store's address reach them as arguments and
# environment, never inside the script.
DOWNLOAD_SCRIPT = ('set -e; for dir in "$@"; do '
                   'aws s3 sync --only-show-errors "$MYAPP_S3_BASE/$dir/" "$MOUNT/$dir/"; done')
UPLOAD_SCRIPT = ('upload() { aws s3 sync --only-show-errors "$MOUNT/$1/" "$MYAPP_S3_BASE/$1/"; exit 0; }; '
                 'trap \'upload "$1"\' TERM; while true; do sleep 3600 & wait $!; done')


@dataclass(frozen=True)
class Settings:
    bucket: str
    endpoint: str = ""  # empty: the SDK's default (AWS)
    prefix: str = ""  # "" or ends with "/"
    region: str = "us-east-1"
    access_key: str = ""
    secret_key: str = ""
    image: str = DEFAULT_IMAGE
    job_secret: str = JOB_SECRET

    def base(self, namespace: str) -> str:
        return f"s3://{self.bucket}/{self.prefix}{namespace}"

    def key(self, namespace: str, relative: str) -> str:
        return f"{self.prefix}{namespace}/{relative}"


def settings() -> Settings | None:
    """The store from the environment, read at call time (like the outputs claim's settings); None
    when ``MYAPP_OUTPUTS_S3_BUCKET`` is unset."""
    env = os.environ
    bucket = env.get("MYAPP_OUTPUTS_S3_BUCKET", "").strip()
    if not bucket:
        return None
    prefix = env.get("MYAPP_OUTPUTS_S3_PREFIX", "").strip().strip("/")
    return Settings(bucket=bucket, endpoint=env.get("MYAPP_OUTPUTS_S3_URL", "").strip(),
                    prefix=f"{prefix}/" if prefix else "", region=env.get("MYAPP_OUTPUTS_S3_REGION", "").strip()
                    or "us-east-1", access_key=env.get("MYAPP_OUTPUTS_S3_ACCESS_KEY_ID", ""),
                    secret_key=env.get("MYAPP_OUTPUTS_S3_SECRET_ACCESS_KEY", ""),
                    image=env.get("MYAPP_OUTPUTS_S3_IMAGE", "").strip() or DEFAULT_IMAGE,
                    job_secret=env.get("MYAPP_OUTPUTS_S3_SECRET", "").strip() or JOB_SECRET)


# ---- the pods ------------------------------------------------------------------------------------

def named_dirs(obj: Any) -> set[str]:
    """Every attempt folder mentioned in the strings of obj (containers' command, args, env)."""
    if isinstance(obj, str):
        return {m.group(1) for m in NAMED_DIR.finditer(obj)}
    if isinstance(obj, Mapping):
        return set().union(*(named_dirs(v) for v in obj.values())) if obj else set()
    if isinstance(obj, list):
        return set().union(*(named_dirs(v) for v in obj)) if obj else set()
    return set()


def to_store(manifests: list[dict[str, Any]], store: Settings) -> list[dict[str, Any]]:
    """The manifests with outputs in the store instead of the project's claim: the claim is left out,
    and every pod that mounts an attempt folder gets an emptyDir, the download and the upload; a pod that
    only reads one (a model server) the emptyDir and the download; a notebook nothing of it."""
    out = []
    for obj in manifests:
        if obj.get("kind") == "PersistentVolumeClaim" and (obj.get("metadata") or {}).get("name") == VOLUME:
            continue
        obj = copy.deepcopy(obj)
        namespace = str((obj.get("metadata") or {}).get("namespace") or "")
        for spec in _pod_specs(obj):
            _pod_to_store(spec, store, namespace)
        out.append(obj)
    return out


def _pod_specs(obj: Any) -> Iterator[dict[str, Any]]:
    """Every pod spec inside a manifest that mounts the outputs volume."""
    if isinstance(obj, dict):
        volumes = obj.get("volumes")
        if isinstance(volumes, list) and any(isinstance(v, Mapping) and v.get("name") == VOLUME for v in volumes):
            yield obj
            return
        for value in obj.values():
            yield from _pod_specs(value)
    elif isinstance(obj, list):
        for item in obj:
            yield from _pod_specs(item)


def _own_dir(spec: Mapping[str, Any]) -> str | None:
    for container in spec.get("containers") or []:
        for mount in container.get("volumeMounts") or []:
            if mount.get("name") == VOLUME and mount.get("subPath") and not mount.get("readOnly"):
                return str(mount["subPath"])
    return None


def _unmount(spec: dict[str, Any]) -> None:
    """A pod that reads all of the volume (a notebook): nothing mounted (nor MYAPP_OUTPUTS), since the
    store is no filesystem."""
    spec["volumes"] = [v for v in spec["volumes"] if v.get("name") != VOLUME]
    for group in ("initContainers", "containers"):
        for container in spec.get(group) or []:
            container["volumeMounts"] = [m for m in container.get("volumeMounts") or [] if m.get("name") != VOLUME]
            if "env" in container:
                container["env"] = [e for e in container["env"] if e.get("name") != READ_ENV]


def _pod_to_store(spec: dict[str, Any], store: Settings, namespace: str) -> None:
    own = _own_dir(spec)
    if own is None:  # a reader: a model server gets its one attempt folder downloaded, a notebook nothing
        upstream = sorted({str(m["subPath"]) for c in spec.get("containers") or [] for m in c.get("volumeMounts") or []
                           if m.get("name") == VOLUME and m.get("subPath")})
        if not upstream:
            _unmount(spec)
            return
    else:
        upstream = sorted(named_dirs([spec.get("containers"), spec.get("initContainers")]) - {own})
    spec["volumes"] = [{"name": VOLUME, "emptyDir": {}} if v.get("name") == VOLUME else v for v in spec["volumes"]]
    security = next((c["securityContext"] for c in spec.get("containers") or [] if c.get("securityContext")), None)
    env: list[dict[str, Any]] = [{"name": "MYAPP_S3_BASE", "value": store.base(namespace)},
                                 {"name": "MOUNT", "value": MOUNT},
                                 {"name": "AWS_DEFAULT_REGION", "value": store.region}]
    if store.endpoint:
        env.append({"name": "AWS_ENDPOINT_URL", "value": store.endpoint})
    env += [{"name": key, "valueFrom": {"secretKeyRef": {"name": store.job_secret, "key": key}}}
            for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")]

    def transfer(name: str, script: str, args: list[str], read_only: bool) -> dict[str, Any]:
        container: dict[str, Any] = {
            "name": name, "image": store.image, "command": ["/bin/sh", "-c", script, name], "args": args,
            "env": env, "volumeMounts": [{"name": VOLUME, "mountPath": MOUNT, "readOnly": read_only}],
            "resources": {"requests": {"cpu": "50m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}}}
        if security:
            container["securityContext"] = copy.deepcopy(security)
        return container

    init = [c for c in spec.get("initContainers") or [] if c.get("name") not in (DOWNLOAD, UPLOAD)]
    if upstream:
        init.append(transfer(DOWNLOAD, DOWNLOAD_SCRIPT, upstream, read_only=False))
    if own is None:
        spec["initContainers"] = init
        return
    upload = transfer(UPLOAD, UPLOAD_SCRIPT, [own], read_only=True)
    upload["restartPolicy"] = "Always"  # a native sidecar: runs beside the main containers, stopped after them
    spec["initContainers"] = [*init, upload]
    spec["terminationGracePeriodSeconds"] = max(int(spec.get("terminationGracePeriodSeconds") or 30),
                                                UPLOAD_GRACE_SECONDS)


# ---- the platform's side: list, read, delete -----------------------------------------------------

@functools.lru_cache(maxsize=4)
def store(settings_: Settings) -> Store:
    """One client per process and settings (boto3's clients are thread-safe; making one is slow)."""
    return Store(settings_)


class Store:
    """The platform's client of the store (boto3, imported only where a store is configured)."""

    def __init__(self, store: Settings):
        try:
            import boto3
        except ImportError as exc:  # an optional dependency: `pip install myapp[s3]`
            raise DomainError("MYAPP_OUTPUTS_S3_BUCKET is set but boto3 is not installed (pip install boto3)",
                              kind=Kind.UNAVAILABLE) from exc
        self.settings = store
        credentials = ({"aws_access_key_id": store.access_key, "aws_secret_access_key": store.secret_key}
                       if store.access_key else {})
        self.client = boto3.client("s3", endpoint_url=store.endpoint or None, region_name=store.region,
                                   **credentials)

    def _call(self, what: str, call: Any) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return call()
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404", "NotFound"):
                raise DomainError(f"no output {what}", kind=Kind.NOT_FOUND) from None
            raise DomainError(f"the outputs store refused {what}: {exc}", kind=Kind.UNAVAILABLE) from None
        except BotoCoreError as exc:
            raise DomainError(f"the outputs store cannot be reached for {what}: {exc}",
                              kind=Kind.UNAVAILABLE) from None

    def list(self, namespace: str, relative_dir: str, limit: int) -> list[tuple[str, int]]:
        """(path relative to the attempt folder, size) of every object under it, by path, at most limit."""
        prefix = self.settings.key(namespace, relative_dir) + "/"
        out: list[tuple[str, int]] = []
        token: str | None = None
        while len(out) < limit:
            kwargs: dict[str, Any] = {"Bucket": self.settings.bucket, "Prefix": prefix,
                                      "MaxKeys": min(1000, limit - len(out))}
            if token:
                kwargs["ContinuationToken"] = token
            page = self._call(f"listing {relative_dir}", lambda kwargs=kwargs: self.client.list_objects_v2(**kwargs))
            out += [(item["Key"][len(prefix):], int(item["Size"])) for item in page.get("Contents", [])]
            token = page.get("NextContinuationToken")
            if not page.get("IsTruncated") or not token:
                break
        return out[:limit]

    def open(self, namespace: str, relative_dir: str, path: str, max_bytes: int | None = None) -> IO[bytes]:
        """The object's body (a stream; the first max_bytes only when given)."""
        kwargs: dict[str, Any] = {"Bucket": self.settings.bucket,
                                  "Key": self.settings.key(namespace, f"{relative_dir}/{path}")}
        if max_bytes is not None:
            kwargs["Range"] = f"bytes=0-{max_bytes - 1}"
        return self._call(f"{relative_dir}/{path}", lambda: self.client.get_object(**kwargs))["Body"]

    def delete(self, namespace: str, relative_dir: str) -> None:
        """Every object under the folder (a deleted run's)."""
        while True:
            keys = self.list(namespace, relative_dir, 1000)
            if not keys:
                return
            objects = [{"Key": self.settings.key(namespace, f"{relative_dir}/{path}")} for path, _ in keys]
            self._call(f"deleting {relative_dir}", lambda objects=objects: self.client.delete_objects(
                Bucket=self.settings.bucket, Delete={"Objects": objects, "Quiet": True}))
