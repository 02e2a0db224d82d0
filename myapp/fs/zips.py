"""One zip of many files, each opened only when its turn comes and copied up to the size it was listed with
(a file a job still writes never grows the archive past what was counted)."""
from __future__ import annotations

import zipfile
from collections.abc import Callable, Iterable
from typing import IO

from .resolve import Refused

CHUNK = 1024 * 1024
Member = tuple[str, int, Callable[[], IO[bytes]]]  # (name in the zip, at most this many bytes, open it)


def write(out: IO[bytes], members: Iterable[Member]) -> list[str]:
    """The members as one deflated zip into ``out``; one no longer there (FileNotFoundError) or no longer
    a regular file beneath its folder (``Refused``) is left out. Returns the names written."""
    written = []
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, limit, opener in members:
            try:
                src = opener()
            except (FileNotFoundError, Refused):
                continue
            with src, zf.open(name, "w") as dst:
                left = limit
                while left > 0 and (data := src.read(min(CHUNK, left))):
                    dst.write(data)
                    left -= len(data)
            written.append(name)
    return written
