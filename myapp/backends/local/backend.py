"""LocalBackend: the embedded default backend, running rendered manifests as host processes.

Layout of ``workdir``::

    <namespace>/<job-name>/            the attempt's working folder (cwd of its processes)
    <namespace>/<job-name>/.myapp/     spec.json, state.json, supervisor.json, logs/, metrics.jsonl, etc/
    data/<namespace>/                  the project's data folder: outlives attempts (models, outputs)
    secrets/<namespace>/<name>/<key>   values for secretKeyRef (configmaps/<namespace>/<name>/<key> likewise)
    events/<run>.<job-name>.<state>    a job started running or finished (``events.py``, ``changed_runs``)
    gpus.json                          machine-wide GPU allocations
    uids.json                          the uid of each project's jobs (when the platform runs as root)

Each submitted job gets a detached supervisor process (``supervisor.py``); this class only
plans, spawns and reads files, so any instance (e.g. of a restarted worker) can answer for
any job. Replicas run sandboxed (``sandbox.py``); everything here is private to the platform
(0700) except the attempt, data and outputs folders, which belong to the project's uid: what the platform
makes, chowns or deletes in those goes through ``myapp.fs.beneath``, by descriptor beneath the folder
whose parent is the platform's, never through a link a job put or swapped in.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ...fs.beneath import Folder, Refused
from ...rendering.contract import RUN_LABEL
from ..base import (
    BackendError,
    JobRef,
    JobState,
    LogArchive,
    LogLine,
    MetricSample,
    PermanentBackendError,
    Status,
)
from ..logrecords import LogSource
from . import events, logfiles, sandbox
from .container_env import SECRET_KEY, SECRET_NAME
from .gpu import GpuDevice, GpuPool, nvml_devices
from .job_folders import META, JobFolders, _private_dir
from .plan import NAMESPACE, RESERVED_NAMESPACES, VOLUME_KINDS, Planner, Settings
from .procs import ProcessId, is_alive, process, read_json, terminate_groups, write_json

TERMINAL_STATES = frozenset({JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED})
TERMINAL = frozenset(s.value for s in TERMINAL_STATES)  # as written in state.json
REPO_ROOT = Path(__file__).resolve().parents[3]

GpuSource = str | Sequence[GpuDevice] | Callable[[], Sequence[GpuDevice]]


class LocalBackend(JobFolders):
    """Run manifests as processes on this machine. See docs/backends-local.md.

    ``gpus``: "auto" reads the devices through NVML (none without nvidia-ml-py / a driver), a
    list fixes them, a callable is asked on every submit (tests inject fake devices this way).
    ``python``: the interpreter that replaces the image's ``python`` (default: this one).
    ``isolation``: how replicas are sandboxed (default: ``sandbox.detect()`` at each submit, which
    refuses jobs on a machine that cannot isolate them unless MYAPP_UNSAFE_NO_JOB_ISOLATION=1).
    ``read_only_paths``: host folders a sandboxed job may read besides the system, the Python
    installation and the catalog (say, a shared dataset).
    ``environments``: where built environments are (myapp.images.environments); a container naming an image
    its project built runs with that environment, bound read-only (None: every image is the host's Python).
    """

    name = "local"

    def __init__(self, workdir: Path | str, *, gpus: GpuSource = "auto", catalog_root: Path | str | None = None,
                 python: str | None = None, extra_env: Mapping[str, str] | None = None,
                 override_env: Mapping[str, str] | None = None,
                 restart_delay: float = 1.0, max_restart_delay: float = 300.0, grace_period: float = 10.0,
                 metrics_interval: float = 5.0, poll_interval: float = 0.05,
                 isolation: sandbox.Isolation | None = None, read_only_paths: Sequence[Path | str] = (),
                 environments: Path | str | None = None):
        self.workdir = Path(workdir).resolve()
        self.environments = Path(environments).resolve() if environments is not None else None
        _private_dir(self.workdir)
        if catalog_root is None:
            from myapp.rendering.catalog import catalog_root as default_root

            catalog_root = default_root()
        self.catalog_root = Path(catalog_root).resolve()
        self.python = python or sys.executable
        self.extra_env = dict(extra_env or {})
        self.override_env = dict(override_env or {})
        self.settings = Settings(restart_delay=restart_delay, max_restart_delay=max_restart_delay,
                                 grace_period=grace_period, metrics_interval=metrics_interval,
                                 poll_interval=poll_interval)
        self.poll_interval = poll_interval
        self._gpus = gpus
        self.isolation = isolation
        self.read_only_paths = [Path(p).resolve() for p in read_only_paths]
        self._auto_devices: list[GpuDevice] | None = None
        self._children: list[subprocess.Popen] = []

    # -- paths --------------------------------------------------------------------------------
    def job_dir(self, ref: JobRef) -> Path:
        return self.workdir / ref.namespace / ref.job_name

    def _meta(self, ref: JobRef) -> Path:
        return self.job_dir(ref) / META

    def volume_dir(self, namespace: str, claim: str) -> Path:
        """A PersistentVolumeClaim's folder (a notebook's work folder): kept across attempts, removed by
        a cleanup whose objects name the claim."""
        return self.data_dir(namespace) / "volumes" / claim

    def outputs_dir(self, namespace: str) -> Path:
        """The project's outputs "volume": every attempt's MYAPP_OUTPUT_DIR under it, kept after cleanup
        (myapp/outputs/store.py reads it)."""
        return self.workdir / "outputs" / namespace

    def data_dir(self, namespace: str) -> Path:
        """The project's data folder: read-write for all its jobs, kept across attempts (cleanup
        leaves it), the place for outputs such as models."""
        return self.workdir / "data" / namespace

    def _devices(self) -> tuple[list[GpuDevice], str]:
        if isinstance(self._gpus, str):  # "auto"
            if self._auto_devices is None:
                self._auto_devices = nvml_devices()
            return list(self._auto_devices), "nvml" if self._auto_devices else "none"
        devices = self._gpus() if callable(self._gpus) else self._gpus
        return list(devices), "injected" if devices else "none"

    def gpu_pool(self) -> GpuPool:
        return GpuPool(self.workdir / "gpus.json", self._devices()[0])

    # -- Backend protocol ---------------------------------------------------------------------
    def submit(self, manifests: list[dict[str, Any]]) -> JobRef:
        isolation = self.isolation or sandbox.detect()
        isolation.require()  # never silently unisolated: IsolationUnavailable says what to do
        devices, source = self._devices()
        planner = Planner(workdir=self.workdir, catalog_root=self.catalog_root, python=self.python,
                          extra_env=self.extra_env, override_env=self.override_env, devices=devices,
                          gpu_source=source, settings=self.settings, sandbox_env=sandbox.job_env(isolation.mode),
                          environments=self.environments)
        ref, run = planner.plan(manifests)
        meta = self._meta(ref)
        with self._job_lock(ref):
            if (meta / "spec.json").exists():  # same attempt submitted again: adopt it
                if read_json(meta / "supervisor.json") is None:
                    self._spawn(ref)
                return ref
            _private_dir(self.job_dir(ref))
            _private_dir(meta)
            (meta / "logs").mkdir(mode=0o700, exist_ok=True)
            run["ref"] = ref.as_dict()
            run["gpu_pool"] = str(self.workdir / "gpus.json")
            try:
                run["sandbox"] = self._sandbox(isolation, ref, run)
            except Refused as exc:  # a link the project planted in its own folders: its job cannot start
                raise PermanentBackendError(f"the job's folders cannot be made: {exc.message}") from None
            run_id = _run_id(manifests)
            if run_id is not None:  # where the supervisor says the job changed (changed_runs reads it)
                run["events"] = {"folder": str(self.workdir / events.FOLDER), "run": run_id}
            write_json(meta / "spec.json", run)
            self._spawn(ref)
        return ref

    def status(self, ref: JobRef) -> Status:
        state = self._state(ref)
        replicas: dict[str, dict[str, int]] = {}
        for info in state.get("replicas", {}).values():
            counts = replicas.setdefault(info["type"], {"active": 0, "succeeded": 0, "failed": 0, "restarts": 0})
            phase = info["phase"]
            counts["active"] += phase in ("running", "backoff")
            counts["succeeded"] += phase == "succeeded"
            counts["failed"] += phase == "failed"
            counts["restarts"] += info.get("restarts", 0)
        return Status(state=JobState(state["state"]), reason=state.get("reason", ""), replicas=replicas,
                      exit_code=state.get("exit_code"), url=state.get("url"), cause=state.get("cause"))

    def logs(self, ref: JobRef, follow: bool = False, after: dict[str, int] | None = None) -> Iterator[LogLine]:
        spec = self._spec(ref)
        logs_dir = self._meta(ref) / "logs"
        files = {r["name"]: logs_dir / f"{r['name']}.log" for r in spec["replicas"]}
        return logfiles.follow(files, dict(after or {}), follow, lambda: self._finished(ref), self.poll_interval)

    def log_source(self, ref: JobRef) -> LogSource:
        """The live log read from its end (the last lines) or from a seq, bounded by what is read."""
        return logfiles.replica_files(self._meta(ref) / "logs", [r["name"] for r in self._spec(ref)["replicas"]])

    def metrics(self, ref: JobRef, since: float | None = None) -> list[MetricSample]:
        self._spec(ref)
        path = self._meta(ref) / "metrics.jsonl"
        out = []
        try:
            with open(path, encoding="utf-8") as fh:
                for row in fh:
                    if not row.endswith("\n"):
                        break  # being written
                    data = json.loads(row)
                    if since is None or data["timestamp"] > since:
                        out.append(MetricSample(**data))
        except FileNotFoundError:
            pass
        return out

    def cancel(self, ref: JobRef) -> None:
        meta = self._meta(ref)
        if not (meta / "spec.json").exists():
            return
        state = self._state(ref)
        if state["state"] in TERMINAL:
            return
        (meta / "cancel").touch()
        supervisor = process(ProcessId.from_dict(read_json(meta / "supervisor.json")))
        if supervisor is not None:
            try:
                supervisor.send_signal(signal.SIGTERM)
            except Exception:  # it just exited
                pass
        spec = self._spec(ref)
        default = spec["settings"]["grace_period"]  # a pod's own grace (its template's) wins, as the supervisor's
        grace = max([r.get("grace_period") or default for r in spec.get("replicas", [])], default=default)
        deadline = time.monotonic() + grace + 10
        while time.monotonic() < deadline:
            if self._state(ref)["state"] in TERMINAL:
                return
            time.sleep(0.02)
        # The supervisor did not answer: stop the processes ourselves.
        self._take_over(ref, state, "cancelled", "cancelled (the local supervisor did not respond)")

    def cleanup(self, ref: JobRef, archive: LogArchive) -> None:
        meta = self._meta(ref)
        for obj in ref.objects:  # a claim's folder goes with the claim (a notebook's work folder, at delete)
            if obj.kind in VOLUME_KINDS and NAMESPACE.fullmatch(obj.namespace) and SECRET_NAME.fullmatch(obj.name):
                self._remove_volume(obj.namespace, obj.name)
        if not (meta / "spec.json").exists():
            return
        if self._state(ref)["state"] not in TERMINAL:
            self.cancel(ref)
        supervisor = process(ProcessId.from_dict(read_json(meta / "supervisor.json")))
        if supervisor is not None:  # it exits right after writing the final state
            try:
                supervisor.wait(timeout=10)
            except Exception:  # psutil.TimeoutExpired: remove anyway
                pass
        replicas = [r["name"] for r in self._spec(ref)["replicas"]]
        archive.write(ref, logfiles.record_files(self._meta(ref) / "logs", replicas))  # copied whole, or streamed
        GpuPool(self.workdir / "gpus.json", []).release(f"{ref.namespace}/{ref.job_name}")
        with contextlib.suppress(FileNotFoundError), Folder.open(self.workdir / ref.namespace) as jobs:
            jobs.remove_tree(ref.job_name)  # the attempt's folder is the job's: by descriptor
        self._reap()

    def _remove_volume(self, namespace: str, claim: str) -> None:
        """A claim's folder, deleted by descriptor beneath the project's data folder: the job's uid owns
        everything in it, so ``volumes`` may be a link or be swapped for one meanwhile; that is refused
        (never followed into another project's folder)."""
        try:
            with Folder.open(self.data_dir(namespace)) as data:
                data.remove_tree(f"volumes/{claim}")
        except FileNotFoundError:
            return
        except Refused as exc:
            raise PermanentBackendError(f"claim {claim!r} not removed: {exc.message}") from None

    def delete_checkpoints(self, namespace: str, run_ids: list[int]) -> None:
        """Deleted runs' folders (every task's checkpoints) removed from the project's checkpoints folder by
        descriptor, as a claim's: a link there goes as a name, never followed; one on the way is refused."""
        try:
            with Folder.open(self.checkpoints_dir(namespace)) as root:
                for run_id in run_ids:
                    root.remove_tree(str(int(run_id)))
        except FileNotFoundError:  # no task of the project kept checkpoints here
            return
        except Refused as exc:
            raise PermanentBackendError(f"checkpoints not removed: {exc.message}") from None

    def changed_runs(self) -> set[int]:
        """The runs whose jobs started running or finished since the last call (their markers are
        deleted: each change is reported once)."""
        return events.take(self.workdir / events.FOLDER)

    def put_secret(self, namespace: str, name: str, data: dict[str, str]) -> None:
        """One file per key in ``secrets/<namespace>/<name>/`` (0600, in folders only the platform
        enters, never in a sandbox), which secretKeyRef reads at submit; keys not in ``data`` go."""
        folder = self._secret_dir(namespace, name)
        bad = [key for key in data if not SECRET_KEY.fullmatch(key) or key in (".", "..")]
        if bad:
            raise BackendError(f"secret {name!r}: invalid key(s) {bad}")
        for path in (folder.parent.parent, folder.parent, folder):
            _private_dir(path)
        for key, value in data.items():
            # Written aside then renamed: a submit reading at the same moment sees the old or the new
            # value, never half of one (the "~" suffix is not a valid key, so nothing reads it).
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".", suffix="~")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(value)
            os.replace(tmp, folder / key)
        for path in folder.iterdir():
            if path.name not in data:
                path.unlink(missing_ok=True)

    def delete_secret(self, namespace: str, name: str) -> None:
        folder = self._secret_dir(namespace, name)
        with contextlib.suppress(FileNotFoundError), Folder.open(folder.parent) as secrets:
            secrets.remove_tree(folder.name)

    def _secret_dir(self, namespace: str, name: str) -> Path:
        if not NAMESPACE.fullmatch(namespace) or namespace in RESERVED_NAMESPACES:
            raise BackendError(f"invalid namespace {namespace!r}")
        if not SECRET_NAME.fullmatch(name) or len(name) > 253:
            raise BackendError(f"invalid secret name {name!r}")
        return self.workdir / "secrets" / namespace / name

    # -- helpers beyond the protocol ----------------------------------------------------------
    def wait(self, ref: JobRef, timeout: float | None = None,
             until: Callable[[Status], bool] | None = None) -> Status:
        """Poll status until it is terminal (or ``until(status)``); TimeoutError after ``timeout``."""
        until = until or (lambda s: s.state in TERMINAL_STATES)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            status = self.status(ref)
            if until(status):
                return status
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"{ref.namespace}/{ref.job_name} still {status.state.value} after {timeout} s: "
                                   f"{status.reason}")
            time.sleep(self.poll_interval)

    # -- internals ----------------------------------------------------------------------------
    @contextmanager
    def _job_lock(self, ref: JobRef) -> Iterator[None]:
        folder = self.workdir / ref.namespace
        _private_dir(folder)
        with open(folder / f".{ref.job_name}.lock", "a+") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            yield

    def _spawn(self, ref: JobRef) -> None:
        meta = self._meta(ref)
        # Not the platform's environment (database URL, admin password, secret key): the supervisor
        # needs none of it, and each replica gets its own from the plan.
        env = sandbox.supervisor_env(str(REPO_ROOT))
        with open(meta / "supervisor.log", "ab") as log:
            proc = subprocess.Popen([sys.executable, "-m", "myapp.backends.local.supervisor", str(self.job_dir(ref))],
                                    cwd=self.job_dir(ref), env=env, stdin=subprocess.DEVNULL, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True, close_fds=True)
        self._children.append(proc)
        try:
            ident = ProcessId.of(proc.pid)
        except Exception:  # already gone; status() will notice
            ident = ProcessId(proc.pid, 0.0)
        write_json(meta / "supervisor.json", ident.as_dict())

    def _reap(self) -> None:
        self._children = [p for p in self._children if p.poll() is None]

    def _spec(self, ref: JobRef) -> dict[str, Any]:
        spec = read_json(self._meta(ref) / "spec.json")
        if spec is None:
            raise BackendError(f"no local job {ref.namespace}/{ref.job_name} in {self.workdir}")
        return spec

    def _finished(self, ref: JobRef) -> bool:
        state = read_json(self._meta(ref) / "state.json")
        if state is None:
            return not self._meta(ref).exists()  # cleaned up under us
        return state["state"] in TERMINAL or self._state(ref)["state"] in TERMINAL

    def _state(self, ref: JobRef) -> dict[str, Any]:
        """state.json, after making sure a non-terminal state still has a live supervisor."""
        self._spec(ref)
        self._reap()
        meta = self._meta(ref)
        state = read_json(meta / "state.json")
        if state is not None and state["state"] in TERMINAL:
            return state
        supervisor = ProcessId.from_dict(read_json(meta / "supervisor.json"))
        if supervisor is None or is_alive(supervisor):
            return state or {"state": "pending", "reason": "starting", "replicas": {}}
        state = read_json(meta / "state.json")  # it may have finished in between
        if state is not None and state["state"] in TERMINAL:
            return state
        return self._take_over(ref, state or {}, "failed",
                               f"the local supervisor (pid {supervisor.pid}) died; see {meta / 'supervisor.log'}")

    def _take_over(self, ref: JobRef, state: dict[str, Any], final: str, reason: str) -> dict[str, Any]:
        """Stop a job whose supervisor is gone: kill its process groups, free its GPUs, record why."""
        with self._job_lock(ref):
            current = read_json(self._meta(ref) / "state.json") or state
            if current.get("state") in TERMINAL:
                return current
            leaders = [ProcessId(r["pid"], r["create_time"]) for r in current.get("replicas", {}).values()
                       if r.get("pid")]
            terminate_groups(leaders, self.settings.grace_period)
            GpuPool(self.workdir / "gpus.json", []).release(f"{ref.namespace}/{ref.job_name}")
            for info in current.get("replicas", {}).values():
                if info.get("phase") in ("running", "backoff", "pending"):
                    info["phase"] = "stopped"
                info["pid"] = info["create_time"] = None
            current.update(state=final, reason=reason, finished_at=time.time(), url=None)
            current.setdefault("replicas", {})
            write_json(self._meta(ref) / "state.json", current)
            return current


def _run_id(manifests: list[dict[str, Any]]) -> int | None:
    """The platform run the manifests belong to (RUN_LABEL), None for manifests from elsewhere."""
    for obj in manifests:
        value = str(((obj.get("metadata") or {}).get("labels") or {}).get(RUN_LABEL, ""))
        if value.isascii() and value.isdigit():
            return int(value)
    return None
