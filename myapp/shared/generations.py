"""Generations: a value per key, shared by every process of the platform, that changes whenever what the
key names changes. A process keeps what it loaded (a caller, their memberships) filed under the
generation it read before loading, and uses it only while that generation is still the current one, so
a change published by any process is seen by every process at its next request.

Every authenticated request reads a few of them, so reading must cost next to nothing:
- With Redis: one MGET of string values; a change SETs a new random value.
- Embedded (one machine, no Redis): a file of 8-byte slots in the instance folder, mapped into every
  process's memory (a read is a memory read, not a file open). A key's slot is the CRC32 of its name, so
  two keys may share a slot: a change to one then reloads the other too, which costs a load, never a
  stale answer. A change writes a new random value; a reader that catches a write half done sees a value
  that is neither old nor new, and loads again.
"""
from __future__ import annotations

import mmap
import os
import secrets
import struct
import threading
import time
import zlib
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, Generic, TypeVar

import redis
from flask import Flask

SLOTS = 1 << 16  # 512 KiB of slots
SLOT = struct.Struct("<Q")
REDIS_TTL = 86_400  # seconds; a lapsed key reads as None, a new generation (what was kept loads again)
T = TypeVar("T")


class MappedGenerations:
    """The embedded store: the file `path`, mapped once per process (again after a fork)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self.pid = 0
        self.view: mmap.mmap | None = None
        self.lock = threading.Lock()

    def _view(self) -> mmap.mmap:
        if self.view is None or self.pid != os.getpid():
            with self.lock:
                if self.view is None or self.pid != os.getpid():
                    fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
                    try:
                        if os.fstat(fd).st_size < SLOTS * SLOT.size:
                            os.ftruncate(fd, SLOTS * SLOT.size)  # zeros: every key at generation 0
                        self.view = mmap.mmap(fd, SLOTS * SLOT.size, mmap.MAP_SHARED)
                    finally:
                        os.close(fd)  # the mapping keeps the file
                    self.pid = os.getpid()
        return self.view

    @staticmethod
    def _offset(key: str) -> int:
        return (zlib.crc32(key.encode()) % SLOTS) * SLOT.size

    def read(self, *keys: str) -> tuple[Any, ...]:
        view = self._view()
        return tuple(SLOT.unpack_from(view, self._offset(key))[0] for key in keys)

    def bump(self, *keys: str) -> None:
        view = self._view()
        for key in keys:
            SLOT.pack_into(view, self._offset(key), secrets.randbits(64) or 1)


class RedisGenerations:
    """Redis: a string per key (prefixed), read together in one round trip."""

    PREFIX = "myapp:generation:"

    def __init__(self, url: str) -> None:
        self.client = redis.Redis.from_url(url)

    def read(self, *keys: str) -> tuple[Any, ...]:
        values: list[Any] = self.client.mget([self.PREFIX + key for key in keys])  # type: ignore[assignment]
        return tuple(values)

    def bump(self, *keys: str) -> None:
        with self.client.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.set(self.PREFIX + key, secrets.token_hex(8), ex=REDIS_TTL)
            pipe.execute()


class Generations:
    """The process's store, chosen from the app's settings (REDIS_URL, else the instance folder)."""

    def __init__(self) -> None:
        self.store: MappedGenerations | RedisGenerations | None = None

    def init_app(self, app: Flask) -> None:
        url = app.config.get("REDIS_URL")
        self.store = RedisGenerations(url) if url else MappedGenerations(
            Path(app.config["INSTANCE_PATH"]) / "generations.bin")

    def read(self, *keys: str) -> tuple[Any, ...]:
        if self.store is None:
            raise RuntimeError("generations are not set up: call init_app first")
        return self.store.read(*keys)

    def bump(self, *keys: str) -> None:
        if self.store is None:
            raise RuntimeError("generations are not set up: call init_app first")
        if keys:
            self.store.bump(*keys)


class Kept(Generic[T]):
    """What a process keeps per id, used while the generation read before loading it is still current and
    for at most max_age seconds (a bound even if a change were lost)."""

    def __init__(self, max_age: float) -> None:
        self.max_age = max_age
        self.values: dict[Hashable, tuple[tuple[Any, ...], float, T]] = {}  # id -> (generation, kept at, value)
        self.lock = threading.Lock()

    def get(self, key: Hashable, generation: tuple[Any, ...], load: Callable[[], T]) -> T:
        kept = self.values.get(key)
        if kept is not None and kept[0] == generation and time.monotonic() - kept[1] < self.max_age:
            return kept[2]
        value = load()
        with self.lock:
            self.values[key] = (generation, time.monotonic(), value)
        return value

    def forget(self, *keys: Hashable) -> None:
        with self.lock:
            for key in keys:
                self.values.pop(key, None)

    def clear(self) -> None:
        with self.lock:
            self.values.clear()
