"""Rendered manifests -> a local run plan: the processes to start, with the env operators give.

The plan is plain JSON (``spec.json`` in the attempt's folder) so the supervisor process, and
any later backend instance, read the very same decisions: ports, ranks, TF_CONFIG, commands.
Nothing here starts a process; ``Planner.plan`` only reads manifests, the catalog and the
local secrets folder. A container's environment is built by ``container_env.py`` (a mixin of Planner),
its command mapped to this host by ``commands.py``; this module turns manifests into replicas: kinds,
ranks and operator env, mounts and claims, notebooks, the plan itself.
"""
from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...images.environments import Environment
from ...images.environments import resolve as resolve_environment
from ...outputs import checkpoints
from ...outputs.declarations import VOLUME as OUTPUTS_VOLUME
from ...outputs.declarations import mounted_dir, read_only_dirs
from ...rendering.contract import JOB_NAME_LABEL, TEMPLATE_LABEL
from ..base import InvalidManifest, JobRef, ObjectRef, PermanentBackendError, UnsupportedKind
from .commands import PYTHON_NAME, EntryMap, missing_paths, readiness, remap_ports
from .container_env import SECRET_NAME, ConfigError, ContainerEnv, expand, object_data
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
NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")  # a DNS-1123 label, as in Kubernetes
# Folders of the workdir beside the namespaces' own: no project may be called like them.
RESERVED_NAMESPACES = frozenset({"secrets", "configmaps", "data", "outputs"})
# A local notebook's own package layer, in its work folder (Planner._layer, job-templates/notebook/local_start.py).
LAYER = ".myapp-venv"


@dataclass
class Settings:
    restart_delay: float = 1.0  # first restart delay; doubles per restart (kubelet: 10 s)
    max_restart_delay: float = 300.0
    backoff_reset: float = 600.0  # a replica up this long starts its backoff over (kubelet: 10 min)
    grace_period: float = 10.0  # SIGTERM -> SIGKILL (pod terminationGracePeriodSeconds wins)
    metrics_interval: float = 5.0
    poll_interval: float = 0.05


