"""One replica as the supervisor tracks it (``Replica``: its phase, init stage, process, restarts, GPUs and
readiness), and what its process's end and probes mean: a container runtime's exit code, the reason a
failed replica gives the job, the stand-in for a process that could not start, and the TCP and HTTP
readiness checks of a service's replica.
"""
from __future__ import annotations

import socket
import subprocess
import urllib.request
from typing import Any

from .logfiles import ReplicaLog
from .procs import ProcessId


class Replica:
    def __init__(self, spec: dict[str, Any], log: ReplicaLog):
        self.spec = spec
        self.name: str = spec["name"]
        self.type: str = spec["type"]
        self.log = log
        self.phase = "pending"  # pending, running, backoff, succeeded, failed, stopped
        self.stage = 0  # index into spec["containers"] (init containers first)
        self.proc: subprocess.Popen | FailedStart | None = None
        self.ident: ProcessId | None = None
        self.restarts = 0
        self.backoff_steps = 0
        self.exit_code: int | None = None
        self.last_line = ""
        self.started_at = 0.0
        self.next_start = 0.0
        self.ready = False
        self.next_probe = 0.0
        self.gpus: list[int] = []


def container_exit_code(code: int) -> int:
    """Killed by signal N: reported as 128+N, like a container runtime."""
    return 128 - code if code < 0 else code


# Signals that end a process from outside (the kernel's OOM killer, an operator, a lost machine), as
# 128+N: a training replica so ended is lost, not failed (supervisor.py).
KILLING_SIGNALS = frozenset({1, 2, 9, 15})


def killed(code: int) -> int | None:
    """The signal that killed a replica reported as ``code`` (128+N, container_exit_code), or None."""
    return code - 128 if code - 128 in KILLING_SIGNALS else None


def failure_reason(replica: Replica, code: int, limit_reached: bool) -> str:
    prefix = "BackoffLimitExceeded: " if limit_reached else ""
    restarts = f" after {replica.restarts} restart{'s' if replica.restarts != 1 else ''}" if replica.restarts else ""
    last = f": {replica.last_line}" if replica.last_line else ""
    return f"{prefix}{replica.name} exited with code {code}{restarts}{last}"


class FailedStart:
    """Stands in for a Popen whose exec failed (command not found): exits at once with ``code``."""

    def __init__(self, code: int):
        self.code = code
        self.pid = -1

    def poll(self) -> int:
        return self.code

    def wait(self, timeout: float | None = None) -> int:
        return self.code


def tcp_open(port: int | None) -> bool:
    if not port:
        return False
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def http_ok(port: int | None, path: str) -> bool:
    if not port:
        return False
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=0.5) as response:
            return 200 <= response.status < 400
    except Exception:  # any failure means not ready
        return False
