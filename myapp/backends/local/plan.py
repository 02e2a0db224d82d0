"""Rendered manifests -> a local run plan: the processes to start, with the env operators give.

The plan is plain JSON (``spec.json`` in the attempt's folder) so the supervisor process, and
any later backend instance, read the very same decisions: ports, ranks, TF_CONFIG, commands.
Nothing here starts a process; ``Planner.plan`` only reads manifests, the catalog and the
local secrets folder.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...images.environments import resolve as resolve_environment
from ...outputs.declarations import VOLUME as OUTPUTS_VOLUME
from ...outputs.declarations import mounted_dir, read_only_dirs
from ...rendering.contract import JOB_NAME_LABEL, TEMPLATE_LABEL
from ..base import InvalidManifest, JobRef, ObjectRef, PermanentBackendError, UnsupportedKind
from .gpu import GpuDevice
from .procs import free_ports

GPU_RESOURCE = "nvidia.com/gpu"
KANIKO_IMAGE_PREFIX = "gcr.io/kaniko-project/"
REPLICA_SPECS = {"PyTorchJob": "pytorchReplicaSpecs", "TFJob": "tfReplicaSpecs",
                 "XGBoostJob": "xgbReplicaSpecs", "MPIJob": "mpiReplicaSpecs"}
# Replica types in rank order (the operators give the first rank to Master / Chief).
RANK_ORDER = ("Launcher", "Master", "Chief", "PS", "Worker", "Evaluator")
# Accepted, no local effect: routing, autoscaling, gang scheduling.
NOOP_KINDS = frozenset({"Service", "HorizontalPodAutoscaler", "VirtualService", "DestinationRule", "Gateway",
                        "PodGroup", "PodDisruptionBudget", "NetworkPolicy", "ServiceAccount",
                        # a notebook's member check and work folder: the platform's proxy and the
                        # notebook's folder under the project do these locally
                        "AuthorizationPolicy", "PersistentVolumeClaim"})
# Claims are folders of the project's data folder (Planner.volume_dir): made at submit, removed by a
# cleanup whose objects name them (a notebook's delete).
VOLUME_KINDS = frozenset({"PersistentVolumeClaim"})
# Host environment a replica inherits; nothing else of the platform's own env leaks in.
HOST_ENV = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM", "SHELL",
            "LD_LIBRARY_PATH", "CUDA_HOME", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
            "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy")
PYTHON_NAME = re.compile(r"python(3(\.[0-9]+)?)?")
ENV_REF = re.compile(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)")
SECRET_NAME = re.compile(r"[a-z0-9]([-a-z0-9.]*[a-z0-9])?")
NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")  # a DNS-1123 label, as in Kubernetes
# Folders of the workdir beside the namespaces' own: no project may be called like them.
RESERVED_NAMESPACES = frozenset({"secrets", "configmaps", "data", "outputs"})
SECRET_KEY = re.compile(r"[-._a-zA-Z0-9]+")


class ConfigError(Exception):
    """A container's config cannot be built (K8s: CreateContainerConfigError)."""


@dataclass
class Settings:
    restart_delay: float = 1.0  # first restart delay; doubles per restart (kubelet: 10 s)
    max_restart_delay: float = 300.0
    backoff_reset: float = 600.0  # a replica up this long starts its backoff over (kubelet: 10 min)
    grace_period: float = 10.0  # SIGTERM -> SIGKILL (pod terminationGracePeriodSeconds wins)
    metrics_interval: float = 5.0
    poll_interval: float = 0.05


