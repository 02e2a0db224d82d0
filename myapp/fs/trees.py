"""Walking and deleting a tree by directory descriptors: every folder entered ``O_NOFOLLOW`` from its
parent's descriptor, every entry stat'ed, unlinked or removed by name relative to that descriptor, so a
folder a job swaps for a link mid-walk is never entered and nothing outside the tree is touched."""
from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator
from typing import NamedTuple

from .resolve import DIRECTORY, MAX_DEPTH, REFUSED, Refused, refused


class Entry(NamedTuple):
    """One thing beneath a folder, seen by a walk: its folder's descriptor (valid during the walk's step),
    its name there, its relative path and its own stat (never a link's target)."""

    dir_fd: int
    name: str
    path: str
    stat: os.stat_result




def entries(top: int, prefix: str, where: str, *, strict: bool = False) -> Iterator[Entry]:
    """Everything beneath the folder ``top`` (each folder before what it holds; names sorted), never
    entering a link. A folder swapped for anything else mid-walk is skipped; deeper than MAX_DEPTH, not
    entered (``strict``: Refused instead). ``top`` stays the caller's."""
    stack: list[tuple[int, str, Iterator[str]]] = [(top, prefix, iter(names(top)))]
    try:
        while stack:
            fd, folder, pending = stack[-1]
            name = next(pending, None)
            if name is None:
                done = stack.pop()[0]
                if done != top:
                    os.close(done)
                continue
            path = f"{folder}/{name}" if folder else name
            try:
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            yield Entry(fd, name, path, info)
            if not stat.S_ISDIR(info.st_mode):
                continue
            if len(stack) >= MAX_DEPTH:
                if strict:
                    raise Refused(f"{where}/{path} is more than {MAX_DEPTH} folders deep")
                continue
            try:
                child = os.open(name, DIRECTORY, dir_fd=fd)
            except FileNotFoundError:
                continue
            except OSError as exc:
                if strict or exc.errno not in REFUSED:
                    raise refused(exc, f"{where}/{path}") from None
                continue
            stack.append((child, path, iter(names(child))))
    finally:
        for fd, _, _ in stack:
            if fd != top:
                os.close(fd)


def names(fd: int) -> list[str]:
    with os.scandir(fd) as it:
        return sorted(entry.name for entry in it)


def files(fd: int, prefix: str, depth: int, out: list[tuple[str, int]], limit: int | None) -> bool:
    """Files of the folder ``fd`` into ``out``, then its folders' (entered O_NOFOLLOW; one swapped meanwhile
    is skipped); True once ``limit`` is reached."""
    folders = []
    for name in names(fd):
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError:
            continue
        if stat.S_ISREG(info.st_mode):
            out.append((f"{prefix}{name}", info.st_size))
            if limit is not None and len(out) >= limit:
                return True
        elif stat.S_ISDIR(info.st_mode) and depth < MAX_DEPTH:
            folders.append(name)
    for name in folders:
        try:
            child = os.open(name, DIRECTORY, dir_fd=fd)
        except OSError as exc:
            if isinstance(exc, FileNotFoundError) or exc.errno in REFUSED:
                continue
            raise
        try:
            if files(child, f"{prefix}{name}/", depth + 1, out, limit):
                return True
        finally:
            os.close(child)
    return False


def empty(top: int) -> None:
    """Delete what the folder ``top`` holds, depth first through O_NOFOLLOW descriptors. Beyond MAX_DEPTH
    a folder is moved up into ``top`` (by descriptors, on the same filesystem) and emptied from there, so
    no tree is too deep; a folder the job keeps filling fails after a while rather than spin forever."""
    stack: list[tuple[int, str]] = [(top, "")]
    refills = 0
    try:
        while stack:
            fd = stack[-1][0]
            deeper = None
            with os.scandir(fd) as it:
                for entry in it:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            deeper = entry.name
                            break
                        os.unlink(entry.name, dir_fd=fd)
                    except FileNotFoundError:
                        continue
            if deeper is None:
                if len(stack) == 1:
                    return
                done, name = stack.pop()
                os.close(done)
                try:
                    os.rmdir(name, dir_fd=stack[-1][0])
                except FileNotFoundError:
                    pass
                except OSError as exc:
                    refills += 1
                    if exc.errno != errno.ENOTEMPTY or refills > 1000:
                        raise
                continue
            if len(stack) >= MAX_DEPTH:
                os.rename(deeper, f".deep-{secrets.token_hex(8)}", src_dir_fd=fd, dst_dir_fd=top)
                continue
            try:
                child = os.open(deeper, DIRECTORY, dir_fd=fd)
            except FileNotFoundError:
                continue
            except OSError as exc:
                if exc.errno not in REFUSED:
                    raise
                os.unlink(deeper, dir_fd=fd)  # swapped for a link or a file since the listing: the name goes
                continue
            stack.append((child, deeper))
    finally:
        for fd, _ in stack[1:]:
            os.close(fd)
