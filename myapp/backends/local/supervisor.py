"""The supervisor of one local job: a detached process that does what kubelet + the operators do.

``python -m myapp.backends.local.supervisor <attempt folder>`` reads ``.myapp/spec.json``
(written by LocalBackend.submit), then:

* waits for GPUs from the machine-wide pool (state "waiting") and hands them out through
  CUDA_VISIBLE_DEVICES;
* starts every replica as a process in its own session / process group, inside the job's
  sandbox (``sandbox.wrap``: bubblewrap, the project's uid) unless isolation is off, running its
  init containers first, stdout and stderr relayed line by line into ``.myapp/logs/<replica>.log``;
* restarts replicas per their restart policy with exponential delay, counts the job's
  backoff limit, applies the success policy (Master / Chief / worker-0 / all), the deadline,
  and readiness probes of services;
* samples CPU / memory (whole process tree) and GPU (NVML) per replica into ``metrics.jsonl``;
* on SIGTERM (or a ``.myapp/cancel`` file) stops every process group: SIGTERM, grace, SIGKILL;
* keeps ``.myapp/state.json`` current (atomic rewrites) and exits when the job is finished;
* marks the job's run as changed (``events.py``) when the job starts running or finishes, so beat
  reconciles it at once.

Being a separate process, it outlives the worker that submitted the job: a restarted worker
reads the same files and still answers status / logs / cancel.

This module runs the job (starting and stopping replicas, GPUs, probes, the state file); ``exits.py`` answers
a replica's end (restart, success, failure, a lost rank, an elastic gang going on without it), ``pump.py``
relays the replicas' output into their logs, ``replicas.py`` holds one replica's record and what its exit
code and probes mean, ``replica_metrics.py`` samples its processes into ``metrics.jsonl``.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil

from . import events
from .exits import ReplicaExits
from .gpu import GpuDevice, GpuPool, GpuSampler
from .logfiles import ReplicaLog
from .procs import ProcessId, become_subreaper, read_json, terminate_groups, write_json
from .pump import Pump
from .replica_metrics import ReplicaMetrics
from .replicas import FailedStart, Replica, container_exit_code, http_ok, tcp_open
from .sandbox import wrap

META = ".myapp"
TERMINAL = ("succeeded", "failed", "cancelled")
SETTLE_SECONDS = 1.0
METRICS_RETRY_SECONDS = 0.5


class Supervisor(ReplicaMetrics, ReplicaExits):
    def __init__(self, jobdir: Path):
        self.jobdir = Path(jobdir)
        self.meta = self.jobdir / META
        self.spec: dict[str, Any] = json.loads((self.meta / "spec.json").read_text())
        self.settings: dict[str, Any] = self.spec["settings"]
        self.mode: str = self.spec["mode"]
        self.sandbox: dict[str, Any] | None = self.spec.get("sandbox")
        self.me = ProcessId.of(os.getpid())
        (self.meta / "logs").mkdir(exist_ok=True)
        self.replicas = [Replica(r, ReplicaLog(self.meta / "logs" / f"{r['name']}.log"))
                         for r in self.spec["replicas"]]
        self.by_leader: dict[int, Replica] = {}
        self.pump = Pump()
        self.cancel_requested = False
        self.failures = 0
        self.state = "pending"
        self.reason = ""
        self.started_at = time.time()
        self.last_written = ""
        self.seen_state = ""  # the state of the last write_state (a change to running or final: an event)
        self.note = ""
        self.metrics_at = 0.0
        self.sampled_at = 0.0  # when sample_metrics last ran
        self.cpu_seen: dict[tuple[int, float], float] = {}
        self.gpu_sampler: GpuSampler | None = None
        self.exit_code: int | None = None
        self.cause: str | None = None  # a replica of a training gang was killed (state.json "cause")
        self.left: set[str] = set()  # replicas an elastic gang went on without (exits.py)
        self.owner = f"{self.spec['namespace']}/{self.spec['job_name']}"
        self.pool = GpuPool(Path(self.spec["gpu_pool"]),
                            [GpuDevice(**d) for d in self.spec["gpu"]["devices"]])

    # -- main ---------------------------------------------------------------------------------
    def run(self) -> int:
        become_subreaper()
        signal.signal(signal.SIGTERM, self._on_term)
        signal.signal(signal.SIGINT, self._on_term)
        self.pump.start()
        self.write_state(force=True)
        if self.spec.get("failure"):
            return self.finish("failed", self.spec["failure"])
        if not self.allocate_gpus():
            return 0
        if self.spec["gpu"]["source"] == "nvml":
            self.gpu_sampler = GpuSampler()
        for replica in self.replicas:
            self.launch(replica)
        poll = self.settings["poll_interval"]
        while True:
            outcome = self.step()
            if outcome:
                return self.finish(*outcome)
            self.write_state()
            time.sleep(poll)

    def _on_term(self, signum: int, frame: Any) -> None:
        self.cancel_requested = True

    def cancelled(self) -> bool:
        return self.cancel_requested or (self.meta / "cancel").exists()

    def step(self) -> tuple[str, str, int | None] | None:
        now = time.time()
        if self.cancelled():
            return "cancelled", "cancelled", None
        for replica in self.replicas:
            if replica.proc is not None:
                code = replica.proc.poll()
                if code is not None:
                    fatal = self.on_exit(replica, code)
                    if fatal:
                        return "failed", fatal, replica.exit_code
            if replica.phase == "backoff" and now >= replica.next_start:
                self.launch(replica)
        leaders = [r for r in self.replicas if r.name in self.spec["success"] and r.name not in self.left]
        if leaders and all(r.phase == "succeeded" for r in leaders):
            self.settle()
            return "succeeded", "", 0
        deadline = self.spec.get("active_deadline")
        if deadline and now - self.started_at > deadline:
            return "failed", f"DeadlineExceeded: the job ran longer than {deadline} s", None
        self.probe(now)
        if now >= self.metrics_at:
            sampled = self.sample_metrics(now)
            # A replica just launched may still be only its sandbox (bwrap, not counted): look again
            # soon instead of a whole interval later, so a short job still gets its samples.
            running = sum(1 for r in self.replicas if r.phase == "running")
            soon = min(METRICS_RETRY_SECONDS, self.settings["metrics_interval"])
            self.metrics_at = now + (soon if sampled < running else self.settings["metrics_interval"])
            self.reap_orphans()
        return None

    # -- GPUs ---------------------------------------------------------------------------------
    def allocate_gpus(self) -> bool:
        wanted = sum(r.spec["gpus"] for r in self.replicas)
        devices = self.pool.devices
        if wanted == 0:
            return True
        if not devices:
            self.note = f"asked for {wanted} GPU(s); this host has none: running on CPU"
            return True
        if wanted > len(devices):
            self.finish("failed", f"Unschedulable: the job needs {wanted} GPU(s), this host has {len(devices)}")
            return False
        while True:
            if self.cancelled():
                self.finish("cancelled", "cancelled")
                return False
            got = self.pool.allocate(self.owner, wanted, self.me)
            if got is not None:
                break
            self.state = "waiting"
            self.reason = f"waiting for {wanted} GPU(s): {len(self.pool.free())} of {len(devices)} free"
            self.write_state()
            time.sleep(0.2)
        self.state, self.reason = "pending", ""
        for replica in self.replicas:
            replica.gpus, got = got[:replica.spec["gpus"]], got[replica.spec["gpus"]:]
        return True

    # -- processes ----------------------------------------------------------------------------
    def launch(self, replica: Replica) -> None:
        container = replica.spec["containers"][replica.stage]
        env = dict(container["env"])
        env["CUDA_VISIBLE_DEVICES"] = ",".join(str(d) for d in replica.gpus)
        if replica.gpus:
            env["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"  # NVML's order, so the indices mean the same devices
        argv = container["argv"]
        if self.sandbox is not None:
            argv = wrap(self.sandbox, argv, replica.spec.get("hostname") or replica.name, gpus=bool(replica.gpus))
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        try:
            proc = subprocess.Popen(argv, cwd=self.spec["cwd"], env=env, stdin=subprocess.DEVNULL,
                                    stdout=out_w, stderr=err_w, start_new_session=True, close_fds=True)
        except OSError as exc:
            proc = None
            os.write(err_w, f"cannot start {container['argv'][0]}: {exc}\n".encode())
        finally:
            os.close(out_w)
            os.close(err_w)
        self.pump.add(out_r, replica.log, "o")
        self.pump.add(err_r, replica.log, "e")
        replica.started_at = time.time()
        replica.ready = False
        replica.next_probe = 0.0
        if proc is None:
            replica.proc, replica.ident = FailedStart(128), None
            replica.phase = "running"
            return
        replica.proc = proc
        try:
            replica.ident = ProcessId.of(proc.pid)
        except psutil.Error:
            replica.ident = ProcessId(proc.pid, time.time())
        self.by_leader[proc.pid] = replica
        replica.phase = "running"

    def settle(self) -> None:
        """The job succeeded: replicas still running (workers finishing in step with the master)
        get a moment to exit on their own before the rest (parameter servers) is stopped."""
        deadline = time.monotonic() + SETTLE_SECONDS
        while time.monotonic() < deadline:
            busy = False
            for replica in self.replicas:
                if replica.proc is not None and replica.phase == "running":
                    code = replica.proc.poll()
                    if code is None:
                        busy = True
                    elif code == 0 and not replica.spec["containers"][replica.stage]["init"]:
                        self.on_exit(replica, code)
            if not busy:
                return
            time.sleep(0.02)

    def probe(self, now: float) -> None:
        for replica in self.replicas:
            if replica.phase != "running" or replica.ready or now < replica.next_probe:
                continue
            replica.next_probe = now + 0.2
            ready = replica.spec.get("ready")
            if replica.stage < len(replica.spec["containers"]) - 1:
                continue
            if ready is None:
                replica.ready = True
            elif ready["type"] == "tcp":
                replica.ready = tcp_open(ready["port"])
            else:
                replica.ready = http_ok(ready["port"], ready.get("path", "/"))

    def finish(self, state: str, reason: str, exit_code: int | None = None) -> int:
        grace = self.settings["grace_period"]
        leaders, graces = [], []
        for replica in self.replicas:
            if replica.ident is not None:
                leaders.append(replica.ident)
                graces.append(replica.spec.get("grace_period") or grace)
        strays = []
        try:
            strays = psutil.Process().children(recursive=True)
        except psutil.Error:
            pass
        terminate_groups(leaders, min(graces) if graces else grace, extra=strays)
        for replica in self.replicas:
            if replica.proc is not None:
                try:
                    replica.exit_code = container_exit_code(replica.proc.wait(timeout=5))
                except subprocess.TimeoutExpired:
                    pass
                replica.proc, replica.ident = None, None
                replica.phase = "stopped"
            elif replica.phase in ("pending", "backoff"):
                replica.phase = "stopped"
        self.pump.close(timeout=3)
        for replica in self.replicas:
            replica.log.close()
        if self.gpu_sampler is not None:
            self.gpu_sampler.close()
        self.pool.release(self.owner)
        self.state, self.reason = state, reason
        self.exit_code = exit_code
        self.write_state(force=True, finished=True)
        return 0

    def reap_orphans(self) -> None:
        """Subreaper duty: collect orphaned grandchildren that died (not our Popen children)."""
        ours = {r.proc.pid for r in self.replicas if isinstance(r.proc, subprocess.Popen)}
        try:
            children = psutil.Process().children()
        except psutil.Error:
            return
        for child in children:
            try:
                if child.pid not in ours and child.status() == psutil.STATUS_ZOMBIE:
                    os.waitpid(child.pid, os.WNOHANG)
            except (psutil.Error, ChildProcessError):
                continue

    # -- state --------------------------------------------------------------------------------
    def current_state(self) -> tuple[str, str]:
        if self.state in TERMINAL or self.state == "waiting":
            return self.state, self.reason
        if self.mode == "service":
            if all(r.ready for r in self.replicas):
                return "running", ""
            waiting = [r.name for r in self.replicas if not r.ready]
            return "pending", self.note or f"not ready yet: {', '.join(waiting)}"
        if any(r.phase in ("running", "succeeded") for r in self.replicas):
            return "running", self.note
        return "pending", self.note

    def write_state(self, force: bool = False, finished: bool = False) -> None:
        state, reason = self.current_state()
        replicas = {}
        for r in self.replicas:
            replicas[r.name] = {
                "type": r.type, "phase": r.phase, "restarts": r.restarts, "exit_code": r.exit_code,
                "ready": r.ready, "gpus": r.gpus, "last_line": r.last_line,
                "pid": r.ident.pid if r.ident else None, "create_time": r.ident.create_time if r.ident else None,
            }
        url = None
        if self.mode == "service" and state == "running":
            url = next((r.spec.get("url") for r in self.replicas if r.spec.get("url")), None)
        data = {"state": state, "reason": reason, "replicas": replicas, "url": url,
                "exit_code": self.exit_code, "supervisor": self.me.as_dict(), "cause": self.cause,
                "started_at": self.started_at, "finished_at": time.time() if finished else None}
        text = json.dumps(data, sort_keys=True)
        if force or text != self.last_written:
            write_json(self.meta / "state.json", data)
            self.last_written = text
        if state != self.seen_state:
            if state == "running" or state in TERMINAL:
                announce(self.spec, state)  # after state.json: the reconcile it causes reads the new state
            self.seen_state = state


def announce(spec: dict[str, Any], state: str) -> None:
    """Drop the run's event marker, if the backend gave a run (spec ``events``). Failing to is only
    reported (supervisor.log): the run's timer notices the change a little later."""
    target = spec.get("events")
    if not target:
        return
    try:
        events.announce(Path(target["folder"]), target["run"], spec["job_name"], state)
    except OSError as exc:
        print(f"cannot write the event marker: {exc}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m myapp.backends.local.supervisor <attempt folder>", file=sys.stderr)
        return 2
    jobdir = Path(args[0])
    try:
        return Supervisor(jobdir).run()
    except Exception as exc:  # record why, so status() can say it
        state = read_json(jobdir / META / "state.json") or {}
        state.update(state="failed", reason=f"local supervisor crashed: {type(exc).__name__}: {exc}",
                     finished_at=time.time())
        write_json(jobdir / META / "state.json", state)
        try:
            spec = read_json(jobdir / META / "spec.json") or {}
        except ValueError:  # the spec itself may be why it crashed
            spec = {}
        announce(spec, "failed")
        raise


if __name__ == "__main__":
    sys.exit(main())