@dataclass
class Planner:
    workdir: Path
    catalog_root: Path
    python: str = sys.executable
    extra_env: Mapping[str, str] = field(default_factory=dict)
    # Set last, over the container's env: how this host reaches platform services (PLATFORM_API_URL).
    override_env: Mapping[str, str] = field(default_factory=dict)
    devices: Sequence[GpuDevice] = ()
    gpu_source: str = "none"  # "nvml", "injected" or "none"
    settings: Settings = field(default_factory=Settings)
    # Over the host's HOME / TMPDIR / USER when the job runs sandboxed (sandbox.job_env).
    sandbox_env: Mapping[str, str] = field(default_factory=dict)
    which: Callable[[str, str], str | None] = lambda name, path: shutil.which(name, path=path)
    # Built environments (myapp.images.environments): a container whose image is one of its project's runs
    # that environment's python, its bin first on PATH (the backend binds it read-only).
    environments: Path | None = None

    # -- entry --------------------------------------------------------------------------------
    def plan(self, manifests: Sequence[Mapping[str, Any]]) -> tuple[JobRef, dict[str, Any]]:
        if not isinstance(manifests, (list, tuple)) or not manifests:
            raise InvalidManifest("submit needs a non-empty list of manifests")
        workloads: list[Mapping[str, Any]] = []
        data: dict[str, dict[str, dict[str, str]]] = {"Secret": {}, "ConfigMap": {}}
        for obj in manifests:
            if not isinstance(obj, Mapping) or not obj.get("kind") or not (obj.get("metadata") or {}).get("name"):
                raise InvalidManifest("every manifest needs apiVersion, kind and metadata.name")
            kind, api = obj["kind"], obj.get("apiVersion", "")
            if (api, kind) == ("batch.volcano.sh/v1alpha1", "Job"):
                raise UnsupportedKind("Volcano Job needs the Volcano scheduler of a Kubernetes cluster; "
                                      "the local backend cannot run it (use the Kubernetes backend)")
            if (api, kind) in (("batch/v1", "Job"), ("apps/v1", "Deployment")) or \
                    (api.startswith("kubeflow.org/") and (kind in REPLICA_SPECS or kind == "Notebook")):
                workloads.append(obj)
            elif kind in ("Secret", "ConfigMap") and api == "v1":
                data[kind][obj["metadata"]["name"]] = _object_data(obj)
            elif kind not in NOOP_KINDS:
                raise UnsupportedKind(f"{kind} ({api}) has no local equivalent; use the Kubernetes backend")
        if len(workloads) != 1:
            names = ", ".join(f"{o['kind']}/{o['metadata']['name']}" for o in workloads) or "none"
            raise InvalidManifest(f"the local backend runs exactly one workload per submit, got {names}")
        workload = workloads[0]
        return self._plan(workload, manifests, data)

    def _plan(self, obj: Mapping[str, Any], manifests: Sequence[Mapping[str, Any]],
              data: dict[str, dict[str, dict[str, str]]]) -> tuple[JobRef, dict[str, Any]]:
        kind, meta, spec = obj["kind"], obj["metadata"], obj.get("spec") or {}
        namespace = meta.get("namespace") or "default"
        groups = self._replica_groups(obj)
        first = groups[0][1]
        job_name = ((first.get("metadata") or {}).get("labels") or {}).get(JOB_NAME_LABEL) or meta["name"]
        if not NAMESPACE.fullmatch(namespace) or namespace in RESERVED_NAMESPACES:
            raise InvalidManifest(f"{namespace!r} is not a valid namespace here (a DNS-1123 label, not one of "
                               f"{', '.join(sorted(RESERVED_NAMESPACES))})")
        if not SECRET_NAME.fullmatch(job_name) or len(job_name) > 253:
            raise InvalidManifest(f"{job_name!r} is not a valid job name")
        template = (meta.get("labels") or {}).get(TEMPLATE_LABEL, "")
        entry = EntryMap(self.catalog_root / template if template else None)
        cwd = self.workdir / namespace / job_name
        ref = JobRef(backend="local", namespace=namespace, job_name=job_name,
                     primary=_object_ref(obj, namespace),
                     objects=tuple(_object_ref(o, namespace) for o in manifests))

        run = {"version": 1, "namespace": namespace, "job_name": job_name, "kind": kind,
               "api_version": obj.get("apiVersion", ""), "name": meta["name"], "template": template,
               "cwd": str(cwd), "failure": None, "notes": [],
               "gpu": {"devices": [d.as_dict() for d in self.devices], "source": self.gpu_source},
               "settings": vars(self.settings).copy()}
        if kind == "Job":
            run.update(mode="batch", backoff_limit=spec.get("backoffLimit", 6),
                       active_deadline=spec.get("activeDeadlineSeconds") or None)
        elif kind in REPLICA_SPECS:
            policy = spec.get("runPolicy") or {}
            run.update(mode="training", backoff_limit=policy.get("backoffLimit"),
                       active_deadline=policy.get("activeDeadlineSeconds") or None)
        else:  # Deployment, Notebook: long-running, restarted forever
            run.update(mode="service", backoff_limit=None, active_deadline=None)

        replicas: list[dict[str, Any]] = []
        for rtype, template_spec, count, restart in groups:
            for index in range(count):
                replicas.append({"name": f"{rtype.lower()}-{index}", "type": rtype, "index": index,
                                 "restart_policy": restart, "pod": template_spec})
        self._check_runnable(kind, replicas)
        operator_env = self._operator_env(obj, replicas)
        run["replicas"] = []
        for replica in replicas:
            try:
                run["replicas"].append(self._replica(run, replica, entry, operator_env.get(replica["name"], {}),
                                                     data, cwd))
            except ConfigError as exc:
                run["failure"] = f"CreateContainerConfigError: {replica['name']}: {exc}"
                run["replicas"].append({"name": replica["name"], "type": replica["type"],
                                        "index": replica["index"], "restart_policy": replica["restart_policy"],
                                        "containers": [], "gpus": 0, "ports": {}, "ready": None, "url": None})
        run["success"] = _success_replicas(kind, run["replicas"])
        # The attempt's folder on the project's outputs volume: the backend binds it (myapp/outputs/declarations.py).
        run["outputs_dir"] = mounted_dir([obj])
        run["outputs_read"] = read_only_dirs([obj])  # a notebook's or model server's read-only view of it
        return ref, run

    # -- replicas -----------------------------------------------------------------------------
    def _replica_groups(self, obj: Mapping[str, Any]) -> list[tuple[str, dict[str, Any], int, str]]:
        """(type, pod template, count, restart policy) per replica type, in rank order."""
        kind, spec = obj["kind"], obj.get("spec") or {}
        if kind == "Job":
            template = spec["template"]
            return [("Job", template, int(spec.get("parallelism", 1)),
                     (template.get("spec") or {}).get("restartPolicy", "Never"))]
        if kind == "Deployment":
            return [("Deployment", spec["template"], int(spec.get("replicas", 1)), "Always")]
        if kind == "Notebook":
            return [("Notebook", spec["template"], 1, "Always")]
        specs = spec.get(REPLICA_SPECS[kind]) or {}
        order = {name: i for i, name in enumerate(RANK_ORDER)}
        groups = []
        for rtype in sorted(specs, key=lambda t: (order.get(t, len(order)), t)):
            rspec = specs[rtype]
            if kind == "MPIJob" and rtype == "Worker":
                continue  # MPI workers only sleep; mpirun starts the ranks on this host
            groups.append((rtype, rspec["template"], int(rspec.get("replicas", 1)),
                           rspec.get("restartPolicy", "Never")))
        if not groups:
            raise InvalidManifest(f"{kind} {obj['metadata']['name']} has no replicas")
        return groups

    def _check_runnable(self, kind: str, replicas: list[dict[str, Any]]) -> None:
        for replica in replicas:
            pod = replica["pod"].get("spec") or {}
            containers = pod.get("containers") or []
            for container in (pod.get("initContainers") or []) + containers:
                if str(container.get("image", "")).startswith(KANIKO_IMAGE_PREFIX):
                    raise UnsupportedKind(
                        "image builds run Kaniko inside a Kubernetes pod; the local backend has no container "
                        "runtime to build images with (use the Kubernetes backend)")
                if not container.get("command") and kind != "Notebook":
                    raise UnsupportedKind(
                        f"container {container.get('name')!r} has no command: the entrypoint of image "
                        f"{container.get('image')!r} cannot run without a container runtime")
            if len(containers) != 1:
                raise UnsupportedKind(f"pods with {len(containers)} containers (sidecars) do not run locally")
        if kind == "MPIJob" and not self.which("mpirun", self._path()):
            raise UnsupportedKind("MPIJob needs mpirun on this host (install Open MPI) or a Kubernetes cluster")

    def _operator_env(self, obj: Mapping[str, Any], replicas: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
        """What the training operators inject, with loopback addresses and free ports."""
        kind, spec = obj["kind"], obj.get("spec") or {}
        out: dict[str, dict[str, str]] = {}
        if kind in ("PyTorchJob", "XGBoostJob"):
            (port,) = free_ports(1)
            nproc = spec.get("nprocPerNode")
            per_node = int(nproc) if isinstance(nproc, int) or (isinstance(nproc, str) and nproc.isdigit()) else 1
            world = len(replicas) * per_node
            workers = [r for r in replicas if r["type"] != "Master"]
            for rank, replica in enumerate(replicas):
                env = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "WORLD_SIZE": str(world),
                       "RANK": str(rank)}
                if kind == "PyTorchJob":
                    env.update(PET_MASTER_ADDR="127.0.0.1", PET_MASTER_PORT=str(port),
                               PET_NNODES=str(len(replicas)), PET_NODE_RANK=str(rank),
                               PET_NPROC_PER_NODE=str(nproc) if nproc is not None else "1")
                else:
                    env.update(WORKER_PORT=str(port), WORKER_ADDRS=",".join("127.0.0.1" for _ in workers))
                out[replica["name"]] = env
        elif kind == "TFJob":
            ports = free_ports(len(replicas))
            cluster: dict[str, list[str]] = {}
            for replica, port in zip(replicas, ports, strict=True):
                if replica["type"].lower() != "evaluator":
                    cluster.setdefault(replica["type"].lower(), []).append(f"127.0.0.1:{port}")
            for replica in replicas:
                config = {"cluster": cluster, "task": {"type": replica["type"].lower(), "index": replica["index"]},
                          "environment": "cloud"}
                out[replica["name"]] = {"TF_CONFIG": json.dumps(config, separators=(",", ":"))}
        return out

    def _replica(self, run: dict[str, Any], replica: dict[str, Any], entry: EntryMap,
                 operator_env: dict[str, str], data: dict[str, dict[str, dict[str, str]]],
                 cwd: Path) -> dict[str, Any]:
        pod_meta, pod = replica["pod"].get("metadata") or {}, replica["pod"].get("spec") or {}
        pod_name = f"{run['name']}-{replica['type'].lower()}-{replica['index']}" \
            if run["mode"] == "training" else f"{run['name']}-{replica['index']}"
        main = pod["containers"][0]
        gpus = int(str((main.get("resources", {}).get("limits") or {}).get(GPU_RESOURCE, 0)) or 0)
        container_ports = [p for p in (main.get("ports") or []) if "containerPort" in p]
        ports: dict[str, int] = {}
        remap: dict[int, int] = {}
        if run["mode"] == "service" and container_ports:
            for port, host in zip(container_ports, free_ports(len(container_ports)), strict=True):
                ports[port.get("name") or str(port["containerPort"])] = host
                remap[int(port["containerPort"])] = host
        pod_info = {"name": pod_name, "namespace": run["namespace"], "labels": pod_meta.get("labels") or {},
                    "annotations": pod_meta.get("annotations") or {},
                    "service_account": pod.get("serviceAccountName", "")}
        containers = []
        for init, container in [(True, c) for c in pod.get("initContainers") or []] + [(False, main)]:
            env = self._env(container, pod_info, operator_env if not init else {}, data)
            env["HOSTNAME"] = pod_name
            python = self._environment(run, str(container.get("image") or ""), env)
            argv = [_expand(a, env) for a in list(container.get("command") or []) + list(container.get("args") or [])]
            argv = self._argv(argv, entry, run["kind"] == "MPIJob", python)
            if remap:
                argv, env = _remap_ports(argv, env, remap)
            containers.append({"name": container.get("name", ""), "init": init, "argv": argv, "env": env})
        result = {"name": replica["name"], "type": replica["type"], "index": replica["index"],
                  "hostname": pod_name, "restart_policy": replica["restart_policy"], "gpus": gpus, "ports": ports,
                  "containers": containers, "ready": None, "url": None,
                  "grace_period": pod.get("terminationGracePeriodSeconds")}
        if run["kind"] == "Notebook":
            self._notebook(run, result, pod, cwd)
        elif run["mode"] == "service":
            result["ready"] = _readiness(main, remap)
            if ports:
                name = "http" if "http" in ports else next(iter(ports))
                result["url"] = f"http://127.0.0.1:{ports[name]}"
        for path in _missing_paths(containers[-1]["argv"]):
            raise PermanentBackendError(
                f"{replica['name']}: {path} is inside the image and has no local copy; the local backend runs "
                f"commands on the host (template folder: {entry.folder or 'none'})")
        return result

    def _notebook(self, run: dict[str, Any], replica: dict[str, Any], pod: Mapping[str, Any], cwd: Path) -> None:
        """JupyterLab on a loopback port. Its token is the manifest's JUPYTER_TOKEN (the notebook's
        Secret), else a random one, passed in the environment (never in argv, which `ps` shows); its
        root is the work claim's folder (`volume_dir`), kept when the attempt is cleaned up."""
        container = replica["containers"][-1]
        env = container["env"]
        module = next((m for m in ("jupyterlab", "jupyter_server") if self._importable(m, env)), None)
        if module is None:
            raise UnsupportedKind("a local notebook needs Jupyter in the host Python "
                                  f"({self.python}): pip install jupyterlab; the notebook image is not used locally")
        (port,) = free_ports(1)
        env["JUPYTER_TOKEN"] = env.get("JUPYTER_TOKEN") or secrets.token_urlsafe(24)
        if env.get("VIRTUAL_ENV"):  # the image is a built environment: its kernel imports its packages
            env["JUPYTER_PATH"] = str(self._kernel_spec(Path(env["VIRTUAL_ENV"])))
        prefix = (env.get("NB_PREFIX") or "").rstrip("/")
        mounts = self._claim_mounts(run["namespace"], pod, container_spec=pod["containers"][0])
        root = cwd
        if mounts:
            top = min(mounts, key=len)
            root = Path(mounts[top])
            # Claims mounted inside the work folder (an existing volume at /home/jovyan/volume) appear
            # there as links to their folders (the sandbox shows the project's data folder at its path).
            run["links"] = [[str(root / os.path.relpath(path, top)), folder]
                            for path, folder in mounts.items() if path != top and path.startswith(top + "/")]
            run["volumes"] = sorted(set(mounts.values()))
        env["HOME"] = str(root) if mounts else env.get("HOME", "/tmp")
        # Jupyter's config, data (its cookie secret) and runtime folders: in the sandbox's private /tmp (a
        # fresh name, should isolation be off), never the work folder the project's jobs and members write;
        # the platform's settings (browser requests keep the XSRF check) from the read-only catalog.
        private = f"/tmp/myapp-jupyter-{secrets.token_hex(8)}"
        env.update(JUPYTER_CONFIG_DIR=f"{private}/config", JUPYTER_DATA_DIR=f"{private}/data",
                   JUPYTER_RUNTIME_DIR=f"{private}/runtime", PYTHONNOUSERSITE="1")
        container["argv"] = [self.python, "-m", module, "--no-browser", "--ip=127.0.0.1", f"--port={port}",
                             "--ServerApp.password=", f"--ServerApp.base_url={prefix}/",
                             f"--ServerApp.root_dir={root}", "--ServerApp.allow_remote_access=False",
                             f"--config={self.catalog_root / 'notebook' / 'jupyter_server_config.py'}"]
        replica["ports"] = {"notebook": port}
        replica["ready"] = {"type": "http", "port": port, "path": f"{prefix}/api"}  # answers without the token
        replica["url"] = f"http://127.0.0.1:{port}{prefix}/{'lab' if module == 'jupyterlab' else ''}"

    def _kernel_spec(self, venv: Path) -> Path:
        """The `python3` kernel of a notebook whose image is a built environment. Environments hold no
        Jupyter of their own, so the kernel is the host's ipykernel with the environment's site-packages
        ahead of the host's (same Python version: the content hash includes it). Written next to the
        environment, which the platform owns and jobs see read-only; the folder goes on JUPYTER_PATH,
        which Jupyter searches before its own kernels."""
        share = venv / "share" / "jupyter"
        spec = {"argv": [self.python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                "display_name": "Python 3 (environment)", "language": "python",
                "env": {"PYTHONPATH": os.pathsep.join(str(p) for p in sorted(venv.glob("lib/python*/site-packages"))),
                        "VIRTUAL_ENV": str(venv)}}
        folder = share / "kernels" / "python3"
        folder.mkdir(parents=True, exist_ok=True)
        for made in (venv / "share", share, share / "kernels", folder):  # the job's uid reads them (umask aside)
            made.chmod(0o755)
        tmp = folder / f".kernel.json.{os.getpid()}"
        tmp.write_text(json.dumps(spec, indent=1, sort_keys=True))
        tmp.chmod(0o644)
        os.replace(tmp, folder / "kernel.json")  # whole or not at all: other notebooks read it
        return share

    def volume_dir(self, namespace: str, claim: str) -> Path:
        """A PersistentVolumeClaim's local folder: in the project's data folder, outliving attempts."""
        if not SECRET_NAME.fullmatch(claim):
            raise InvalidManifest(f"invalid claim name {claim!r}")
        return self.workdir / "data" / namespace / "volumes" / claim

    def _claim_mounts(self, namespace: str, pod: Mapping[str, Any],
                      container_spec: Mapping[str, Any]) -> dict[str, str]:
        """{mount path: host folder} of the container's PersistentVolumeClaim mounts."""
        claims = {v["name"]: v["persistentVolumeClaim"]["claimName"] for v in pod.get("volumes") or []
                  if (v.get("persistentVolumeClaim") or {}).get("claimName") and v["name"] != OUTPUTS_VOLUME}
        return {os.path.normpath(m["mountPath"]): str(self.volume_dir(namespace, claims[m["name"]]))
                for m in container_spec.get("volumeMounts") or [] if m.get("name") in claims}

    # -- env ----------------------------------------------------------------------------------
    def _path(self) -> str:
        return os.pathsep.join([str(Path(self.python).parent), os.environ.get("PATH", "/usr/bin:/bin")])

    def base_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k in HOST_ENV or k.startswith("LC_")}
        env["PATH"] = self._path()
        env.update(self.sandbox_env)
        env.update(self.extra_env)
        return env

    def _env(self, container: Mapping[str, Any], pod: Mapping[str, Any], operator_env: Mapping[str, str],
             data: dict[str, dict[str, dict[str, str]]]) -> dict[str, str]:
        defined: dict[str, str] = {}
        for source in container.get("envFrom") or []:
            prefix = source.get("prefix", "")
            for kind, key in (("Secret", "secretRef"), ("ConfigMap", "configMapRef")):
                if key in source:
                    ref = source[key]
                    values = self._all_values(kind, pod["namespace"], ref["name"], data, ref.get("optional", False))
                    defined.update({prefix + k: v for k, v in values.items()})
        for item in container.get("env") or []:
            name = item["name"]
            if "valueFrom" in item:
                value = self._value_from(item["valueFrom"], container, pod, data)
                if value is None:
                    continue
                defined[name] = value
            else:
                defined[name] = _expand(str(item.get("value", "")), defined)
        env = self.base_env()
        env.update(defined)
        env.update(operator_env)
        env.update(self.override_env)
        return env

    def _value_from(self, source: Mapping[str, Any], container: Mapping[str, Any], pod: Mapping[str, Any],
                    data: dict[str, dict[str, dict[str, str]]]) -> str | None:
        for kind, key in (("Secret", "secretKeyRef"), ("ConfigMap", "configMapKeyRef")):
            if key in source:
                ref = source[key]
                return self._value(kind, pod["namespace"], ref["name"], ref["key"], data, ref.get("optional", False))
        if "fieldRef" in source:
            path = source["fieldRef"]["fieldPath"]
            match = re.fullmatch(r"metadata\.(labels|annotations)\['([^']+)'\]", path)
            if match:
                return pod[match.group(1)].get(match.group(2), "")
            fields = {"metadata.name": pod["name"], "metadata.namespace": pod["namespace"],
                      "spec.nodeName": socket.gethostname(), "spec.serviceAccountName": pod["service_account"],
                      "status.podIP": "127.0.0.1", "status.hostIP": "127.0.0.1"}
            if path not in fields:
                raise ConfigError(f"fieldRef {path} is not available locally")
            return fields[path]
        if "resourceFieldRef" in source:
            resource = source["resourceFieldRef"]["resource"]
            section, _, name = resource.partition(".")
            value = str(((container.get("resources") or {}).get(section) or {}).get(name, "0"))
            return value
        raise ConfigError(f"unsupported valueFrom {sorted(source)}")

    def _folder(self, kind: str, namespace: str, name: str) -> Path:
        """Per project: a job reads only its own namespace's secrets and configmaps."""
        if not SECRET_NAME.fullmatch(name):
            raise ConfigError(f"invalid {kind.lower()} name {name!r}")
        return self.workdir / ("secrets" if kind == "Secret" else "configmaps") / namespace / name

    def _value(self, kind: str, namespace: str, name: str, key: str, data: dict[str, dict[str, dict[str, str]]],
               optional: bool) -> str | None:
        if key in data[kind].get(name, {}):
            return data[kind][name][key]
        if not SECRET_KEY.fullmatch(key) or key in (".", ".."):
            raise ConfigError(f"invalid {kind.lower()} key {key!r}")
        path = self._folder(kind, namespace, name) / key
        try:
            value = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            if optional:
                return None
            raise ConfigError(f"{kind.lower()} {name!r} key {key!r} not found: create the file {path}") from None
        return value[:-1] if value.endswith("\n") else value  # `echo token > file` leaves a newline

    def _all_values(self, kind: str, namespace: str, name: str, data: dict[str, dict[str, dict[str, str]]],
                    optional: bool) -> dict[str, str]:
        if name in data[kind]:
            return dict(data[kind][name])
        folder = self._folder(kind, namespace, name)
        if not folder.is_dir():
            if optional:
                return {}
            raise ConfigError(f"{kind.lower()} {name!r} not found: create the folder {folder} (one file per key)")
        return {p.name: self._value(kind, namespace, name, p.name, data, False) or ""
                for p in sorted(folder.iterdir()) if p.is_file() and SECRET_KEY.fullmatch(p.name)}

    def _importable(self, module: str, env: Mapping[str, str]) -> bool:
        try:
            # Found, not imported: importing JupyterLab costs a second or more of CPU at every start.
            return subprocess.run([self.python, "-c", "import importlib.util, sys; "
                                   f"sys.exit(importlib.util.find_spec({module!r}) is None)"],
                                  env=dict(env), capture_output=True, timeout=60).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            return False

    # -- argv ---------------------------------------------------------------------------------
    def _environment(self, run: dict[str, Any], image: str, env: dict[str, str]) -> str:
        """The python a container's image stands for: its project's environment of that image, else the host's."""
        found = resolve_environment(image, run["namespace"], self.environments) if self.environments and image \
            else None
        if found is None:
            return self.python
        env["PATH"] = os.pathsep.join([str(found.bin), env.get("PATH", "")])
        env["VIRTUAL_ENV"] = str(found.path)
        if str(found.path) not in run.setdefault("environments", []):
            run["environments"].append(str(found.path))
        return str(found.python)

    def _argv(self, argv: list[str], entry: EntryMap, every_python: bool, python: str | None = None) -> list[str]:
        out = []
        for index, token in enumerate(argv):
            if (index == 0 or every_python) and PYTHON_NAME.fullmatch(os.path.basename(token)):
                out.append(python or self.python)  # the image's interpreter: its environment's, or the host's
            else:
                out.append(entry.map(token))
        return out


