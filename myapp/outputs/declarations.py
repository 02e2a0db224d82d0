"""Task outputs: what a template declares, where an attempt writes, how a downstream task refers to it.

Pure (no Flask, no database): the catalog, the pipeline save, rendering and the backends all read
the same rules here.

Layout, the same inside every job whatever the backend: the project's outputs volume is mounted
read-only at ``MOUNT``; the attempt's own folder ``MOUNT/<run>/<task>/<attempt>`` is mounted over
it read-write and given as ``MYAPP_OUTPUT_DIR``. A downstream argument says
``{{ tasks.<name>.outputs.<key> }}`` and gets, as plain text, the absolute path of that output in
the upstream attempt that succeeded (the run's own, or the source run's for a rerun's copy).
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from typing import Any

MOUNT = "/myapp/outputs"
VOLUME = "myapp-outputs"  # the pod volume's name, and the project's PersistentVolumeClaim's
ENV = "MYAPP_OUTPUT_DIR"
# Where a pod reading all of the project's outputs (a notebook) finds them: MOUNT, or the host folder where
# the local backend runs it without a sandbox (it rewrites MOUNT in env and argv to that folder).
READ_ENV = "MYAPP_OUTPUTS"
DEFAULT_SIZE = "10Gi"
METRICS_FILE = "metrics.jsonl"  # {"step": 1, "name": "loss", "value": 0.3} per line, read when the attempt ends
KINDS = ("file", "directory", "metrics", "parameter")
KEY = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
# A relative path inside the output folder: no "..", no leading slash, plain characters.
PATH = re.compile(r"(?!.*(^|/)\.\.?(/|$))[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*")
REFERENCE = re.compile(r"\{\{\s*tasks\.([a-z0-9]([-a-z0-9]*[a-z0-9])?)\.outputs\.(" + KEY.pattern + r")\s*\}\}")
# Where a template's declared outputs live: beside its arguments, in its argument schema.
OUTPUTS_KEY = "x-outputs"
# The generic python template: each task lists its own outputs (file names) in this argument.
OWN_OUTPUTS_ARG = "outputs"


class OutputError(ValueError):
    def __init__(self, field: str, reason: str):
        self.field, self.reason = field, reason
        super().__init__(f"{field}: {reason}")


def check_declaration(outputs: Any) -> dict[str, dict[str, str]]:
    """template.yaml ``outputs`` (key -> {type, path, description}) checked; OutputError naming the field."""
    if outputs is None:
        return {}
    if not isinstance(outputs, Mapping):
        raise OutputError("outputs", "must be a mapping of output key -> {type, path}")
    out: dict[str, dict[str, str]] = {}
    for key, spec in outputs.items():
        if not isinstance(key, str) or not KEY.fullmatch(key):
            raise OutputError(f"outputs.{key}", f"keys must match {KEY.pattern}")
        if not isinstance(spec, Mapping) or set(spec) - {"type", "path", "description"}:
            raise OutputError(f"outputs.{key}", "must be a mapping with type, path and description only")
        kind = spec.get("type", "file")
        if kind not in KINDS:
            raise OutputError(f"outputs.{key}.type", f"must be one of {list(KINDS)}, got {kind!r}")
        path = spec.get("path", METRICS_FILE if kind == "metrics" else key)
        if not isinstance(path, str) or not PATH.fullmatch(path):
            raise OutputError(f"outputs.{key}.path", f"must be a relative path inside the output folder, got {path!r}")
        description = spec.get("description", "")
        if not isinstance(description, str):
            raise OutputError(f"outputs.{key}.description", "must be a string")
        out[key] = {"type": kind, "path": path, "description": description}
    return out


def task_outputs(template_outputs: Mapping[str, Any] | None, args: Mapping[str, Any] | None) -> dict[str, str]:
    """Output key -> relative path a task declares: its template's, plus (python) the ones it lists itself."""
    out = {key: spec["path"] for key, spec in (template_outputs or {}).items()}
    own = (args or {}).get(OWN_OUTPUTS_ARG)
    if isinstance(own, list):
        out |= {name: name for name in own if isinstance(name, str) and PATH.fullmatch(name)}
    return out


