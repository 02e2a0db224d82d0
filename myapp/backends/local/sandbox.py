"""Jobs run sealed off from the platform: the operating system isolates every local replica.

Each replica runs inside bubblewrap (``bwrap``) with

* its own PID namespace: it sees and can signal only its own processes, never the platform's
  (web, worker, beat, the job's supervisor) nor another job's;
* its own IPC and UTS namespaces (the hostname is the pod name, as in Kubernetes, and its own /etc/hosts
  names it first: ``socket.getfqdn()`` is the pod's name, not every pod's ``localhost``);
* a filesystem of read-only system folders (/usr, /etc, /sys, the Python installation, the
  job-template catalog) plus, read-write, only the attempt folder (its ``.myapp`` control folder
  hidden) and the project's data folder. MYAPP_HOME (secret key, database, queues, archives,
  secrets, other jobs) is not in it; /tmp, /var/tmp and /dev/shm are private and empty;
* only the environment of its plan (the supervisor, which is platform code and stays outside,
  starts with a clean environment too).

The network is shared on purpose: services listen on 127.0.0.1 and the platform reaches them.

``detect()`` decides once per process what the machine can do:

* ``uid``: the platform runs as root; each replica also drops to its project's own unprivileged
  uid (``setpriv``: no supplementary groups, no capabilities, no new privileges);
* ``userns``: not root, but unprivileged user namespaces work; bwrap alone, with the
  platform's uid (namespaces, not file permissions, keep the job out);
* ``none``: the admin switched isolation off with MYAPP_UNSAFE_NO_JOB_ISOLATION=1;
* ``unavailable``: none of these; the backend refuses jobs and ``myapp run`` says why.
"""
from __future__ import annotations

import fcntl
import glob
import json
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...outputs.checkpoints import MOUNT as CHECKPOINT_MOUNT
from ...outputs.declarations import MOUNT
from ..base import BackendError, PermanentBackendError

OPT_OUT = "MYAPP_UNSAFE_NO_JOB_ISOLATION"
UID_BASE = "MYAPP_JOB_UID_BASE"
UID_COUNT = "MYAPP_JOB_UID_COUNT"
# Far above login users (1000+), /etc/subuid ranges (100000+) and systemd's dynamic users.
DEFAULT_UID_BASE = 1_700_000_000
DEFAULT_UID_COUNT = 1_000_000
JOB_USER = "myapp-job"  # the passwd name of a project uid inside its sandbox
# What a job gets instead of the platform's HOME and TMPDIR: private, empty, per replica.
JOB_HOME = "/tmp"
# The supervisor's environment: what Python, psutil and NVML need, none of the platform's settings.
# The log caps (backends/logcaps.py) reach the supervisor, which applies them as it writes.
SUPERVISOR_ENV = ("PATH", "LANG", "LANGUAGE", "TZ", "LD_LIBRARY_PATH", "CUDA_HOME",
                  "MYAPP_LOG_MAX_BYTES_PER_REPLICA", "MYAPP_LOG_MAX_LINE")

UID, USERNS, NONE, UNAVAILABLE = "uid", "userns", "none", "unavailable"


class IsolationUnavailable(PermanentBackendError):
    """This machine cannot isolate jobs and the admin did not opt out (trying again cannot help)."""


@dataclass(frozen=True)
class Isolation:
    mode: str  # uid, userns, none, unavailable
    reason: str  # plain words, for `myapp run` and for BackendError
    bwrap: str | None = None

    @property
    def sandboxed(self) -> bool:
        return self.mode in (UID, USERNS)

    def require(self) -> None:
        if self.mode == UNAVAILABLE:
            raise IsolationUnavailable(self.reason)


_detected: dict[tuple[str, int, str], Isolation] = {}


def opted_out() -> bool:
    return os.environ.get(OPT_OUT, "").strip().lower() in ("1", "true", "yes")