class EntryMap:
    """Container paths -> host paths, from the ``COPY``/``ADD`` lines of a template's Dockerfile.

    ``COPY main.py /app/main.py`` makes ``/app/main.py`` mean ``<catalog>/<template>/main.py``.
    """

    def __init__(self, folder: Path | None):
        self.folder = folder if folder is not None and folder.is_dir() else None
        self.files: dict[str, Path] = {}
        self.dirs: dict[str, Path] = {}
        dockerfile = self.folder / "Dockerfile" if self.folder else None
        if self.folder is not None and dockerfile is not None and dockerfile.is_file():
            self._parse(self.folder, dockerfile.read_text(encoding="utf-8"))

    def _parse(self, folder: Path, text: str) -> None:
        workdir = "/"
        for line in re.sub(r"\\\n", " ", text).splitlines():
            words = line.strip().split(None, 1)
            if len(words) < 2 or words[0].startswith("#"):
                continue
            instruction, rest = words[0].upper(), words[1].strip()
            if instruction == "WORKDIR":
                workdir = os.path.normpath(os.path.join(workdir, rest))
            elif instruction in ("COPY", "ADD"):
                try:
                    tokens = json.loads(rest) if rest.startswith("[") else shlex.split(rest)
                except ValueError:
                    continue
                flags = [t for t in tokens if t.startswith("--")]
                tokens = [t for t in tokens if not t.startswith("--")]
                if any(f.startswith("--from") for f in flags) or len(tokens) < 2:
                    continue  # multi-stage copies come from another image
                *sources, dest = tokens
                dest_abs = os.path.normpath(os.path.join(workdir, dest))
                for source in sources:
                    host = (folder / source).resolve()
                    if not str(host).startswith(str(folder.resolve())) or "://" in source:
                        continue
                    if host.is_dir():
                        self.dirs[dest_abs] = host
                    elif host.is_file():
                        target = dest_abs if len(sources) == 1 and not dest.endswith("/") \
                            else os.path.join(dest_abs, os.path.basename(source))
                        self.files[target] = host

    def map(self, token: str) -> str:
        if token in self.files:
            return str(self.files[token])
        for container_dir, host in self.dirs.items():
            if token == container_dir or token.startswith(container_dir.rstrip("/") + "/"):
                return str(host / os.path.relpath(token, container_dir))
        return token


