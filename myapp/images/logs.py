"""A build's log: one file per build in the instance folder, written by the worker, read by the web.

Kept after the build (the history shows it); lines are numbered from 1, which is the stream's cursor.
"""
from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any

from ..backends.logcaps import MARK_ROOM, LogLimits

MAX_LINE = 4000  # one pip line can be a whole dependency list; the UI needs no more


def log_dir(instance_path: str | Path) -> Path:
    return Path(instance_path) / "image-builds"


def log_path(instance_path: str | Path, build_id: int) -> Path:
    return log_dir(instance_path) / f"{int(build_id)}.log"


class LogWriter:
    """Appends lines to a build's log (flushed per line: the stream shows them at once), within the log cap
    (``MYAPP_LOG_MAX_BYTES_PER_REPLICA``): past it one line says so and later lines are dropped."""

    def __init__(self, path: Path, limits: LogLimits | None = None) -> None:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.path = path
        self.limits = limits or LogLimits.from_env()
        self.size = path.stat().st_size if path.exists() else 0
        self.dropped = int(self.size > self.limits.max_bytes - MARK_ROOM)  # a build tried again: cut already
        self.lines: deque[str] = deque(maxlen=100)  # this writer's last lines, for the failure reason's tail

    def __call__(self, line: str) -> None:
        text = line.rstrip("\n").replace("\x00", "")[:MAX_LINE]
        self.lines.append(text)
        if self.dropped:
            self.dropped += 1
            return
        data = (text + "\n").encode("utf-8", "replace")
        if self.size + len(data) > self.limits.max_bytes - MARK_ROOM:
            self.dropped = 1
            data = b"[log cut: this build's log reached its cap of %d bytes; later lines are dropped]\n" % (
                self.limits.max_bytes)
        with open(self.path, "ab") as fh:
            fh.write(data)
        self.size += len(data)

    def tail(self, count: int = 12) -> str:
        return "\n".join(line for line in list(self.lines)[-count:] if line.strip())


def read_lines(path: Path, after: int = 0, limit: int | None = None) -> list[dict[str, Any]]:
    """Lines after line number ``after``, as {"seq", "line"}; a line still being written waits."""
    out: list[dict[str, Any]] = []
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for seq, line in enumerate(fh, start=1):
                if not line.endswith("\n"):
                    break
                if seq > after:
                    out.append({"seq": seq, "line": line[:-1]})
                    if limit is not None and len(out) >= limit:
                        break
    except FileNotFoundError:
        pass
    return out
