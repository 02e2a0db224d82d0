"""Reading log files in the record format of ``logcaps`` with time and memory bounded by what is returned.

A file is read in blocks from its end (the last lines, newest first) or forward from the record where a seq
starts (found by bisection: every record begins with its seq). A file holds one replica's lines; a
``ReplicaFiles`` source merges several by time. Files written before seqs were recorded (``<time> <stream>
<text>`` per line, seq = line number) are still read: their seqs come from counting newlines.
"""
from __future__ import annotations

import errno
import heapq
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Protocol

from ..fs.beneath import Folder
from .base import LogLine

BLOCK = 64 * 1024
MAX_RAW = 1 << 20  # a longer line (only in files of older writers) keeps its first and last halves of this
Keep = Callable[[LogLine], bool]


@dataclass(frozen=True)
class LogPage:
    """The last lines a reader asked for, oldest first, with where the log ends now."""

    lines: list[LogLine]
    cursor: dict[str, int]  # every replica's last seq (at least the one asked after): where to resume
    replicas: list[str] = field(default_factory=list)  # every replica that has lines


class LogSource(Protocol):
    """One attempt's log, wherever it is (a backend's live files or pods, the archive)."""

    def page(self, limit: int, keep: Keep, after: Mapping[str, int]) -> LogPage:
        """The last ``limit`` lines that ``keep`` keeps after the cursor ``after`` (replica -> seq)."""

    def lines(self, keep: Keep, after: Mapping[str, int]) -> Iterator[LogLine]:
        """Every kept line after the cursor, oldest first, read as it is consumed."""


def _trim(partial: bytes) -> bytes:
    half = MAX_RAW // 2
    return partial[:half] + partial[-half:]


def lines_backward(fh: BinaryIO, end: int, floor: int = 0, needle: bytes | None = None,
                   passed: Callable[[bytes], bool] | None = None) -> Iterator[tuple[bytes, bool]]:
    """(line without its newline, cut) of the complete lines in [floor, end), newest first; ``end`` is just
    after a newline. A line longer than MAX_RAW keeps its two ends (cut). With ``floor`` > 0 the line that
    crosses it is left out. With ``needle``, a block without it is passed over whole (a search costs a
    bytes compare per block), and ``passed`` is asked about the oldest line of each: True stops."""
    pos = end - 1  # the last newline is not a separator
    partial, cut = b"", False
    while pos > floor:
        size = min(BLOCK, pos - floor)
        pos -= size
        fh.seek(pos)
        block = fh.read(size)
        if needle is not None and needle not in block + partial:
            newline = block.find(b"\n")
            if newline < 0:
                partial = block + partial
            elif passed is not None and passed((block[newline + 1:newline + 64] + partial[:64])[:64]):
                return
            else:
                partial, cut = block[:newline], False
        else:
            parts = block.split(b"\n")
            parts[-1] += partial
            partial = parts[0]
            for raw in reversed(parts[1:]):
                yield (raw, cut) if len(raw) <= MAX_RAW else (_trim(raw), True)
                cut = False
        if len(partial) > MAX_RAW:
            partial, cut = _trim(partial), True
    if floor == 0 and end > 0:
        yield partial, cut


def lines_forward(fh: BinaryIO, start: int, end: int, needle: bytes | None = None) -> Iterator[tuple[bytes, bool]]:
    """(line without its newline, cut) of the complete lines in [start, end), oldest first; with ``needle``,
    blocks without it are passed over whole."""
    pos, partial, cut = start, b"", False
    while pos < end:
        fh.seek(pos)
        block = fh.read(min(BLOCK, end - pos))
        if not block:
            return
        pos += len(block)
        if needle is not None and needle not in partial + block:
            newline = block.rfind(b"\n")
            if newline < 0:
                partial += block
            else:
                partial, cut = block[newline + 1:], False
        else:
            parts = block.split(b"\n")
            parts[0] = partial + parts[0]
            partial = parts.pop()
            for raw in parts:
                yield (raw, cut) if len(raw) <= MAX_RAW else (_trim(raw), True)
                cut = False
        if len(partial) > MAX_RAW:
            partial, cut = _trim(partial), True


def complete_end(fh: BinaryIO) -> int:
    """The offset just after the file's last newline (a line still being written is not read yet)."""
    pos = os.fstat(fh.fileno()).st_size
    while pos > 0:
        size = min(BLOCK, pos)
        fh.seek(pos - size)
        found = fh.read(size).rfind(b"\n")
        if found >= 0:
            return pos - size + found + 1
        pos -= size
    return 0


def _seq_of(raw: bytes) -> int:
    first = raw.partition(b" ")[0]
    return int(first) if first.isdigit() else 0