def _object_ref(obj: Mapping[str, Any], namespace: str) -> ObjectRef:
    meta = obj["metadata"]
    return ObjectRef(obj.get("apiVersion", ""), obj["kind"], meta.get("namespace") or namespace, meta["name"])


def _object_data(obj: Mapping[str, Any]) -> dict[str, str]:
    import base64

    out = {}
    for key, value in (obj.get("data") or {}).items():
        out[key] = base64.b64decode(value).decode("utf-8", "replace") if obj["kind"] == "Secret" else str(value)
    out.update({k: str(v) for k, v in (obj.get("stringData") or {}).items()})
    return out


def _expand(text: str, env: Mapping[str, str]) -> str:
    """Kubernetes ``$(VAR)`` expansion: defined variables only; ``$$`` escapes a ``$``."""
    def sub(match: re.Match[str]) -> str:
        if match.group(0) == "$$":
            return "$"
        return env.get(match.group(1), match.group(0))
    return ENV_REF.sub(sub, text)


def _remap_ports(argv: list[str], env: dict[str, str], remap: Mapping[int, int]) -> tuple[list[str], dict[str, str]]:
    """No network namespace locally: a server told to listen on its containerPort (``--port 8080``,
    ``--port=8080`` or a ``*PORT*`` env var) listens on the host port chosen for it instead."""
    out = list(argv)
    for index, token in enumerate(out):
        flag, eq, value = token.partition("=")
        if eq and "port" in flag.lower() and value.isdigit() and int(value) in remap:
            out[index] = f"{flag}={remap[int(value)]}"
        elif index > 0 and token.isdigit() and int(token) in remap and argv[index - 1].startswith("-") \
                and "=" not in argv[index - 1] and "port" in argv[index - 1].lower():
            out[index] = str(remap[int(token)])
    env = {k: (str(remap[int(v)]) if "PORT" in k.upper() and v.isdigit() and int(v) in remap else v)
           for k, v in env.items()}
    return out, env


