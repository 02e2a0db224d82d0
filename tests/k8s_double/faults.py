"""Fault injection: the next N requests matching (method, path regex) misbehave."""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field


@dataclass
class Fault:
    method: str  # "GET", "POST", ... or "*"
    path: re.Pattern[str]
    times: int = 1
    status: int | None = None  # answer with this code and a Status body
    retry_after: float | None = None  # Retry-After header (seconds), usually with status=429
    hang: float | None = None  # hold the request this long, then close without answering
    process: bool = False  # with hang: perform the request first (the answer is lost, the effect is not)
    drop_after: int | None = None  # streams (logs, watches): send this many lines/events, then cut
    hits: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def take(self, method: str, path: str) -> bool:
        if self.method not in ("*", method) or not self.path.search(path):
            return False
        with self._lock:
            if self.hits >= self.times:
                return False
            self.hits += 1
            return True

    @property
    def exhausted(self) -> bool:
        return self.hits >= self.times


class Faults:
    def __init__(self) -> None:
        self._faults: list[Fault] = []
        self._lock = threading.Lock()

    def add(self, method: str, path_regex: str, **kwargs) -> Fault:
        fault = Fault(method.upper(), re.compile(path_regex), **kwargs)
        with self._lock:
            self._faults.append(fault)
        return fault

    def match(self, method: str, path: str) -> Fault | None:
        with self._lock:
            faults = list(self._faults)
        for fault in faults:
            if fault.take(method, path):
                return fault
        return None

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()