def needle_of(keep: Keep) -> bytes | None:
    """The text a filter keeps lines by (``observation.LogFilter.search``), to skip records without it."""
    search = getattr(keep, "search", None)
    return search.encode() if isinstance(search, str) and search else None


def parse(replica: str, raw: bytes, cut: bool, seq: int | None = None) -> LogLine:
    """A record (``seq`` given: an older writer's ``<time> <stream> <text>`` line, numbered by its position)."""
    fields = raw.split(b" ", 3 if seq is None else 2)
    if seq is None:
        seq = int(fields.pop(0)) if fields[0].isdigit() else 0
    try:
        ts = float(fields[0])
    except ValueError:
        ts = 0.0
    text = fields[-1].decode("utf-8", "replace") if len(fields) == 3 else ""
    return LogLine(replica, seq, text + (" …[line cut]" if cut else ""), ts)


class ReplicaFile:
    """One replica's file, read up to its end when opened (lines appended later wait for the next open)."""

    def __init__(self, replica: str, path: Path):
        self.replica = replica
        self.fh: BinaryIO = open(path, "rb")  # noqa: SIM115 - closed in close()
        self.end = complete_end(self.fh)
        self.fh.seek(0)
        first = self.fh.read(32).split(b" ", 1)[0]
        self.counted = b"." in first  # an older writer's file: seq = line number
        self._count: int | None = None

    def close(self) -> None:
        self.fh.close()

    def _lines(self) -> int:
        """An older file's line count (newlines counted block by block)."""
        if self._count is None:
            count, pos = 0, 0
            while pos < self.end:
                self.fh.seek(pos)
                block = self.fh.read(min(BLOCK, self.end - pos))
                count += block.count(b"\n")
                pos += len(block)
            self._count = count
        return self._count

    def last_seq(self) -> int:
        if self.counted:
            return self._lines()
        return next((line.seq for line in self.backward()), 0)

    def backward(self, after: int = 0, needle: bytes | None = None) -> Iterator[LogLine]:
        """Lines after seq ``after``, newest first: reads only as far back as they go. With ``needle``, only
        lines whose record holds it are parsed (a search skips the others at the cost of a bytes compare)."""
        seq = self._lines() + 1 if self.counted else None
        if seq is None and needle is not None:  # records carry their seq: whole blocks can be passed over
            lines = lines_backward(self.fh, self.end, 0, needle, lambda raw: bool(after) and _seq_of(raw) <= after)
        else:
            lines = lines_backward(self.fh, self.end)
        for raw, cut in lines:
            if seq is not None:
                seq -= 1
                if seq <= after:
                    return
            elif after and _seq_of(raw) <= after:
                return
            if needle is None or needle in raw:
                yield parse(self.replica, raw, cut, seq)

    def forward(self, after: int = 0, needle: bytes | None = None) -> Iterator[LogLine]:
        """Lines after seq ``after``, oldest first, from the record where they start."""
        if self.counted:
            for seq, (raw, cut) in enumerate(lines_forward(self.fh, 0, self.end), start=1):
                if seq > after and (needle is None or needle in raw):
                    yield parse(self.replica, raw, cut, seq)
            return
        for raw, cut in lines_forward(self.fh, self.start_of(after) if after else 0, self.end, needle):
            if needle is None or needle in raw:
                yield parse(self.replica, raw, cut)

    def start_of(self, after: int) -> int:
        """The offset of the first record whose seq is above ``after`` (``end`` if none), by bisection."""
        lo, hi = 0, self.end
        while lo < hi:
            mid = (lo + hi) // 2
            start = self._record_at(mid)
            if start >= self.end or self._seq_at(start) > after:
                hi = mid
            else:
                lo = mid + 1
        return self._record_at(lo)

    def _record_at(self, offset: int) -> int:
        """The first record starting at ``offset`` or later."""
        if offset == 0:
            return 0
        pos, size = offset - 1, 4096  # a record is short: read a little first
        while pos < self.end:
            self.fh.seek(pos)
            block = self.fh.read(min(size, self.end - pos))
            found = block.find(b"\n")
            if found >= 0:
                return pos + found + 1
            pos += len(block)
            size = BLOCK
        return self.end

    def _seq_at(self, start: int) -> int:
        self.fh.seek(start)
        first = self.fh.read(24).split(b" ", 1)[0]
        return int(first) if first.isdigit() else 0


