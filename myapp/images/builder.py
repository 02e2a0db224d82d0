"""Build a local Python environment from a package list, sandboxed like a job.

``python -m venv`` and ``pip install`` run inside the job sandbox (myapp/backends/local/sandbox.py)
as the project's unprivileged uid: a package's setup code sees neither MYAPP_HOME nor the platform's
environment. The network is the host's (pip needs the package index); nothing else of the host is
writable but the environment's own folder. Once pip succeeded the platform takes the folder back (its
owner, read-only for everyone else) and writes the marker that makes it complete: a build killed
half-way leaves no environment that ``find`` would hand out, and the next build starts it over.
While pip runs the folder is the project's uid's, so whatever the platform does in it (take it back,
remove a build that failed or did not finish) goes by descriptor through ``myapp.fs.beneath``: a link pip's
setup code left is chowned or removed as a link, never followed.
"""
from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from ..backends.local import sandbox
from ..fs.beneath import Folder
from .environments import MARKER, Environment, content_hash, find, locked, python_version

# The platform's settings that say where the package index is and how to reach it; nothing else of
# its environment (database URL, secret key) reaches a build.
PIP_ENV = ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST", "PIP_CERT", "PIP_DEFAULT_TIMEOUT",
           "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
           "SSL_CERT_FILE", "SSL_CERT_DIR", "LANG", "LC_ALL")
DEFAULT_TIMEOUT = 1800.0
STOP_POLL = 2.0  # seconds between two questions whether a running build is to stop
Emit = Callable[[str], None]
Stop = Callable[[], str | None]


class BuildError(Exception):
    """The build failed; the message says why (pip's own words: the tail of its output)."""


def build_environment(root: Path, base_image: str | None, packages: list[str], namespace: str, emit: Emit, *,
                      uids_table: Path, isolation: sandbox.Isolation | None = None,
                      timeout: float = DEFAULT_TIMEOUT, stop: Stop | None = None,
                      stop_poll: float = STOP_POLL) -> tuple[Environment, bool]:
    """The environment of this content: found (cached=True) or built now. BuildError says why not. `stop`,
    asked every `stop_poll` seconds while a step runs, gives a reason to stop the build (its steps are
    killed, nothing is left behind), else None."""
    root = Path(root)
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    env_hash = content_hash(base_image, packages)
    with locked(root, env_hash):
        found = find(root, env_hash)
        if found is not None:
            emit(f"environment {env_hash} is already built for this content: reused from the cache")
            return found, True
        isolation = isolation or sandbox.detect()
        if isolation.mode == sandbox.UNAVAILABLE:
            raise BuildError(isolation.reason)
        path = root / env_hash
        uids_table.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        uid = sandbox.project_uid(uids_table, namespace) if isolation.mode == sandbox.UID else None
        with Folder.open(root) as environments:
            environments.remove_tree(env_hash)  # a build that did not finish
            environments.make_dirs(env_hash, 0o755, owner=uid)
        try:
            runner = _Runner(isolation, uid, root, path, emit, time.monotonic() + timeout, stop, stop_poll)
            emit(f"building environment {env_hash}: Python {python_version()}, {len(packages)} package(s), "
                 f"{'sandboxed' if isolation.sandboxed else 'NOT sandboxed'} ({isolation.mode})")
            runner.run("create the environment", [sys.executable, "-m", "venv", "--without-pip", str(path)])
            if packages:
                runner.run("pip install", [sys.executable, "-m", "pip", "--python", str(path / "bin" / "python"),
                                           "install", "--no-input", "--disable-pip-version-check",
                                           "--progress-bar", "off", *packages])
            with Folder.open(root) as environments:
                _take_back(environments, env_hash)
                environments.write(f"{env_hash}/{MARKER}", json.dumps({
                    "hash": env_hash, "base_image": base_image, "packages": packages,
                    "python": python_version()}).encode(), 0o644)
        except BaseException:
            with contextlib.suppress(FileNotFoundError), Folder.open(root) as environments:
                environments.remove_tree(env_hash)
            raise
        emit(f"environment {env_hash} is ready")
        return Environment(env_hash, path), False


def _take_back(environments: Folder, env_hash: str) -> None:
    """The platform owns the finished environment; jobs read it (bound read-only), nobody else writes.
    By descriptor: links are chowned as links, never followed (Refused for a tree too deep to walk)."""
    environments.own_tree(env_hash, os.geteuid(), os.getegid(),
                          lambda mode: (mode | 0o444 | (0o111 if mode & 0o100 else 0)) & ~0o7022)


class _Runner:
    """Runs one step of a build (in the sandbox when there is one), its output into the log."""

    def __init__(self, isolation: sandbox.Isolation, uid: int | None, root: Path, path: Path, emit: Emit,
                 deadline: float, stop: Stop | None = None, stop_poll: float = STOP_POLL) -> None:
        self.isolation, self.emit, self.deadline, self.path = isolation, emit, deadline, path
        self.stop, self.stop_poll = stop, stop_poll
        self.config = None
        if isolation.sandboxed:
            etc, hosts = sandbox.etc_files(root / ".etc", uid, ["image-build"])
            self.config = sandbox.plan(isolation, uid=uid, cwd=path, data_dir=path,
                                       read_only=sandbox.python_roots(sys.executable),
                                       hidden=[root.parent, root], etc=etc, hosts=hosts)
        self.env = {k: v for k, v in os.environ.items() if k in PIP_ENV}
        self.env.update(PATH=f"{path / 'bin'}:/usr/local/bin:/usr/bin:/bin", **sandbox.job_env(isolation.mode))
        self.env.setdefault("HOME", os.environ.get("HOME", "/tmp"))

    def run(self, step: str, argv: list[str]) -> None:
        command = sandbox.wrap(self.config, argv, "image-build", gpus=False) if self.config else argv
        remaining = self.deadline - time.monotonic()
        proc = subprocess.Popen(command, env=self.env, cwd=self.path, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
                                start_new_session=True)
        timer = threading.Timer(max(remaining, 0.0), _kill, [proc])
        timer.start()
        stopped: list[str] = []
        ended = threading.Event()
        if self.stop is not None:
            threading.Thread(target=self._watch, args=(proc, ended, stopped), daemon=True).start()
        tail: list[str] = []
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                self.emit(line)
                if line.strip():
                    tail = [*tail[-11:], line.rstrip()]
            code = proc.wait()
        finally:
            timer.cancel()
            ended.set()
            if proc.poll() is None:
                _kill(proc)
        if stopped:
            raise BuildError(f"{step} stopped: {stopped[0]}")
        if time.monotonic() >= self.deadline:
            raise BuildError(f"{step} did not finish in time (MYAPP_ENV_BUILD_TIMEOUT)")
        if code != 0:
            raise BuildError(f"{step} failed (exit code {code}):\n" + "\n".join(tail))


    def _watch(self, proc: subprocess.Popen, ended: threading.Event, stopped: list[str]) -> None:
        """Ask `stop` every stop_poll seconds until the step ends; a reason kills the step."""
        assert self.stop is not None
        while not ended.wait(self.stop_poll):
            reason = self.stop()
            if reason:
                stopped.append(reason)
                _kill(proc)
                return


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, 9)
    except OSError:
        pass
