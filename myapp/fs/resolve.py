"""Resolving a name beneath a trusted folder's descriptor without following a link at any component.

Linux ``openat2`` with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS`` does it in one call;
where the kernel lacks it (ENOSYS, or an architecture whose number is not known here) the name is walked one
``O_NOFOLLOW`` component at a time from directory descriptors, which is as safe, only slower. A link on the
way, a file where a folder must be, an escape or a rename the kernel noticed is ``Refused``; what is absent
is ``FileNotFoundError``. ``myapp.fs.beneath`` is what callers use.
"""
from __future__ import annotations

import ctypes
import errno
import os
import platform
from collections.abc import Callable

from ..errors import DomainError, Kind

RESOLVE_NO_MAGICLINKS, RESOLVE_NO_SYMLINKS, RESOLVE_BENEATH = 0x02, 0x04, 0x08
RESOLVE = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
OPENAT2 = {"x86_64": 437, "aarch64": 437}  # the syscall's number, where it is known here
DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC  # NONBLOCK: a FIFO never hangs
# What the kernel answers for a link on the way (ELOOP; EMLINK on some filesystems), a file where a folder
# must be (ENOTDIR), an escape (EXDEV), a rename during resolution (EAGAIN) or a socket (ENXIO).
REFUSED = frozenset({errno.ELOOP, errno.EMLINK, errno.ENOTDIR, errno.EXDEV, errno.EAGAIN, errno.ENXIO})
MAX_DEPTH = 256  # folders open at once while walking; deeper trees are listed no further, deletes flatten them
EAGAIN_TRIES = 8


class Refused(DomainError):
    """A link, a non-folder or a folder swapped where a walk beneath a trusted folder had to pass."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind=Kind.CONFLICT)


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


NUMBER = OPENAT2.get(platform.machine()) if platform.system() == "Linux" else None


def _syscall() -> Callable[..., int] | None:
    if NUMBER is None:
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc.syscall


_openat2: Callable[..., int] | None = _syscall()  # None: the component walk (tests set it so to try that path)


def openat2_in_use() -> bool:
    return _openat2 is not None


def parts(relative: str) -> list[str]:
    """The components of a relative name; ValueError for one that could leave the folder or is ambiguous."""
    if relative in ("", "."):
        return []
    split = relative.split("/")
    if relative.startswith("/") or "\0" in relative or any(p in ("", ".", "..") for p in split):
        raise ValueError(f"{relative!r} is not a plain relative path")
    return split


def refused(exc: OSError, where: str) -> OSError | Refused:
    """``Refused`` for what the kernel answers to a link or a swap on the way; other errors as they are."""
    if exc.errno in REFUSED:
        return Refused(f"{where}: a link, a file where a folder must be, or a folder swapped on the way "
                       f"({os.strerror(exc.errno or 0)})")
    return exc


def resolve(dir_fd: int, relative: str, flags: int, mode: int = 0) -> int:
    """A descriptor of ``relative`` beneath ``dir_fd``, no link followed at any component."""
    names = parts(relative)
    flags |= os.O_NOFOLLOW | os.O_CLOEXEC
    if not names:
        return os.open(".", flags, mode, dir_fd=dir_fd)
    syscall = _openat2
    if syscall is None:
        return _walk_open(dir_fd, names, flags, mode)
    how = _OpenHow(flags, mode if flags & os.O_CREAT else 0, RESOLVE)
    path = "/".join(names).encode()
    for _ in range(EAGAIN_TRIES):  # EAGAIN: a rename somewhere during the lookup; the kernel asks to try again
        fd = syscall(NUMBER, dir_fd, path, ctypes.byref(how), ctypes.sizeof(how))
        if fd >= 0:
            return int(fd)
        code = ctypes.get_errno()
        if code == errno.ENOSYS:  # an older kernel: the walk from now on
            _use_walk()
            return _walk_open(dir_fd, names, flags, mode)
        if code == errno.EPERM:  # a seccomp profile that predates openat2 (older container runtimes) says EPERM
            return _walk_open(dir_fd, names, flags, mode)
        if code != errno.EAGAIN:
            break
    raise OSError(code, os.strerror(code), relative)


def _use_walk() -> None:
    global _openat2
    _openat2 = None


def _walk_open(dir_fd: int, names: list[str], flags: int, mode: int) -> int:
    current, opened = dir_fd, []
    try:
        for name in names[:-1]:
            current = os.open(name, DIRECTORY, dir_fd=current)
            opened.append(current)
        return os.open(names[-1], flags, mode, dir_fd=current)
    finally:
        for fd in opened:
            os.close(fd)