def references(value: Any, field: str = "args") -> Iterator[tuple[str, str, str]]:
    """(field, upstream task, key) for every output reference inside value (dicts and lists walked)."""
    if isinstance(value, str):
        for match in REFERENCE.finditer(value):
            yield field, match.group(1), match.group(3)
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from references(item, f"{field}.{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from references(item, f"{field}[{index}]")


def attempt_dir(run_id: int | str, task: str, attempt: int) -> str:
    """The attempt's folder, relative to the outputs volume."""
    return f"{run_id}/{task}/{attempt}"


def container_path(relative_dir: str, path: str = "") -> str:
    return f"{MOUNT}/{relative_dir}" + (f"/{path}" if path else "")


def resolve(value: Any, paths: Mapping[tuple[str, str], str]) -> Any:
    """Fill output references with paths[(task, key)]: data substituted, never evaluated.

    An unknown reference stays as written (the save refused it; a rerun keeps its source's rows)."""
    if isinstance(value, str):
        return REFERENCE.sub(lambda m: paths.get((m.group(1), m.group(3)), m.group(0)), value)
    if isinstance(value, Mapping):
        return {k: resolve(v, paths) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, paths) for v in value]
    return value


def sample_paths(value: Any) -> dict[tuple[str, str], str]:
    """Stand-in paths for every reference in value: arguments are checked at save as they will be at run time."""
    return {(task, key): container_path(attempt_dir(1, task, 1), key) for _, task, key in references(value)}


TASK_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def attempt_of(path: str, field: str = "uri") -> tuple[int, str] | None:
    """(run id, attempt folder) of a file in an attempt's folder, given as the path jobs see
    (``MOUNT/<run>/<task>/<attempt>/<file>``, what an output reference resolves to); None for a
    path elsewhere; OutputError naming field for a malformed one under MOUNT."""
    if path != MOUNT and not path.startswith(MOUNT + "/"):
        return None
    parts = path[len(MOUNT) + 1:].split("/", 3)
    if len(parts) < 4 or not parts[0].isdigit() or not TASK_NAME.fullmatch(parts[1]) or not parts[2].isdigit() \
            or not PATH.fullmatch(parts[3]) or len(parts[0]) > 18 or len(parts[2]) > 9:
        raise OutputError(field, f"a task output is {MOUNT}/<run>/<task>/<attempt>/<file>, got {path!r}")
    return int(parts[0]), attempt_dir(int(parts[0]), parts[1], int(parts[2]))


def mount(pod_spec: dict[str, Any], relative_dir: str, claim: str = VOLUME) -> None:
    """Mount the project's outputs volume in every container of a pod: all of it read-only, the
    attempt's own folder read-write over it (kubelet makes the subPath folder), and say where."""
    volumes = [v for v in pod_spec.get("volumes") or [] if v.get("name") != VOLUME]
    pod_spec["volumes"] = [*volumes, {"name": VOLUME, "persistentVolumeClaim": {"claimName": claim}}]
    for group in ("initContainers", "containers"):
        for container in pod_spec.get(group) or []:
            mounts = [m for m in container.get("volumeMounts") or [] if m.get("name") != VOLUME]
            container["volumeMounts"] = [
                *mounts,
                {"name": VOLUME, "mountPath": MOUNT, "readOnly": True},
                {"name": VOLUME, "mountPath": container_path(relative_dir), "subPath": relative_dir},
            ]
            env = [e for e in container.get("env") or [] if e.get("name") != ENV]
            container["env"] = [*env, {"name": ENV, "value": container_path(relative_dir)}]