class ReplicaFiles:
    """A LogSource over one file per replica (a local job's live files, an archived attempt)."""

    def __init__(self, files: Mapping[str, Path]):
        self.files = dict(files)

    def _open(self, stack: ExitStack) -> list[ReplicaFile]:
        opened = []
        for replica, path in self.files.items():
            try:
                opened.append(ReplicaFile(replica, path))
            except FileNotFoundError:
                continue  # the replica has not written yet
            stack.callback(opened[-1].close)
        return opened

    def page(self, limit: int, keep: Keep, after: Mapping[str, int]) -> LogPage:
        with ExitStack() as stack:
            files = self._open(stack)
            ends = {f.replica: f.last_seq() for f in files}
            needle = needle_of(keep)
            newest_first = _merge([f.backward(after.get(f.replica, 0), needle) for f in files], reverse=True)
            picked: list[LogLine] = []
            if limit > 0:
                for line in newest_first:
                    if keep(line):
                        picked.append(line)
                        if len(picked) >= limit:
                            break
        picked.reverse()
        cursor = dict(after)
        for replica, seq in ends.items():
            cursor[replica] = max(cursor.get(replica, 0), seq)
        return LogPage(picked, cursor, sorted(r for r, seq in ends.items() if seq))

    def lines(self, keep: Keep, after: Mapping[str, int]) -> Iterator[LogLine]:
        stack = ExitStack()
        try:
            files = self._open(stack)
        except BaseException:
            stack.close()
            raise
        needle = needle_of(keep)
        return _kept(stack, [f.forward(after.get(f.replica, 0), needle) for f in files], keep)


def _merge(streams: list[Iterator[LogLine]], reverse: bool = False) -> Iterator[LogLine]:
    """Lines of several replicas by time (one replica's as they are)."""
    if len(streams) == 1:
        return streams[0]
    return heapq.merge(*streams, key=lambda line: line.timestamp, reverse=reverse)


def _kept(stack: ExitStack, streams: list[Iterator[LogLine]], keep: Keep) -> Iterator[LogLine]:
    with stack:
        for line in _merge(streams):
            if keep(line):
                yield line


def page_of(lines: Iterable[LogLine], limit: int, keep: Keep, after: Mapping[str, int]) -> LogPage:
    """The page of a source read only forward (a backend's ``logs``): every line passes, the last ``limit``
    kept ones are held."""
    cursor, replicas = dict(after), set()
    last: deque[LogLine] = deque(maxlen=max(limit, 0))
    for line in lines:
        replicas.add(line.replica)
        if line.seq > cursor.get(line.replica, 0):
            cursor[line.replica] = line.seq
        if line.seq > after.get(line.replica, 0) and limit > 0 and keep(line):
            last.append(line)
    return LogPage(list(last), cursor, sorted(replicas))


class RecordFiles:
    """A finished local job's replica files given to ``archive.write`` as its lines: iterated, every replica's
    lines merged by time; or, by an archive whose caps they are within (the supervisor wrote them under the same
    caps, with room for the archive's marks), copied whole by ``copy_to`` instead of a line at a time."""

    def __init__(self, folder: Path, names: Mapping[str, str]):
        self.folder, self.names = folder, dict(names)  # replica -> its file's name in folder

    def __iter__(self) -> Iterator[LogLine]:
        return ReplicaFiles({replica: self.folder / name for replica, name in self.names.items()}).lines(
            lambda line: True, {})

    def copy_to(self, target: Path, file_name: Callable[[str], str], max_bytes: int) -> bool | None:
        """Each replica's complete records into a new file ``file_name(replica)`` of ``target``, both opened by
        descriptor (no link followed), copied by the kernel; True if any file has lines. None, with nothing
        copied, when a file is over ``max_bytes`` (written under other caps: its lines must be capped again)."""
        with ExitStack() as stack:
            source = stack.enter_context(Folder.open(self.folder))
            ends: dict[str, tuple[BinaryIO, int]] = {}
            for replica, name in self.names.items():
                try:
                    fh = stack.enter_context(source.open_file(name))
                except FileNotFoundError:
                    continue  # the replica never wrote
                ends[replica] = (fh, complete_end(fh))
            if any(end > max_bytes for _, end in ends.values()):
                return None
            out = stack.enter_context(Folder.open(target))
            for replica, (fh, end) in ends.items():
                if end:
                    with out.create(file_name(replica)) as copy:
                        _copy(fh.fileno(), copy.fileno(), end)
                        os.fsync(copy.fileno())
            return any(end for _, end in ends.values())


def _copy(source: int, target: int, size: int) -> None:
    """``size`` bytes from the start of ``source`` to ``target``: copy_file_range (shared extents where the
    filesystem can), sendfile where it cannot (across filesystems on older kernels)."""
    done = 0
    while done < size:
        try:
            step = os.copy_file_range(source, target, size - done, offset_src=done)
        except OSError as exc:
            if exc.errno not in (errno.EXDEV, errno.ENOSYS, errno.EOPNOTSUPP, errno.EINVAL):
                raise
            step = os.sendfile(target, source, done, size - done)
        if step == 0:
            raise OSError(f"log file shorter than its {size} bytes while archived")
        done += step
