"""How much of a replica's output is kept, and the record format every kept line is written in.

One record per line: ``<seq> <unix time with µs> <stream> <text>\\n`` (stream: o = stdout, e = stderr,
m = a mark the platform wrote, - = unknown). ``seq`` is the line's number in the replica's output, counted
over every line the replica printed, kept or not, so a line has the same seq live, archived and after a
cut: a reader resumes after the last seq it saw (``Last-Event-ID``) across the cut.

The caps (``LogLimits``): a line longer than ``max_line`` bytes keeps its first ``max_line`` bytes and says
how much it lost; a replica's records stay within ``max_bytes``. Past the cap the log keeps its beginning
and, once the replica ends, its last ``max_bytes // 16`` bytes (where a failure's traceback is), with a mark
where lines were dropped. The supervisor (local jobs) and the archive (every backend) apply the same
``Capper``; applying it to its own output changes nothing, so archiving a capped local log cuts no more.
"""
from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

MAX_BYTES_ENV = "MYAPP_LOG_MAX_BYTES_PER_REPLICA"
MAX_LINE_ENV = "MYAPP_LOG_MAX_LINE"
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_MAX_LINE = 16 * 1024
MAX_LINE_LIMIT = 256 * 1024  # readers hold a record of up to 1 MiB whole (logrecords.MAX_RAW)
SUFFIX_ROOM = 64  # a cut line's note ("…[line cut: N bytes dropped]") fits in this
MARK_ROOM = 512  # a mark record (seq, time and text) fits in this
ARCHIVE_ROOM = 2 * MARK_ROOM  # the supervisor's head is this much shorter, so the archive's copy is never cut again


@dataclass(frozen=True)
class LogLimits:
    max_bytes: int = DEFAULT_MAX_BYTES
    max_line: int = DEFAULT_MAX_LINE

    def __post_init__(self) -> None:
        if not 80 <= self.max_line <= MAX_LINE_LIMIT:
            raise ValueError(f"{MAX_LINE_ENV} must be 80 to {MAX_LINE_LIMIT} bytes, not {self.max_line}")
        if self.max_bytes < 32 * (self.max_line + SUFFIX_ROOM + MARK_ROOM):
            raise ValueError(f"{MAX_BYTES_ENV} ({self.max_bytes}) must hold at least 32 lines of "
                             f"{MAX_LINE_ENV} ({self.max_line}) bytes")

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> LogLimits:
        source = os.environ if env is None else env
        try:
            return cls(int(source.get(MAX_BYTES_ENV) or DEFAULT_MAX_BYTES),
                       int(source.get(MAX_LINE_ENV) or DEFAULT_MAX_LINE))
        except ValueError as exc:
            raise ValueError(f"log limits: {exc}") from None


def record(seq: int, ts: float, stream: str, text: bytes) -> bytes:
    return b"%d %.6f %s " % (seq, ts, stream.encode()) + text + b"\n"


def clean(raw: bytes) -> bytes:
    """One line's bytes as UTF-8 (invalid bytes replaced), without the carriage return of a CRLF."""
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    return raw.decode("utf-8", "replace").encode()


def cut_line(text: bytes, max_line: int, dropped: int = 0) -> bytes:
    """``text`` (clean UTF-8) within the line cap: a longer line keeps its first ``max_line`` bytes, cut at a
    character's start, and says how many bytes it lost (``dropped`` more were never held)."""
    if len(text) + dropped <= max_line + SUFFIX_ROOM:
        return text
    end = max_line
    while end > 0 and text[end] & 0xC0 == 0x80:  # a UTF-8 continuation byte: not a character's start
        end -= 1
    return text[:end] + b" \xe2\x80\xa6[line cut: %d bytes dropped]" % (len(text) - end + dropped)


def cut_mark(limits: LogLimits, window: int) -> bytes:
    """In place of the first dropped line, written when it is dropped."""
    return (b"[log cut: this replica's log reached its cap of %d bytes; later lines are dropped, and its last %d "
            b"bytes are kept when it ends]" % (limits.max_bytes, window - 2 * MARK_ROOM))