def mount_read_only(pod_spec: dict[str, Any], relative_dir: str = "") -> None:
    """Mount the project's outputs volume read-only in every container of a long-running pod, at the
    same path tasks see: all of it (a notebook) or one attempt's folder (a model server's model).
    No MYAPP_OUTPUT_DIR: such a pod writes nothing there; one that reads all of it gets MYAPP_OUTPUTS."""
    volumes = [v for v in pod_spec.get("volumes") or [] if v.get("name") != VOLUME]
    pod_spec["volumes"] = [*volumes, {"name": VOLUME, "persistentVolumeClaim": {"claimName": VOLUME, "readOnly": True}}]
    mount_: dict[str, Any] = {"name": VOLUME, "readOnly": True,
                              "mountPath": container_path(relative_dir) if relative_dir else MOUNT}
    if relative_dir:
        mount_["subPath"] = relative_dir
    for group in ("initContainers", "containers"):
        for container in pod_spec.get(group) or []:
            mounts = [m for m in container.get("volumeMounts") or [] if m.get("name") != VOLUME]
            container["volumeMounts"] = [*mounts, dict(mount_)]
            if not relative_dir:
                env = [e for e in container.get("env") or [] if e.get("name") != READ_ENV]
                container["env"] = [*env, {"name": READ_ENV, "value": MOUNT}]


def claim_manifest(namespace: str) -> dict[str, Any]:
    """The project's outputs PersistentVolumeClaim, shared by every pod of the project (ReadWriteMany):
    rendered with each attempt that mounts it (an existing one is adopted) and never deleted with one.
    Storage class and size: MYAPP_OUTPUTS_STORAGE_CLASS (empty: the cluster's default) and
    MYAPP_OUTPUTS_SIZE (10Gi), read at render time like the notebook settings."""
    size = os.environ.get("MYAPP_OUTPUTS_SIZE", "").strip() or DEFAULT_SIZE
    return shared_claim(VOLUME, namespace, size, os.environ.get("MYAPP_OUTPUTS_STORAGE_CLASS", "").strip())


def shared_claim(name: str, namespace: str, size: str, storage_class: str) -> dict[str, Any]:
    """A project's ReadWriteMany PersistentVolumeClaim (empty storage class: the cluster's default)."""
    spec: dict[str, Any] = {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": size}}}
    if storage_class:
        spec["storageClassName"] = storage_class
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def mounted_dir(manifests: list[Mapping[str, Any]]) -> str | None:
    """The attempt folder (relative) the manifests mount read-write, or None."""
    return mounted_subpath(manifests, VOLUME, writable=True)


def mounted_subpath(manifests: list[Mapping[str, Any]], volume: str, *, writable: bool) -> str | None:
    """The first folder (relative) of `volume` a container of the manifests mounts (read-write only, if
    `writable`), or None."""
    for obj in manifests:
        for container in all_containers(obj):
            for mount_ in container.get("volumeMounts") or []:
                if mount_.get("name") == volume and mount_.get("subPath") and not (writable and mount_.get("readOnly")):
                    return str(mount_["subPath"])
    return None


def read_only_dirs(manifests: list[Mapping[str, Any]]) -> list[str]:
    """The folders (relative, "" for all of it) manifests without a read-write attempt folder mount
    read-only (``mount_read_only``): what a local backend binds read-only at their place."""
    if mounted_dir(manifests) is not None:
        return []
    return sorted({str(m.get("subPath") or "") for obj in manifests for container in all_containers(obj)
                   for m in container.get("volumeMounts") or [] if m.get("name") == VOLUME and m.get("readOnly")})


def all_containers(obj: Any) -> Iterator[Mapping[str, Any]]:
    """Every container anywhere inside a manifest (walks the structure: any kind)."""
    if isinstance(obj, Mapping):
        for key, value in obj.items():
            if key in ("containers", "initContainers") and isinstance(value, list):
                yield from (c for c in value if isinstance(c, Mapping))
            else:
                yield from all_containers(value)
    elif isinstance(obj, list):
        for item in obj:
            yield from all_containers(item)
