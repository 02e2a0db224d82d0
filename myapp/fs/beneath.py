"""Folders a job can write, touched only by descriptor beneath a trusted folder and never through a link.

A job or notebook owns its attempt, outputs, data, volume and work folders: it can rename, swap and link
anything in them while the platform, as root, reads, lists, zips, chmods or deletes there. A path checked
and then used is a race the job wins (a symlink renamed over a folder between the check and the open).
So every touch starts from a descriptor of a folder the platform trusts (``Folder.open``: one a job cannot
rename, since its parent is the platform's) and resolves the rest beneath it with Linux ``openat2`` and
``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS``, or, where the kernel lacks it, one
``O_NOFOLLOW`` component at a time from directory descriptors. Listing, walking, chmod/chown and deletes go
by descriptor too (``os.scandir(fd)``, ``dir_fd=``), so a folder swapped mid-walk is never entered.

A link anywhere on the way, a component that is not a folder, or one swapped mid-walk is ``Refused``
(a conflict; callers serving a file say "not found"); what is absent is ``FileNotFoundError`` as ``os``
says it. Names are relative, "/"-separated, without "", "." or "..".
"""
from __future__ import annotations

import functools
import os
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, BinaryIO

from . import trees, zips
from .resolve import DIRECTORY, READ, REFUSED, Refused, parts, refused, resolve
from .trees import Entry

__all__ = ["Entry", "Folder", "Refused"]