def dropped_mark(lines: int, size: int) -> bytes:
    """In place of the last dropped line, written when the replica ends."""
    return b"[log cut: %d lines (%d bytes) dropped here]" % (lines, size)


class LineSplitter:
    """Bytes in, capped lines out, holding at most one capped line: a 50 MB line costs no more memory
    than a short one."""

    def __init__(self, max_line: int):
        self.max_line = max_line
        self._buf = bytearray()
        self._dropped = 0  # bytes of the current line beyond what is held

    def feed(self, data: bytes) -> list[bytes]:
        """``data``: a pipe read (at most 64 KiB), split at once; the held line is capped."""
        parts = data.split(b"\n")
        rest = parts.pop()
        out = []
        if parts:
            self._hold(parts[0])
            out.append(self._line())
            limit = self.max_line + SUFFIX_ROOM
            ascii_only = data.isascii()  # then a line is already clean but for a CR
            for raw in parts[1:]:
                if len(raw) > limit:
                    self._hold(raw)
                    out.append(self._line())
                elif ascii_only:
                    out.append(raw[:-1] if raw.endswith(b"\r") else raw)
                else:
                    out.append(clean(raw))
        self._hold(rest)
        return out

    def end(self) -> bytes | None:
        """The last line if it had no newline."""
        return self._line() if self._buf or self._dropped else None

    def _hold(self, part: bytes) -> None:
        take = max(0, min(self.max_line + SUFFIX_ROOM + 1 - len(self._buf), len(part)))
        self._buf += part[:take]
        self._dropped += len(part) - take

    def _line(self) -> bytes:
        text = cut_line(clean(bytes(self._buf)), self.max_line, self._dropped)
        self._buf.clear()
        self._dropped = 0
        return text


class Capper:
    """One replica's records within its limits, written through ``write`` as they come.

    Lines are written until the head is full; later ones wait in a window of the last ``max_bytes // 16``
    bytes. The first line pushed out of the window is replaced by a mark (written at once, so a live reader
    sees the log was cut); ``close`` writes a count of what was dropped and the window."""

    def __init__(self, limits: LogLimits, write: Callable[[bytes], object], room: int = 0):
        self.limits = limits
        self._write = write
        self.window = limits.max_bytes // 16 + 2 * MARK_ROOM
        # Head, window and the two marks fill the cap less ``room``. The archive's copy of a capped log (with
        # room = 0) has the same window, and its head holds the capped head and both marks: it cuts nothing.
        self.head_limit = limits.max_bytes - self.window - 2 * MARK_ROOM - room
        self.written = 0
        self._heading = True
        self._kept: deque[tuple[int, float, bytes]] = deque()
        self._kept_bytes = 0
        self.dropped_lines = 0
        self.dropped_bytes = 0
        self._last_dropped = (0, 0.0)
        self.closed = False

    def add(self, seq: int, ts: float, stream: str, text: bytes) -> None:
        """``text``: one line, clean UTF-8 and within the line cap (``LineSplitter``, ``cut_line``)."""
        data = record(seq, ts, stream, text)
        if self._heading and self.written + len(data) <= self.head_limit:
            self._out(data)
            return
        self._heading = False
        self._kept.append((seq, ts, data))
        self._kept_bytes += len(data)
        while self._kept_bytes > self.window:
            old_seq, old_ts, old = self._kept.popleft()
            self._kept_bytes -= len(old)
            if not self.dropped_lines:
                self._out(record(old_seq, old_ts, "m", cut_mark(self.limits, self.window)))
            self.dropped_lines += 1
            self.dropped_bytes += len(old)
            self._last_dropped = (old_seq, old_ts)

    def close(self) -> None:
        """The window, after a count of the dropped lines (the mark's own line is one of them)."""
        if self.closed:
            return
        self.closed = True
        if self.dropped_lines > 1:
            seq, ts = self._last_dropped
            self._out(record(seq, ts, "m", dropped_mark(self.dropped_lines, self.dropped_bytes)))
        while self._kept:
            self._out(self._kept.popleft()[2])
        self._kept_bytes = 0

    def _out(self, data: bytes) -> None:
        self.written += len(data)
        self._write(data)
