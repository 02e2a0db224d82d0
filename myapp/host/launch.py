"""Start one of the platform's processes without root: ``python -m myapp.host.launch --user U [--reach P]... -- cmd``.

Run by root (``myapp run``). The command runs as the unprivileged platform user U, in a user namespace of
its own whose map holds only U, the projects' uid range (``MYAPP_JOB_UID_BASE``, identity-mapped: files keep
their uids) and one spare uid as the namespace's root, and with every capability *in that namespace*. So the
worker still makes and deletes the projects' folders, gives them to each project's uid and starts their
sandboxes, while the host's root is mapped nowhere: the platform can touch no file but its own and its
projects', never becomes root on the machine, and Celery, seeing uid U, has nothing to warn about.

Stdlib only, and nothing but this file runs as root besides ``myapp run``'s loop: the parent writes the
namespace's maps (only root may map uids it is not), then waits, passing on SIGTERM/SIGINT/SIGHUP, and exits
with the command's code; the child gets a mount namespace too, where the folders U must reach (the
interpreter, the source tree, MYAPP_HOME) are bound over a tmpfs when a folder above them is closed to U
(a Python under a 0700 /root, say), drops to U keeping its capabilities as ambient ones, and execs.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import pwd
import signal
import stat
import sys
from pathlib import Path

CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 1 << 18
PR_SET_PDEATHSIG, PR_SET_KEEPCAPS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE = 1, 8, 47, 2
CAPABILITY_VERSION_3 = 0x20080522
FAILED = 126  # the namespace could not be made: `myapp run` says why and runs as before

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def maps(user: pwd.struct_passwd, inner_root: int, base: int, count: int) -> tuple[str, str]:
    """The namespace's uid_map and gid_map: inside id, outside id, how many."""
    uids = f"0 {inner_root} 1\n{user.pw_uid} {user.pw_uid} 1\n{base} {base} {count}\n"
    gids = f"0 {inner_root} 1\n{user.pw_gid} {user.pw_gid} 1\n{base} {base} {count}\n"
    return uids, gids


def reachable(path: Path, user: pwd.struct_passwd) -> bool:
    """Can ``user`` (no supplementary groups) pass through the folder ``path``?"""
    info = path.stat()
    if info.st_uid == user.pw_uid:
        return bool(info.st_mode & stat.S_IXUSR)
    if info.st_gid == user.pw_gid:
        return bool(info.st_mode & stat.S_IXGRP)
    return bool(info.st_mode & stat.S_IXOTH)


def closed_above(paths: list[Path], user: pwd.struct_passwd) -> dict[Path, list[Path]]:
    """{the topmost folder closed to ``user`` above some of ``paths``: those paths, shallowest first}."""
    out: dict[Path, list[Path]] = {}
    for path in sorted(paths, key=lambda p: len(p.parts)):
        for folder in reversed(path.parents):  # from / down: the first closed one is the topmost
            if not reachable(folder, user):
                out.setdefault(folder, []).append(path)
                break
    return out


def _mount_reach(paths: list[Path], user: pwd.struct_passwd) -> None:
    """Each folder closed to ``user`` above a path it needs becomes a tmpfs holding just those paths."""
    _check(_libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "making / private")
    tops = closed_above(paths, user)
    # Opened while still the host's root by uid (the owner of a 0700 /root), before the tmpfs hides them.
    held = {top: [(path, os.open(path, os.O_PATH)) for path in needed] for top, needed in tops.items()}
    _libc.setfsgid(user.pw_gid)  # what is made in the tmpfs is the user's (the host's root has no id in here)
    _libc.setfsuid(user.pw_uid)
    for top, paths_held in held.items():
        options = f"mode=0755,uid={user.pw_uid},gid={user.pw_gid}".encode()
        _check(_libc.mount(b"tmpfs", str(top).encode(), b"tmpfs", 0, options), f"a tmpfs over {top}")
        for path, fd in paths_held:
            os.makedirs(path, exist_ok=True)
            _check(_libc.mount(f"/proc/self/fd/{fd}".encode(), str(path).encode(), None, MS_BIND | MS_REC, None),
                   f"binding {path}")
            os.close(fd)


def _become(user: pwd.struct_passwd) -> None:
    """Drop to ``user``, keeping every capability of the namespace, as ambient ones across exec."""
    _check(_libc.prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0), "keeping capabilities")
    os.setgroups([user.pw_gid])
    os.setresgid(user.pw_gid, user.pw_gid, user.pw_gid)
    os.setresuid(user.pw_uid, user.pw_uid, user.pw_uid)
    header, data = _CapHeader(CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    _check(_libc.capget(ctypes.byref(header), data), "reading capabilities")
    for half in data:
        half.effective = half.inheritable = half.permitted
    _check(_libc.capset(ctypes.byref(header), data), "setting capabilities")
    last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    for cap in range(last + 1):
        _check(_libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0), f"ambient capability {cap}")


def _child(args: argparse.Namespace, user: pwd.struct_passwd, unshared: int, mapped: int) -> None:
    launcher = os.getppid()
    _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "a user namespace")
    os.write(unshared, b"u")
    if os.read(mapped, 1) != b"m":
        raise OSError("the launcher did not map the namespace")
    _mount_reach([Path(p) for p in args.reach if Path(p).exists()], user)
    _become(user)
    # After the uid changed (which clears it): the launcher killed (`myapp run`'s last resort after a stop's
    # grace), the command dies too; an orderly stop reaches it as the SIGTERM the launcher passes on.
    _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "dying with the launcher")
    if os.getppid() != launcher:
        raise OSError("the launcher is gone")
    env = dict(os.environ, USER=user.pw_name, LOGNAME=user.pw_name, HOME=args.home or os.environ.get("HOME", "/"))
    os.execvpe(args.command[0], args.command, env)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m myapp.host.launch")
    parser.add_argument("--user", required=True)
    parser.add_argument("--inner-root", type=int, required=True, help="the host uid the namespace's root maps to")
    parser.add_argument("--uid-base", type=int, required=True)
    parser.add_argument("--uid-count", type=int, required=True)
    parser.add_argument("--reach", action="append", default=[])
    parser.add_argument("--home")
    parser.add_argument("command", nargs="+")
    args = parser.parse_args(argv)
    user = pwd.getpwnam(args.user)
    unshared_r, unshared_w = os.pipe()
    mapped_r, mapped_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(unshared_r)
        os.close(mapped_w)
        try:
            _child(args, user, unshared_w, mapped_r)
        except OSError as exc:
            print(f"myapp: cannot start {args.command[0]} as {user.pw_name}: {exc}", file=sys.stderr)
        os._exit(FAILED)
    os.close(unshared_w)
    os.close(mapped_r)
    if os.read(unshared_r, 1) == b"u":
        uids, gids = maps(user, args.inner_root, args.uid_base, args.uid_count)
        Path(f"/proc/{pid}/uid_map").write_text(uids)
        Path(f"/proc/{pid}/gid_map").write_text(gids)
        os.write(mapped_w, b"m")
    def pass_on(signum: int, _frame: object) -> None:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:  # ended already: waitpid below collects it
            pass

    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, pass_on)
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)
        except InterruptedError:
            continue


if __name__ == "__main__":
    sys.exit(main())
