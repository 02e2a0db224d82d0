"""gunicorn's gthread worker, accepting a new connection only while it holds no more connections than
any other worker of the server (`worker_class` in myapp/web/gunicorn_conf.py).

Every worker polls the one listening socket, and the one whose process is on a core calls accept() first:
a keep-alive connection then stays with it, and 20 clients on 2 workers were split 16/4 or 19/1, one core
saturated while the other idled (benchmarks/api_list.py prints the split). Here each worker publishes its
connection count in a table shared by the server's processes (an anonymous shared mapping made in the
master before it forks), and a worker with more connections than another live one takes its listener off
its poller; the other's poller wakes for the same connection and accepts it. The least loaded worker
always accepts, so a connection is never left waiting for a busy worker. A worker that stops, is full or
has not published for STALE seconds (its loop wakes every second) holds no one back.
"""
from __future__ import annotations

import mmap
import struct
import time
from typing import Any

from gunicorn.workers.gthread import ThreadWorker

SLOTS = 64  # workers that take part; one beyond gets no slot and simply accepts
_SLOT = struct.Struct("qqd")  # pid, connections, when published (time.monotonic(): one clock per machine)
STALE = 5.0  # seconds without a publication after which a worker is left out (dead, or stuck)
RECHECK = 0.01  # seconds: a worker that declines looks again this soon
GONE = 2**62  # the count a stopping or full worker publishes: never the least loaded

_table = mmap.mmap(-1, SLOTS * _SLOT.size)  # MAP_SHARED | MAP_ANONYMOUS: forked workers share it


def assign_slot(server: Any, worker: Any) -> None:
    """gunicorn's pre_fork hook (in the master, one fork at a time): a slot no live worker holds."""
    held = {getattr(w, "myapp_slot", None) for w in server.WORKERS.values()}
    free = [i for i in range(SLOTS) if i not in held]
    worker.myapp_slot = free[0] if free else None
    if free:
        _SLOT.pack_into(_table, free[0] * _SLOT.size, 0, GONE, 0.0)


def least_loaded(slot: int, connections: int, now: float) -> bool:
    """No other live worker holds fewer connections than `connections`."""
    for i, (pid, count, stamp) in enumerate(_SLOT.iter_unpack(_table)):
        if i != slot and pid and count < connections and now - stamp < STALE:
            return False
    return True


class BalancedThreadWorker(ThreadWorker):
    myapp_slot: int | None = None

    def _publish(self, count: int) -> None:
        if self.myapp_slot is not None:
            _SLOT.pack_into(_table, self.myapp_slot * _SLOT.size, self.pid, count, time.monotonic())

    def set_accept_enabled(self, enabled: bool) -> None:
        if enabled and self.myapp_slot is not None:
            enabled = least_loaded(self.myapp_slot, self.nr_conns, time.monotonic())
        super().set_accept_enabled(enabled)

    def wait_for_and_dispatch_events(self, timeout: float) -> None:
        open_ = self.alive and self.nr_conns < self.worker_connections
        self._publish(self.nr_conns if open_ else GONE)
        if open_:
            self.set_accept_enabled(True)  # again: who is least loaded changes as connections come and go
        super().wait_for_and_dispatch_events(timeout if self._accepting or not open_ else min(timeout, RECHECK))

    def run(self) -> None:
        try:
            super().run()
        finally:
            self._publish(GONE)