class Folder:
    """A trusted folder, open; every method reaches what is beneath it by descriptor, never through a link."""

    def __init__(self, fd: int, label: str) -> None:
        self.fd, self.label = fd, label

    @classmethod
    def open(cls, path: Path | str, *, create: bool = False, mode: int = 0o700) -> Folder:
        """The platform's own folder (above it, the platform's own path; its last component is not followed).
        ``create``: made with its parents when missing."""
        if create:
            Path(path).mkdir(mode=mode, parents=True, exist_ok=True)
        try:
            return cls(os.open(path, DIRECTORY), str(path))
        except OSError as exc:
            raise refused(exc, str(path)) from None

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __enter__(self) -> Folder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _where(self, relative: str) -> str:
        return f"{self.label}/{relative}" if relative else self.label

    def _open(self, relative: str, flags: int, mode: int = 0) -> int:
        try:
            return resolve(self.fd, relative, flags, mode)
        except OSError as exc:
            raise refused(exc, self._where(relative)) from None

    def _parent(self, relative: str) -> tuple[int, str]:
        """(a new descriptor of relative's folder, its last name)."""
        names = parts(relative)
        if not names:
            raise ValueError("the folder itself has no name in its parent")
        return self._open("/".join(names[:-1]), DIRECTORY), names[-1]

    def _parent_if(self, relative: str, missing_ok: bool) -> tuple[int, str] | None:
        """``_parent``, or None for a missing folder when ``missing_ok`` (the deletes' "already gone")."""
        try:
            return self._parent(relative)
        except FileNotFoundError:
            if missing_ok:
                return None
            raise

    # ---- reading ----------------------------------------------------------------------------------
    def folder(self, relative: str, *, create: bool = False, mode: int = 0o700) -> Folder:
        """A folder beneath, open (``create``: its missing components made with ``mode``)."""
        if create:
            self.make_dirs(relative, mode)
        return Folder(self._open(relative, DIRECTORY), self._where(relative))

    def open_file(self, relative: str) -> BinaryIO:
        """A regular file beneath, open for reading; ``Refused`` for anything else there."""
        fd = self._open(relative, READ)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise Refused(f"{self._where(relative)} is not a regular file")
            os.set_blocking(fd, True)
            return os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise

    def read(self, relative: str, limit: int) -> bytes:
        with self.open_file(relative) as fh:
            return fh.read(limit)

    def stat(self, relative: str) -> os.stat_result:
        """The entry's own stat (a link's, not its target's); links on the way are refused."""
        if not parts(relative):
            return os.fstat(self.fd)
        parent, name = self._parent(relative)
        try:
            return os.stat(name, dir_fd=parent, follow_symlinks=False)
        finally:
            os.close(parent)

    def is_dir(self, relative: str) -> bool:
        """A real folder there (no link on the way or at the end)?"""
        try:
            return stat.S_ISDIR(self.stat(relative).st_mode)
        except (FileNotFoundError, Refused):
            return False

    def entries(self, relative: str = "", *, strict: bool = False) -> Iterator[Entry]:
        """Everything beneath ``relative`` (``trees.entries``): each folder before what it holds, no link entered."""
        top = self._open(relative, DIRECTORY)
        try:
            yield from trees.entries(top, relative, self.label, strict=strict)
        finally:
            os.close(top)

    def folders(self, relative: str = "") -> list[str]:
        """The names of the real folders (no links) directly in ``relative``, sorted."""
        top = self._open(relative, DIRECTORY)
        try:
            with os.scandir(top) as found:
                return sorted(e.name for e in found if e.is_dir(follow_symlinks=False))
        finally:
            os.close(top)

    def files(self, relative: str = "", limit: int | None = None) -> list[tuple[str, int]]:
        """Regular files beneath (path relative to ``relative``, size), links skipped, in os.walk's order:
        a folder's files (sorted), then its folders' (sorted); at most ``limit``, the walk stops there."""
        out: list[tuple[str, int]] = []
        top = self._open(relative, DIRECTORY)
        try:
            trees.files(top, "", 1, out, limit)
        finally:
            os.close(top)
        return out

    # ---- writing ----------------------------------------------------------------------------------
    def make_dirs(self, relative: str, mode: int = 0o700, *, owner: int | None = None, every: bool = False) -> None:
        """Make the missing folders of ``relative``; those made (``every``: each one on the way, and this
        folder itself) get ``mode`` and, given ``owner``, that uid and gid, set by descriptor."""
        current = os.dup(self.fd)
        try:
            if every:
                _own(current, mode, owner)
            for name in parts(relative):
                try:
                    os.mkdir(name, mode, dir_fd=current)
                    made = True
                except FileExistsError:
                    made = False
                try:
                    child = os.open(name, DIRECTORY, dir_fd=current)
                except OSError as exc:
                    raise refused(exc, self._where(relative)) from None
                os.close(current)
                current = child
                if made or every:
                    _own(current, mode, owner)
        finally:
            os.close(current)

    def set_mode(self, relative: str, mode: int) -> None:
        """The entry's mode, set on the entry itself (``Refused`` for a link)."""
        if not _chmod_unless_link(self._open(relative, os.O_PATH), mode):
            raise Refused(f"{self._where(relative)} is a link")

    def chown(self, relative: str, uid: int, gid: int) -> None:
        """The entry's owner, set on the entry itself (a link's own, never its target's)."""
        if not parts(relative):
            os.fchown(self.fd, uid, gid)
            return
        parent, name = self._parent(relative)
        try:
            os.chown(name, uid, gid, dir_fd=parent, follow_symlinks=False)
        finally:
            os.close(parent)

    def own_tree(self, relative: str, uid: int, gid: int, mode: Callable[[int], int]) -> None:
        """Every entry beneath ``relative`` (and it) to uid:gid, and each but links to ``mode(its mode)``;
        ``Refused`` for a tree deeper than MAX_DEPTH (never left half the job's)."""
        self.chown(relative, uid, gid)
        self.set_mode(relative, mode(stat.S_IMODE(self.stat(relative).st_mode)))
        for entry in self.entries(relative, strict=True):
            os.chown(entry.name, uid, gid, dir_fd=entry.dir_fd, follow_symlinks=False)
            if not stat.S_ISLNK(entry.stat.st_mode):
                _chmod_unless_link(os.open(entry.name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=entry.dir_fd),
                                   mode(stat.S_IMODE(entry.stat.st_mode)))

    def create(self, relative: str, mode: int = 0o600, *, exclusive: bool = True) -> BinaryIO:
        """A new file beneath, open for writing (``exclusive``: FileExistsError when there; else truncated)."""
        parent, name = self._parent(relative)
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_EXCL if exclusive else os.O_TRUNC)
        try:
            fd = os.open(name, flags, mode, dir_fd=parent)
        except OSError as exc:
            raise refused(exc, self._where(relative)) from None
        finally:
            os.close(parent)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise Refused(f"{self._where(relative)} is not a regular file")
            return os.fdopen(fd, "wb")
        except BaseException:
            os.close(fd)
            raise

    def write(self, relative: str, data: bytes, mode: int = 0o600) -> None:
        """The file's whole content, written aside and renamed over it: readers see old or new, never half."""
        parent, name = self._parent(relative)
        try:
            aside = f".{name}.{secrets.token_hex(6)}~"
            fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode,
                         dir_fd=parent)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(aside, name, src_dir_fd=parent, dst_dir_fd=parent)
        finally:
            os.close(parent)

    def replace(self, source: str, target: str) -> None:
        """Rename ``source`` over ``target``, both beneath (the names themselves, never a link's target)."""
        src_parent, src = self._parent(source)
        try:
            dst_parent, dst = self._parent(target)
            try:
                os.replace(src, dst, src_dir_fd=src_parent, dst_dir_fd=dst_parent)
            finally:
                os.close(dst_parent)
        finally:
            os.close(src_parent)

    def utime(self, relative: str) -> None:
        """Its modification time to now (by descriptor)."""
        fd = self._open(relative, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
        try:
            os.utime(fd)
        finally:
            os.close(fd)

    def symlink(self, target: str, relative: str) -> bool:
        """A link at ``relative`` (its folder reached without links) to ``target``; False when a name is there."""
        parent, name = self._parent(relative)
        try:
            os.symlink(target, name, dir_fd=parent)
            return True
        except FileExistsError:
            return False
        finally:
            os.close(parent)

    # ---- deleting ---------------------------------------------------------------------------------
    def remove(self, relative: str, *, missing_ok: bool = True) -> None:
        """Unlink a file or link beneath (its name: a link's target is never touched)."""
        found = self._parent_if(relative, missing_ok)
        if found is None:
            return
        parent, name = found
        try:
            os.unlink(name, dir_fd=parent)
        except FileNotFoundError:
            if not missing_ok:
                raise
        finally:
            os.close(parent)

    def remove_tree(self, relative: str, *, missing_ok: bool = True) -> None:
        """Delete ``relative`` and all beneath it by descriptor (``os.unlink``/``os.rmdir`` with ``dir_fd``,
        entering folders O_NOFOLLOW): a link is removed as a name, its target never entered. A link on the
        way to ``relative`` is ``Refused``."""
        found = self._parent_if(relative, missing_ok)
        if found is None:
            return
        parent, name = found
        try:
            try:
                fd = os.open(name, DIRECTORY, dir_fd=parent)
            except FileNotFoundError:
                if missing_ok:
                    return
                raise
            except OSError as exc:
                if exc.errno not in REFUSED:
                    raise
                os.unlink(name, dir_fd=parent)  # a file or a link: its name goes, nothing it points at
                return
            try:
                trees.empty(fd)
            finally:
                os.close(fd)
            try:
                os.rmdir(name, dir_fd=parent)
            except FileNotFoundError:
                pass
        finally:
            os.close(parent)

    def clear(self, relative: str = "") -> None:
        """Delete everything beneath ``relative``, keeping the folder itself."""
        fd = self._open(relative, DIRECTORY)
        try:
            trees.empty(fd)
        finally:
            os.close(fd)

    # ---- zip --------------------------------------------------------------------------------------
    def write_zip(self, out: IO[bytes], files: Iterable[tuple[str, int]]) -> list[str]:
        """The regular files (relative path, at most this many bytes each) as one zip into ``out``; those no
        longer there, or no longer files, are left out. Returns the paths written."""
        return zips.write(out, [(path, limit, functools.partial(self.open_file, path)) for path, limit in files])


def _own(fd: int, mode: int, owner: int | None) -> None:
    if owner is not None:
        os.fchown(fd, owner, owner)
    os.fchmod(fd, mode)


def _chmod_unless_link(fd: int, mode: int) -> bool:
    """Set the mode of an O_PATH descriptor's own inode (what fchmodat(AT_SYMLINK_NOFOLLOW) would do) unless
    it is a link (False); the descriptor is closed."""
    try:
        if stat.S_ISLNK(os.fstat(fd).st_mode):
            return False
        os.chmod(f"/proc/self/fd/{fd}", mode)
        return True
    finally:
        os.close(fd)