def _readiness(container: Mapping[str, Any], remap: Mapping[int, int]) -> dict[str, Any] | None:
    probe = container.get("readinessProbe") or {}
    named = {p.get("name"): int(p["containerPort"]) for p in container.get("ports") or [] if "containerPort" in p}

    def host_port(port: Any) -> int | None:
        number = named.get(port) if isinstance(port, str) and not port.isdigit() else int(port)
        return remap.get(number, number) if number is not None else None

    if "httpGet" in probe:
        return {"type": "http", "port": host_port(probe["httpGet"].get("port")),
                "path": probe["httpGet"].get("path", "/")}
    if "tcpSocket" in probe:
        return {"type": "tcp", "port": host_port(probe["tcpSocket"].get("port"))}
    return None  # ready as soon as the process runs


def _missing_paths(argv: list[str]) -> list[str]:
    """``python /app/main.py``: the script must exist on the host after mapping."""
    if len(argv) >= 2 and PYTHON_NAME.fullmatch(os.path.basename(argv[0])) and argv[1].startswith("/") \
            and not os.path.exists(argv[1]):
        return [argv[1]]
    return []


def _success_replicas(kind: str, replicas: list[dict[str, Any]]) -> list[str]:
    """Replicas whose success is the job's success (the operators' default success policies)."""
    types = {r["type"] for r in replicas}
    leader = {"PyTorchJob": ("Master",), "XGBoostJob": ("Master",), "TFJob": ("Chief", "Master"),
              "MPIJob": ("Launcher",)}.get(kind, ())
    for rtype in leader:
        if rtype in types:
            return [r["name"] for r in replicas if r["type"] == rtype]
    if kind == "TFJob":  # no chief: worker 0 decides
        return [r["name"] for r in replicas if r["type"] == "Worker" and r["index"] == 0]
    if kind in ("Deployment", "Notebook"):
        return []
    return [r["name"] for r in replicas]  # Job, or training without a master: all of them
