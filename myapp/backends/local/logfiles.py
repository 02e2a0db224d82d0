"""Replica log files: one append-only file per replica, one line per output line.

Format: ``<unix time with µs> <o|e> <text>\\n`` (o = stdout, e = stderr). The supervisor is the
only writer and writes whole lines; a line's seq is its 1-based line number in the file, so
seq numbers are stable across readers and restarts of the reader.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import BinaryIO

from ..base import LogLine

MAX_LINE = 64 * 1024  # a longer line without newline is cut into pieces of this size


class ReplicaLog:
    """Writer side, used by the supervisor's pump thread."""

    def __init__(self, path: Path):
        self.path = path
        self._fh = open(path, "ab", buffering=0)  # noqa: SIM115 - lives as long as the job
        self._partial: dict[int, bytes] = {}
        self._pending: list[bytes] = []
        self._lock = threading.Lock()
        self.last_stderr = ""
        self.last_stdout = ""
        self.count = 0
        self.open_streams = 0  # pipes still being relayed (maintained by the pump)

    def streams(self, delta: int) -> None:
        with self._lock:
            self.open_streams += delta

    def feed(self, key: int, stream: str, data: bytes, ts: float) -> None:
        buf = self._partial.pop(key, b"") + data
        lines = buf.split(b"\n")
        rest = lines.pop()
        out = []
        for line in lines:  # lines longer than MAX_LINE are cut in MAX_LINE pieces from their start
            if len(line) <= MAX_LINE:
                out.append(line)
            else:
                out.extend(line[i:i + MAX_LINE] for i in range(0, len(line), MAX_LINE))
        while len(rest) > MAX_LINE:
            out.append(rest[:MAX_LINE])
            rest = rest[MAX_LINE:]
        if rest:
            self._partial[key] = rest
        self._emit(out, stream, ts)

    def eof(self, key: int, stream: str, ts: float) -> None:
        rest = self._partial.pop(key, b"")
        if rest:
            self._emit([rest], stream, ts)

    def _emit(self, lines: list[bytes], stream: str, ts: float) -> None:
        if not lines:
            return
        prefix = b"%.6f %s " % (ts, stream.encode())
        with self._lock:
            for line in lines:
                if line.endswith(b"\r"):
                    line = line[:-1]
                self._pending.append(prefix + line + b"\n")
                if line.strip():
                    text = line.decode("utf-8", "replace").strip()
                    if stream == "e":
                        self.last_stderr = text
                    else:
                        self.last_stdout = text
            self.count += len(lines)

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
        self.flush()
        self._fh.close()


class LogCursor:
    """Reader side: yields complete lines appended since the last call, with their seq."""

    def __init__(self, replica: str, path: Path, after: int = 0):
        self.replica = replica
        self.path = path
        self.seq = 0  # lines consumed so far (= seq of the last line read)
        self.after = after
        self._offset = 0
        self._fh: BinaryIO | None = None

    def read(self) -> list[LogLine]:
        if self._fh is None:
            try:
                self._fh = open(self.path, "rb")  # noqa: SIM115 - closed in close()
            except FileNotFoundError:
                return []
        self._fh.seek(self._offset)
        data = self._fh.read()
        end = data.rfind(b"\n")
        if end < 0:
            return []
        data = data[:end + 1]
        self._offset += len(data)
        out = []
        for raw in data.split(b"\n")[:-1]:
            self.seq += 1
            if self.seq <= self.after:
                continue
            ts, _, rest = raw.partition(b" ")
            _, _, text = rest.partition(b" ")
            try:
                stamp = float(ts)
            except ValueError:
                stamp = 0.0
            out.append(LogLine(self.replica, self.seq, text.decode("utf-8", "replace"), stamp))
        return out

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
