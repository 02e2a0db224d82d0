"""Process identity and termination helpers (pid + create time, so a reused pid is never hit)."""
from __future__ import annotations

import ctypes
import json
import os
import signal
import socket
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

_CREATE_TIME_TOLERANCE = 0.05  # seconds; psutil's create_time is derived from jiffies


@dataclass(frozen=True)
class ProcessId:
    pid: int
    create_time: float

    @classmethod
    def of(cls, pid: int) -> ProcessId:
        return cls(pid, psutil.Process(pid).create_time())

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> ProcessId | None:
        if not data:
            return None
        return cls(int(data["pid"]), float(data["create_time"]))

    def as_dict(self) -> dict[str, Any]:
        return {"pid": self.pid, "create_time": self.create_time}


def process(ident: ProcessId | None) -> psutil.Process | None:
    """The live (non-zombie) process ``ident`` names, or None."""
    if ident is None:
        return None
    try:
        proc = psutil.Process(ident.pid)
        if abs(proc.create_time() - ident.create_time) > _CREATE_TIME_TOLERANCE:
            return None  # the pid was reused
        if proc.status() == psutil.STATUS_ZOMBIE:
            return None
        return proc
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def is_alive(ident: ProcessId | None) -> bool:
    return process(ident) is not None


def signal_group(pgid: int, sig: int) -> bool:
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def group_members(pgids: set[int]) -> list[psutil.Process]:
    """Live processes whose process group is one of ``pgids`` (scans the process table)."""
    out = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) in pgids and proc.status() != psutil.STATUS_ZOMBIE:
                out.append(proc)
        except (ProcessLookupError, psutil.NoSuchProcess, psutil.AccessDenied, PermissionError):
            continue
    return out


def terminate_groups(leaders: Iterable[ProcessId], grace: float, extra: Iterable[psutil.Process] = ()) -> None:
    """SIGTERM every process group led by a live ``leaders`` entry (and the ``extra`` processes),
    wait up to ``grace`` seconds, then SIGKILL whatever of them is left."""
    pgids = set()
    for ident in leaders:
        proc = process(ident)
        if proc is not None:
            pgids.add(ident.pid)  # replicas are started with start_new_session: pgid == pid
    victims = {p.pid: p for p in group_members(pgids)} if pgids else {}
    # Each process gets one SIGTERM: the groups' members through their group, the rest one by one
    # (a second TERM would run a job's handler again while it is already shutting down).
    strays = [proc for proc in extra if proc.pid not in victims]
    victims.update((proc.pid, proc) for proc in strays)
    for pgid in pgids:
        signal_group(pgid, signal.SIGTERM)
    for proc in strays:
        try:
            proc.send_signal(signal.SIGTERM)
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(list(victims.values()), timeout=max(grace, 0))
    for pgid in pgids:
        signal_group(pgid, signal.SIGKILL)
    for proc in alive:
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=2)


def become_subreaper() -> bool:
    """Linux: orphaned descendants are re-parented to this process instead of init, so a replica
    that daemonises a grandchild (or calls setsid) still shows up in our process tree."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def free_ports(count: int) -> list[int]:
    """``count`` distinct free loopback ports (kept bound together so none repeats)."""
    socks = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.bind(("127.0.0.1", 0))
            socks.append(sock)
        return [s.getsockname()[1] for s in socks]
    finally:
        for sock in socks:
            sock.close()


def write_json(path: Path, data: Any) -> None:
    """Atomic replace: readers see the old or the new file, never half of one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{time.monotonic_ns()}.tmp")
    tmp.write_text(json.dumps(data, sort_keys=True))
    tmp.replace(path)


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return None
