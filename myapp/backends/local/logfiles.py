"""Replica log files: one append-only file per replica, one record per output line (``logcaps``).

The supervisor is the only writer and writes whole records; each starts with its seq, the line's number
in the replica's output, so seqs are stable across readers, restarts of the reader and the cut at the
cap. Readers (``logrecords``) read the last lines from the end and resume from a seq by bisection.
"""
from __future__ import annotations

import heapq
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from ..base import LogLine
from ..logcaps import ARCHIVE_ROOM, Capper, LineSplitter, LogLimits
from ..logrecords import RecordFiles, ReplicaFile, ReplicaFiles


class ReplicaLog:
    """Writer side, used by the supervisor's pump thread: lines cut to the line cap, the file kept
    within the byte cap (``Capper``) less the room the archive's copy needs to stay uncut."""

    def __init__(self, path: Path, limits: LogLimits | None = None):
        self.path = path
        self.limits = limits or LogLimits.from_env()
        self._fh = open(path, "ab", buffering=0)  # noqa: SIM115 - lives as long as the job
        self.seq = _last_seq(path)  # a supervisor started again on the same folder goes on numbering
        self._split: dict[int, LineSplitter] = {}
        self._pending: list[bytes] = []
        self._capper = Capper(self.limits, self._pending.append, room=ARCHIVE_ROOM)
        self._capper.written = os.fstat(self._fh.fileno()).st_size
        self._lock = threading.Lock()
        self.last_stderr = ""
        self.last_stdout = ""
        self.open_streams = 0  # pipes still being relayed (maintained by the pump)

    def streams(self, delta: int) -> None:
        with self._lock:
            self.open_streams += delta

    def feed(self, key: int, stream: str, data: bytes, ts: float) -> None:
        splitter = self._split.setdefault(key, LineSplitter(self.limits.max_line))
        self._emit(splitter.feed(data), stream, ts)

    def eof(self, key: int, stream: str, ts: float) -> None:
        splitter = self._split.pop(key, None)
        rest = splitter.end() if splitter is not None else None
        if rest is not None:
            self._emit([rest], stream, ts)

    def _emit(self, lines: list[bytes], stream: str, ts: float) -> None:
        if not lines:
            return
        with self._lock:
            for line in lines:
                self.seq += 1
                self._capper.add(self.seq, ts, stream, line)
            text = next((x for x in reversed(lines) if x.strip()), b"").decode().strip()
            if text and stream == "e":
                self.last_stderr = text
            elif text:
                self.last_stdout = text

    def flush(self) -> None:
        with self._lock:
            if self._pending:
                data = b"".join(self._pending)
                self._pending.clear()
                view = memoryview(data)
                while view:
                    written = os.write(self._fh.fileno(), view)
                    view = view[written:]

    def last_line(self) -> str:
        return self.last_stderr or self.last_stdout

    def close(self) -> None:
        """The kept end of a cut log goes in now: the replica has ended."""
        with self._lock:
            self._capper.close()
        self.flush()
        self._fh.close()


def _last_seq(path: Path) -> int:
    try:
        existing = ReplicaFile("", path)
    except FileNotFoundError:
        return 0
    try:
        return existing.last_seq()
    finally:
        existing.close()


def replica_files(logs_dir: Path, replicas: list[str]) -> ReplicaFiles:
    """A job's live log (a LogSource): ``<logs_dir>/<replica>.log`` per replica."""
    return ReplicaFiles({name: logs_dir / f"{name}.log" for name in replicas})


def record_files(logs_dir: Path, replicas: list[str]) -> RecordFiles:
    """The ended job's files as the archive takes them: copied whole, or read as lines (``RecordFiles``)."""
    return RecordFiles(logs_dir, {name: f"{name}.log" for name in replicas})


class LogCursor:
    """Reader side for followers: complete lines appended since the last call, with their seq, at most
    ``max_lines`` per call (a follower that cannot keep up never holds more)."""

    def __init__(self, replica: str, path: Path, after: int = 0, max_lines: int = 10_000):
        self.replica = replica
        self.path = path
        self.seq = after  # the last seq read
        self.max_lines = max_lines

    def read(self) -> list[LogLine]:
        try:
            source = ReplicaFile(self.replica, self.path)
        except FileNotFoundError:
            return []
        try:
            out = []
            for line in source.forward(self.seq):
                out.append(line)
                if len(out) >= self.max_lines:
                    break
        finally:
            source.close()
        if out:
            self.seq = out[-1].seq
        return out

    def close(self) -> None:
        """Nothing is held open between reads."""


def follow(files: Mapping[str, Path], after: Mapping[str, int], follow: bool, finished: Callable[[], bool],
           poll_interval: float) -> Iterator[LogLine]:
    """Every replica's lines after ``after``, merged by time: a whole read (each file streamed) or, with
    ``follow``, batches as they are written until ``finished`` and every line has been read."""
    if not follow:
        yield from ReplicaFiles(files).lines(lambda line: True, after)
        return
    cursors = [LogCursor(replica, path, after.get(replica, 0)) for replica, path in files.items()]
    while True:
        # Read the state first: once it is terminal the supervisor has written every line, so reads
        # until one comes back short are complete and the follower can stop.
        done = finished()
        while True:
            batches = [cursor.read() for cursor in cursors]
            yield from heapq.merge(*batches, key=lambda line: line.timestamp)
            if not any(len(batch) >= cursor.max_lines for batch, cursor in zip(batches, cursors, strict=True)):
                break
        if done:
            return
        if not any(batches):
            time.sleep(poll_interval)
