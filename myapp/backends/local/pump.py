"""The supervisor's log pump: one thread relaying every replica's stdout and stderr pipe, line by line, into
the replica's log file (``logfiles.ReplicaLog``), over one selector for all the pipes; at the job's end it
lets the pipes drain to EOF for a moment, then stops.
"""
from __future__ import annotations

import os
import selectors
import threading
import time

from .logfiles import ReplicaLog


class Pump(threading.Thread):
    """One thread relaying every replica pipe into its log file (selector over all fds)."""

    def __init__(self) -> None:
        super().__init__(name="log-pump", daemon=True)
        self._sel = selectors.DefaultSelector()
        self._wake_r, self._wake_w = os.pipe()
        self._sel.register(self._wake_r, selectors.EVENT_READ, None)
        self._lock = threading.Lock()
        self._pending: list[tuple[int, ReplicaLog, str]] = []
        self._open: set[int] = set()
        self._stopping = False

    def add(self, fd: int, log: ReplicaLog, stream: str) -> None:
        log.streams(+1)
        with self._lock:
            self._pending.append((fd, log, stream))
            self._open.add(fd)
        os.write(self._wake_w, b"x")

    def open_count(self) -> int:
        with self._lock:
            return len(self._open)

    def close(self, timeout: float) -> None:
        """Let open pipes drain until EOF (at most ``timeout`` seconds), then stop."""
        deadline = time.monotonic() + timeout
        while self.open_count() and time.monotonic() < deadline:
            time.sleep(0.02)
        self._stopping = True
        os.write(self._wake_w, b"x")
        self.join(timeout=5)

    def _drop(self, fd: int, log: ReplicaLog, stream: str) -> None:
        self._sel.unregister(fd)
        os.set_blocking(fd, False)
        try:  # whatever is still buffered in the pipe
            while data := os.read(fd, 1 << 16):
                log.feed(fd, stream, data, time.time())
        except OSError:
            pass
        os.close(fd)
        log.eof(fd, stream, time.time())
        log.streams(-1)
        with self._lock:
            self._open.discard(fd)

    def run(self) -> None:
        while True:
            events = self._sel.select(timeout=0.5)
            touched: set[ReplicaLog] = set()
            for key, _ in events:
                if key.data is None:
                    os.read(self._wake_r, 4096)
                    with self._lock:
                        pending, self._pending = self._pending, []
                    for fd, log, stream in pending:
                        self._sel.register(fd, selectors.EVENT_READ, (log, stream))
                    continue
                log, stream = key.data
                try:
                    data = os.read(key.fd, 1 << 16)
                except OSError:
                    data = b""
                if data:
                    log.feed(key.fd, stream, data, time.time())
                else:
                    self._drop(key.fd, log, stream)
                touched.add(log)
            for log in touched:
                log.flush()
            if self._stopping:
                for key in list(self._sel.get_map().values()):
                    if key.data is not None:
                        self._drop(key.fd, *key.data)
                        key.data[0].flush()
                return
