"""Who the platform's processes run as when ``myapp run`` is started as root: the platform user.

``MYAPP_PLATFORM_USER`` (default ``myapp``; made as a system user with a group of its own when the machine has
none) runs web, worker, beat and the notebook proxy, each through ``myapp.host.launch`` (a user namespace
where it holds capabilities over its own and the projects' uids only). ``MYAPP_PLATFORM_USER=root`` keeps
the earlier way, everything as root. Before they start, what root made under MYAPP_HOME (``myapp init``, an
earlier start as root) becomes the platform user's (``hand_over``).
"""
from __future__ import annotations

import fcntl
import os
import pwd
import shutil
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..backends.local.sandbox import UID_BASE, has_account, uid_base, uid_count
from ..rendering.catalog import SOURCE_ROOT  # the source tree: the package, job templates, the built UI

USER_VAR = "MYAPP_PLATFORM_USER"
DEFAULT_USER = "myapp"
USERADD_LOCK = "/run/myapp-platform-user.lock"  # root's /run: nobody else can plant a link there


class PlatformUserError(RuntimeError):
    """The platform user cannot be made or used here (said at start, in plain words)."""


@dataclass(frozen=True)
class PlatformUser:
    name: str
    uid: int
    gid: int
    inner_root: int  # the host uid the namespace's root maps to: the spare uid just below the projects' range
    uid_base: int
    uid_count: int
    home: Path

    def command(self, argv: list[str], reach: list[Path]) -> list[str]:
        """``argv`` started by the launcher as this user; ``reach``: folders it must be able to enter."""
        out = [sys.executable, "-m", "myapp.host.launch", "--user", self.name, "--inner-root", str(self.inner_root),
               "--uid-base", str(self.uid_base), "--uid-count", str(self.uid_count), "--home", str(self.home)]
        for path in reach:
            out += ["--reach", str(path)]
        return [*out, "--", *argv]


def wanted() -> str | None:
    """The platform user's name; None when the admin keeps everything as root."""
    name = os.environ.get(USER_VAR, DEFAULT_USER).strip()
    return None if name in ("", "root") else name


def ensure(name: str) -> pwd.struct_passwd:
    """The account ``name``, made (a system user: no home, no login shell, its own group) if it is missing."""
    try:
        return pwd.getpwnam(name)
    except KeyError:
        pass
    useradd = shutil.which("useradd")
    if useradd is None:
        raise PlatformUserError(f"there is no user {name!r} and no useradd to make one; make it, "
                                f"or set {USER_VAR}=root")
    # Two platforms started at once on a new machine: useradd alone made the account twice, with two uids.
    lock = os.open(USERADD_LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            return pwd.getpwnam(name)  # made by the other while this one waited
        except KeyError:
            pass
        made = subprocess.run([useradd, "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
                               "--shell", "/usr/sbin/nologin", "--comment", "myapp platform", name],
                              capture_output=True, text=True, timeout=60)
    finally:
        os.close(lock)
    try:
        return pwd.getpwnam(name)
    except KeyError:
        raise PlatformUserError(f"useradd {name} failed: {made.stderr.strip()}") from None


def prepare(home: Path) -> PlatformUser | None:
    """The platform user for this start (None: not root, or the admin keeps root), MYAPP_HOME handed over."""
    name = wanted()
    if os.geteuid() != 0 or name is None:
        return None
    account = ensure(name)
    if account.pw_uid == 0:
        raise PlatformUserError(f"{USER_VAR}={name} is root; name an unprivileged user, or set {USER_VAR}=root")
    base, count = uid_base(), uid_count()
    if base <= account.pw_uid < base + count or base - 1 in (account.pw_uid, 0) or has_account(base - 1):
        raise PlatformUserError(f"user {name} (uid {account.pw_uid}) or uid {base - 1} clashes with the projects' "
                                f"uids from {base} ({UID_BASE})")
    hand_over(home, account)
    return PlatformUser(name, account.pw_uid, account.pw_gid, base - 1, base, count, home)


def reach(home: Path) -> list[Path]:
    """The folders the platform's processes need: the interpreter's installation, the source tree,
    MYAPP_HOME and any other existing absolute path a MYAPP_ setting names."""
    found = {Path(os.path.realpath(p)) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    found |= {Path(os.path.realpath(sys.executable)).parent, SOURCE_ROOT, home}
    for key, value in os.environ.items():
        if key.startswith("MYAPP_") and value.startswith("/") and os.path.exists(value):
            found.add(Path(os.path.realpath(value)))
    return sorted(found)


def hand_over(home: Path, account: pwd.struct_passwd) -> int:
    """Give the platform user what root made under ``home``; how many entries changed hands.

    By descriptor (``os.fwalk``, no link followed: a project's uid may own folders in here and swap one for
    a link), only entries root owns, and never a file with a second name (a hard link to a file elsewhere)."""
    changed = 0
    top = os.lstat(home)
    if stat.S_ISDIR(top.st_mode) and top.st_uid == 0:
        os.chown(home, account.pw_uid, account.pw_gid, follow_symlinks=False)
        changed += 1
    for _path, dirs, files, folder in os.fwalk(home, follow_symlinks=False):
        for name in dirs + files:
            try:  # a name a project's uid renames meanwhile is gone: nothing of root's to hand over there
                info = os.stat(name, dir_fd=folder, follow_symlinks=False)
                if info.st_uid != 0 or (not stat.S_ISDIR(info.st_mode) and info.st_nlink > 1):
                    continue
                os.chown(name, account.pw_uid, account.pw_gid, dir_fd=folder, follow_symlinks=False)
            except FileNotFoundError:
                continue
            changed += 1
    return changed