@dataclass
class Planner(ContainerEnv):
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
                data[kind][obj["metadata"]["name"]] = object_data(obj)
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
                       active_deadline=policy.get("activeDeadlineSeconds") or None,
                       elastic=_elastic_range(spec, groups) if kind == "PyTorchJob" else None)
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
        run["checkpoint_dir"] = checkpoints.mounted_dir([obj])  # the task's, kept across attempts
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
            argv = [expand(a, env) for a in list(container.get("command") or []) + list(container.get("args") or [])]
            argv = self._argv(argv, entry, run["kind"] == "MPIJob", python)
            if remap:
                argv, env = remap_ports(argv, env, remap)
            containers.append({"name": container.get("name", ""), "init": init, "argv": argv, "env": env})
        result = {"name": replica["name"], "type": replica["type"], "index": replica["index"],
                  "hostname": pod_name, "restart_policy": replica["restart_policy"], "gpus": gpus, "ports": ports,
                  "containers": containers, "ready": None, "url": None,
                  "grace_period": pod.get("terminationGracePeriodSeconds")}
        if run["kind"] == "Notebook":
            self._notebook(run, result, pod, cwd)
        elif run["mode"] == "service":
            result["ready"] = readiness(main, remap)
            if ports:
                name = "http" if "http" in ports else next(iter(ports))
                result["url"] = f"http://127.0.0.1:{ports[name]}"
        for path in missing_paths(containers[-1]["argv"]):
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
        self._layer(env, root)
        folder = self.catalog_root / "notebook"
        container["argv"] = [self.python, str(folder / "local_start.py"), "--",
                             self.python, "-m", module, "--no-browser", "--ip=127.0.0.1", f"--port={port}",
                             "--ServerApp.password=", f"--ServerApp.base_url={prefix}/",
                             f"--ServerApp.root_dir={root}", "--ServerApp.allow_remote_access=False",
                             f"--config={folder / 'jupyter_server_config.py'}"]
        replica["ports"] = {"notebook": port}
        replica["ready"] = {"type": "http", "port": port, "path": f"{prefix}/api"}  # answers without the token
        replica["url"] = f"http://127.0.0.1:{port}{prefix}/{'lab' if module == 'jupyterlab' else ''}"

    def _layer(self, env: dict[str, str], root: Path) -> None:
        """The notebook's own package layer, a venv in its work folder (made by local_start.py in the
        sandbox): its site-packages first, then its image's environment, then the platform's Python. The
        terminal and the kernel both run its `python` (VIRTUAL_ENV, first on PATH), so what `pip install`
        adds in either lands in this notebook's work folder, never in the shared environment."""
        layer = root / LAYER
        sites: list[str] = []
        if env.get("VIRTUAL_ENV"):  # the image is a built environment (_environment)
            venv = Path(env["VIRTUAL_ENV"])
            sites += [str(p) for p in Environment(venv.name, venv).site_dirs()]
        sites += [s for s in self._host_sites() if s not in sites]
        env["PATH"] = os.pathsep.join([str(layer / "bin"), env.get("PATH", "")])
        env.pop("PIP_USER", None)  # the Notebook's, for images without a layer: pip refuses --user in a venv
        env.update(VIRTUAL_ENV=str(layer), MYAPP_NOTEBOOK_LAYER=str(layer), MYAPP_NOTEBOOK_SITES=os.pathsep.join(sites))

    def _host_sites(self) -> list[str]:
        """The site-packages of the platform's Python (jobs see them read-only): JupyterLab, ipykernel, pip."""
        code = "import json, sysconfig; p = sysconfig.get_paths(); print(json.dumps([p['purelib'], p['platlib']]))"
        if os.path.realpath(self.python) == os.path.realpath(sys.executable):
            paths = sysconfig.get_paths()
            found = [paths["purelib"], paths["platlib"]]
        else:
            found = json.loads(subprocess.run([self.python, "-c", code], capture_output=True, text=True, timeout=60,
                                              env={}, check=True).stdout)
        return list(dict.fromkeys(str(p) for p in found))

    def volume_dir(self, namespace: str, claim: str) -> Path:
        """A PersistentVolumeClaim's local folder: in the project's data folder, outliving attempts."""
        if not SECRET_NAME.fullmatch(claim):
            raise InvalidManifest(f"invalid claim name {claim!r}")
        return self.workdir / "data" / namespace / "volumes" / claim

    def _claim_mounts(self, namespace: str, pod: Mapping[str, Any],
                      container_spec: Mapping[str, Any]) -> dict[str, str]:
        """{mount path: host folder} of the container's PersistentVolumeClaim mounts."""
        claims = {v["name"]: v["persistentVolumeClaim"]["claimName"] for v in pod.get("volumes") or []
                  if (v.get("persistentVolumeClaim") or {}).get("claimName")
                  and v["name"] not in (OUTPUTS_VOLUME, checkpoints.VOLUME)}
        return {os.path.normpath(m["mountPath"]): str(self.volume_dir(namespace, claims[m["name"]]))
                for m in container_spec.get("volumeMounts") or [] if m.get("name") in claims}

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
            if index == 0 and token == "torchrun":  # elastic PyTorch: torchrun is the job's python's torch
                out += [python or self.python, "-m", "torch.distributed.run"]
            elif (index == 0 or every_python) and PYTHON_NAME.fullmatch(os.path.basename(token)):
                out.append(python or self.python)  # the image's interpreter: its environment's, or the host's
            else:
                out.append(entry.map(token))
        return out


def _object_ref(obj: Mapping[str, Any], namespace: str) -> ObjectRef:
    meta = obj["metadata"]
    return ObjectRef(obj.get("apiVersion", ""), obj["kind"], meta.get("namespace") or namespace, meta["name"])


def _elastic_range(spec: Mapping[str, Any], groups: list[tuple[str, dict[str, Any], int, str]]
                   ) -> dict[str, int] | None:
    """A PyTorchJob's elasticPolicy as {min, max} replicas, defaulted as the operator does (one bound from the
    other, both from the Workers' count), or None when it is not elastic (the supervisor: exits.py)."""
    policy = spec.get("elasticPolicy")
    if not isinstance(policy, Mapping):
        return None
    low: Any = policy.get("minReplicas")
    high: Any = policy.get("maxReplicas")
    if low is None and high is None:
        low = high = next((count for rtype, _, count, _ in groups if rtype == "Worker"), 0)
    low, high = (high if low is None else low), (low if high is None else high)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (low, high)) or not 0 <= low <= high:
        raise InvalidManifest(f"elasticPolicy needs whole numbers 0 <= minReplicas <= maxReplicas, got {dict(policy)}")
    return {"min": low, "max": high}


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