def detect(refresh: bool = False) -> Isolation:
    """What isolation this machine gives jobs (probed by running a sandbox once per process)."""
    key = (os.environ.get(OPT_OUT, ""), os.geteuid(), os.environ.get("PATH", ""))
    if refresh or key not in _detected:
        _detected[key] = _detect()
    return _detected[key]


def _detect() -> Isolation:
    if opted_out():
        return Isolation(NONE, f"job isolation is OFF ({OPT_OUT}=1): local jobs run as "
                               f"{_user_name(os.geteuid())} and can read the platform's secrets, database "
                               "and processes")
    advice = (f"install bubblewrap (apt-get install -y bubblewrap), or set {OPT_OUT}=1 to run jobs "
              "unisolated, where they can read the platform's secrets")
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return Isolation(UNAVAILABLE, f"local jobs cannot run isolated: bubblewrap (bwrap) is not installed; {advice}")
    mode = UID if os.geteuid() == 0 or in_platform_namespace() else USERNS
    tools = [shutil.which(name) for name in ("env", "setpriv")] if mode == UID else [shutil.which("env")]
    if None in tools:
        return Isolation(UNAVAILABLE, "local jobs cannot run isolated: setpriv and env (util-linux, coreutils) "
                                      f"are needed next to bubblewrap; {advice}")
    config = _config(mode, bwrap, uid_base() if mode == UID else None, _View())
    try:
        probe = subprocess.run(wrap(config, ["true"], "probe", gpus=False), env={"PATH": os.environ.get("PATH", "")},
                               stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Isolation(UNAVAILABLE, f"local jobs cannot run isolated: bubblewrap failed to start ({exc}); {advice}")
    if probe.returncode != 0:
        why = (probe.stderr.strip().splitlines() or [f"exit code {probe.returncode}"])[-1]
        if mode == USERNS:
            why += (" (not root: bubblewrap needs unprivileged user namespaces, "
                    "e.g. sysctl kernel.unprivileged_userns_clone=1)")
        return Isolation(UNAVAILABLE, f"local jobs cannot run isolated: bubblewrap does not work here: {why}; {advice}")
    if mode == UID:
        return Isolation(UID, "local jobs run isolated: bubblewrap (private processes and files), one unprivileged "
                              "uid per project", bwrap)
    return Isolation(USERNS, f"local jobs run isolated: bubblewrap (private processes and files) as "
                             f"{_user_name(os.geteuid())}, the platform's own user; run the platform as root for "
                             "one uid per project", bwrap)


def in_platform_namespace() -> bool:
    """Running as the platform user in its own user namespace (myapp/host/launch.py): not root, but holding
    CAP_SETUID and CAP_SETGID there, with the namespace's root and the projects' uids mapped. Sandboxes then
    start as the namespace's root (bwrap refuses capabilities without uid 0), which maps to a spare host uid."""
    if os.geteuid() == 0:
        return False
    try:
        caps = int(Path("/proc/self/status").read_text().split("CapEff:")[1].split()[0], 16)
        ranges = [tuple(int(n) for n in line.split()) for line in Path("/proc/self/uid_map").read_text().splitlines()]
    except (OSError, IndexError, ValueError):
        return False
    setuid_and_setgid = (1 << 7) | (1 << 6)

    def mapped(uid: int, count: int = 1) -> bool:
        return any(inside <= uid and uid + count <= inside + length for inside, _outside, length in ranges)

    return caps & setuid_and_setgid == setuid_and_setgid and mapped(0) and mapped(uid_base(), uid_count()) \
        and not any(inside == 0 and outside == 0 for inside, outside, _length in ranges)


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def uid_base() -> int:
    return int(os.environ.get(UID_BASE, DEFAULT_UID_BASE))


def uid_count() -> int:
    return int(os.environ.get(UID_COUNT, DEFAULT_UID_COUNT))


def project_uid(table: Path, namespace: str) -> int:
    """The project's own uid: allocated once from MYAPP_JOB_UID_BASE on (never a uid with a passwd
    entry, never one another project has), then stable, recorded in ``table`` under flock."""
    base, count = uid_base(), uid_count()
    with open(table.with_name(f".{table.name}.lock"), "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            uids: dict[str, int] = json.loads(table.read_text())
        except FileNotFoundError:
            uids = {}
        if namespace in uids:
            return uids[namespace]
        taken = set(uids.values())
        for uid in range(base, base + count):
            if uid in taken or has_account(uid):
                continue
            uids[namespace] = uid
            tmp = table.with_name(f".{table.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(uids, sort_keys=True))
            tmp.replace(table)
            return uid
    raise BackendError(f"no free job uid left in {base}..{base + count - 1} ({UID_BASE}, {UID_COUNT})")


def has_account(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False


def job_env(mode: str) -> dict[str, str]:
    """What replaces the host's HOME / TMPDIR / USER in a sandboxed replica (they would name
    folders it cannot see, or the platform's account)."""
    if mode not in (UID, USERNS):
        return {}
    env = {"HOME": JOB_HOME, "TMPDIR": "/tmp"}
    if mode == UID:
        env.update(USER=JOB_USER, LOGNAME=JOB_USER)
    return env


def supervisor_env(pythonpath: str) -> dict[str, str]:
    """A clean environment for the supervisor: replicas get theirs from the plan, and nothing of
    the platform's (database URL, admin password, secret key) is passed along."""
    env = {k: v for k, v in os.environ.items() if k in SUPERVISOR_ENV or k.startswith("LC_")}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env["PYTHONPATH"] = pythonpath
    return env


def python_roots(python: str) -> list[Path]:
    """Folders of an interpreter's installation (venv and base), bound read-only for the job."""
    import sys

    if os.path.realpath(python) == os.path.realpath(sys.executable):
        prefixes = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    else:
        code = ("import json, sys; "
                "print(json.dumps([sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]))")
        try:
            out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60, env={})
            prefixes = json.loads(out.stdout) if out.returncode == 0 else []
        except (OSError, ValueError, subprocess.TimeoutExpired):
            prefixes = []
    roots = [Path(p) for p in prefixes] + [Path(os.path.realpath(python)).parent]
    return [Path(os.path.realpath(p)) for p in roots]


def plan(isolation: Isolation, *, uid: int | None, cwd: Path, data_dir: Path, read_only: Iterable[Path],
         hidden: Iterable[Path], etc: dict[str, Path], hosts: dict[str, Path],
         outputs: tuple[Path, str] | None = None,
         read_outputs: tuple[Path, Iterable[str]] | None = None,
         checkpoint: tuple[Path, str] | None = None) -> dict[str, Any] | None:
    """The sandbox of one job, as plain data for spec.json (``wrap`` turns it into a command).

    etc: files every replica sees at their /etc path; hosts: {hostname: its /etc/hosts} (``etc_files``).

    outputs: (the project's outputs folder, the attempt's folder in it): all of it read-only at
    myapp.outputs.declarations.MOUNT, the attempt's own read-write over it (what a pod's volume mounts do).
    read_outputs: (the project's outputs folder, folders in it, "" for all): each read-only at its
    place under MOUNT, nothing writable (a notebook, a model server).
    checkpoint: (the task's checkpoint folder, its path relative to the checkpoints volume): read-write at
    its place under myapp.outputs.checkpoints.MOUNT, kept across the task's attempts."""
    if not isolation.sandboxed:
        return None
    view = _View()
    read_only = sorted({Path(p) for p in read_only}, key=lambda p: len(p.parts))
    resolv = Path("/etc/resolv.conf")
    if resolv.is_symlink() and Path(os.path.realpath(resolv)).is_file():  # often into /run, not in the sandbox
        read_only.append(Path(os.path.realpath(resolv)))
    for path in read_only:
        view.bind("--ro-bind", path)
    hidden = [Path(p) for p in hidden]
    for path in hidden:  # MYAPP_HOME inside a read-only folder (say, next to the venv) stays out of reach
        view.mask(path)
    for path in read_only:  # asked for explicitly, though inside a hidden folder
        if any(_under(path, h) and path != h for h in hidden):
            view.bind("--ro-bind", path)
    for target, source in etc.items():
        view.bind("--ro-bind", source, Path(target))
    view.bind("--bind", data_dir)
    view.bind("--bind", cwd)
    if outputs is not None:
        root, attempt = outputs
        view.bind("--ro-bind", root, Path(MOUNT))
        view.bind("--bind", root / attempt, Path(MOUNT) / attempt)
    if read_outputs is not None:
        root, folders = read_outputs
        for relative in sorted(folders, key=len):
            view.bind("--ro-bind", root / relative, Path(MOUNT) / relative)  # "": the folder itself
    if checkpoint is not None:
        folder, relative = checkpoint
        view.bind("--bind", folder, Path(CHECKPOINT_MOUNT) / relative)
    view.mask(cwd / ".myapp")  # the supervisor's files: the spec (with the job's secrets), state, logs
    view.read_only += ["--chdir", str(cwd)]
    return _config(isolation.mode, isolation.bwrap or "bwrap", uid, view, hosts)


def _config(mode: str, bwrap: str, uid: int | None, view: _View,
            hosts: dict[str, Path] | None = None) -> dict[str, Any]:
    return {"mode": mode, "bwrap": bwrap, "uid": uid, "args": _base_args(mode) + view.finish(),
            "hosts": {name: str(path) for name, path in (hosts or {}).items()},
            "env": shutil.which("env") or "/usr/bin/env", "setpriv": shutil.which("setpriv") or "/usr/bin/setpriv",
            "as_root": mode == UID and in_platform_namespace()}


def _base_args(mode: str) -> list[str]:
    args = ["--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent"]  # the supervisor gone (even SIGKILLed): the whole sandbox dies
    if mode == USERNS:
        args += ["--unshare-user", "--disable-userns"]  # no nested namespace to regain capabilities in
    args += ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    args += ["--ro-bind", "/etc", "/etc", "--ro-bind-try", "/sys", "/sys", "--proc", "/proc", "--dev", "/dev",
             "--perms", "1777", "--tmpfs", "/dev/shm", "--perms", "1777", "--tmpfs", "/tmp",
             "--dir", "/var", "--perms", "1777", "--tmpfs", "/var/tmp"]
    return args


def wrap(config: dict[str, Any], argv: list[str], hostname: str, gpus: bool) -> list[str]:
    """The command that runs ``argv`` in the job's sandbox.

    bwrap itself ignores SIGTERM (``env --ignore-signal``): a graceful stop reaches the job's
    processes (same process group) while bwrap waits for them; the job gets the default
    disposition back (``env --default-signal``). When the job's main process exits, bwrap exits
    and the sandbox's PID namespace dies with everything left in it.
    """
    cmd = [config["env"], "--ignore-signal=TERM"]
    if config.get("as_root"):  # the platform's user namespace: bwrap as its root, the job then as its project's uid
        cmd += [config["setpriv"], "--reuid=0", "--regid=0", "--clear-groups", "--"]
    cmd += [config["bwrap"], *config["args"]]
    hosts = config.get("hosts", {}).get(hostname)  # a spec written before per-pod hosts files has none
    if hosts is not None:
        cmd += ["--ro-bind", hosts, "/etc/hosts"]
    cmd += ["--hostname", hostname]
    if gpus:  # CUDA_VISIBLE_DEVICES picks the job's devices among these
        for device in sorted(glob.glob("/dev/nvidia*")):
            cmd += ["--dev-bind", device, device]
    cmd.append("--")
    if config["mode"] == UID:
        uid = str(config["uid"])
        cmd += [config["setpriv"], "--reuid", uid, "--regid", uid, "--clear-groups", "--inh-caps=-all",
                "--bounding-set=-all", "--no-new-privs", "--"]
    return [*cmd, config["env"], "--default-signal=TERM", "--", *argv]


def etc_files(folder: Path, uid: int | None,
              hostnames: Iterable[str]) -> tuple[dict[str, Path], dict[str, Path]]:
    """A passwd entry for the project uid ({/etc path: file}), and each pod's /etc/hosts ({hostname: file}):
    every pod of the job on loopback, and the pod's own name first, so that 127.0.0.1's name (the canonical
    name ``socket.getfqdn()`` returns) is the pod's own, as its address's is in Kubernetes. With the host's
    ``localhost`` first, every replica of a gang had one identity: torchrun's rendezvous names a node
    ``<fqdn>_<pid>_<n>``, and each replica's agent is PID 2 of its own namespace, so the second agent was
    taken for the first rejoining and the gang never met."""
    folder.mkdir(mode=0o700, exist_ok=True)
    out = {}
    pods = sorted(set(hostnames))
    shared = _read("/etc/hosts") + f"# myapp: the pods of this job\n127.0.0.1\t{' '.join(pods)}\n"
    hosts = {pod: _write(folder / f"hosts-{index}", f"127.0.0.1\t{pod}\n" + shared)
             for index, pod in enumerate(pods)}  # numbered: a file name never made of a manifest's name
    if uid is not None:
        entry = f"{JOB_USER}:x:{uid}:{uid}:myapp job:{JOB_HOME}:/usr/sbin/nologin\n"
        out["/etc/passwd"] = _write(folder / "passwd", _read("/etc/passwd") + entry)
        out["/etc/group"] = _write(folder / "group", _read("/etc/group") + f"{JOB_USER}:x:{uid}:\n")
    return out, hosts


def _read(path: str) -> str:
    try:
        text = Path(path).read_text()
    except OSError:
        return ""
    return text if text.endswith("\n") or not text else text + "\n"


def _write(path: Path, text: str) -> Path:
    fd, tmp = tempfile.mkstemp(dir=path.parent)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.chmod(tmp, 0o644)  # read by bwrap; the folder around it stays private
    os.replace(tmp, path)
    return path


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


class _View:
    """bwrap mount arguments for host paths at the same place, in order, creating the folders above
    them (bwrap would make those 0700 root, which a project uid could not pass through)."""

    # What _base_args mounts: (path, shows the host's folder there) -- /tmp is a fresh tmpfs, not the host's.
    SYSTEM = ((Path("/usr"), True), (Path("/etc"), True), (Path("/sys"), True), (Path("/proc"), False),
              (Path("/dev"), False), (Path("/tmp"), False), (Path("/var"), False), (Path("/var/tmp"), False))

    def __init__(self) -> None:
        self.args: list[str] = []
        self.layers: list[tuple[Path, bool]] = list(self.SYSTEM)
        self.dirs: set[Path] = {Path("/")}
        self.read_only: list[str] = []  # remounted at the end: folders may still be made inside until then

    def visible(self, path: Path) -> bool:
        """Does ``path`` exist in the sandbox as built so far? The last layer over it decides."""
        if path in self.dirs:
            return True
        for layer, shows_host in reversed(self.layers):
            if _under(path, layer):
                return shows_host or path == layer
        return False

    def _parents(self, target: Path) -> None:
        for parent in reversed(target.parents):
            if not self.visible(parent):
                self.args += ["--dir", str(parent)]
                self.dirs.add(parent)

    def bind(self, kind: str, source: Path, target: Path | None = None) -> None:
        target = Path(target or source)
        if kind == "--ro-bind" and target == source and self.visible(target) and target not in self.dirs \
                and any(shows and _under(target, layer) for layer, shows in self.layers):
            return  # already in view, read-only (say, a Python under /usr)
        self._parents(target)
        self.args += [kind, str(source), str(target)]
        self.layers.append((target, True))

    def mask(self, path: Path) -> None:
        """An empty read-only folder over ``path``, if the host's ``path`` is in view."""
        if not path.is_dir() or path in self.dirs or not self.visible(path):
            return
        self.args += ["--tmpfs", str(path)]
        self.layers.append((path, False))
        self.read_only += ["--remount-ro", str(path)]

    def finish(self) -> list[str]:
        return self.args + self.read_only
