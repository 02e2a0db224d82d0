"""Limits shared by every web process: gunicorn runs several, and a limit kept in each one's memory would
let N processes allow N times the setting.

With Redis, the login rate limits are a `limits` Redis storage (myapp/config.py) and the open event
streams per user a sorted set per user (`RedisSlots`). Without Redis (the embedded default: the web
processes of one machine), both are counted in a SQLite file in the instance folder (`SharedFile`): the
login limits as the `limits` storage `myappsqlite://<path>` (moving windows, what myapp/auth/logins.py uses),
the streams as rows; each check is one statement (the file's lock orders the processes), on one connection
per thread and process. A stream slot is kept at most the hold time its taker gives (a stream's length
and some), so a process killed while streaming frees its slots soon.
"""
from __future__ import annotations

import math
import os
import sqlite3
import threading
import time
import uuid
from pathlib import Path

import redis
from flask import Flask
from limits.storage import MovingWindowSupport, Storage

SWEEP_SECONDS = 60.0  # how often lapsed rows are deleted (they never count: every check reads by time)
SCHEMA = (
    "CREATE TABLE IF NOT EXISTS hit (key TEXT NOT NULL, at REAL NOT NULL)",
    "CREATE INDEX IF NOT EXISTS hit_key_at ON hit (key, at)",
    "CREATE TABLE IF NOT EXISTS counter (key TEXT PRIMARY KEY, value INTEGER NOT NULL, expires_at REAL NOT NULL)",
    "CREATE TABLE IF NOT EXISTS stream_slot (id INTEGER PRIMARY KEY AUTOINCREMENT, user_id INTEGER NOT NULL, "
    "until REAL NOT NULL)",
    "CREATE INDEX IF NOT EXISTS stream_slot_user ON stream_slot (user_id, until)",
)


class SharedFile:
    """The SQLite file, one connection per process (made again after a fork) that its threads take in turn.

    Every check is ONE statement (the count inside the INSERT's condition), so the file's write lock is
    held only while SQLite runs it, never across Python code: with many threads waiting for the GIL, a
    lock held between statements would make every other process wait for this one's scheduling. A write
    statement reads the latest commit in WAL mode, so two processes never both see room for the last slot.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        self.lock = threading.Lock()
        self.conn: sqlite3.Connection | None = None
        self.pid = 0
        self.swept = 0.0

    def _connection(self) -> sqlite3.Connection:
        if self.conn is None or self.pid != os.getpid():
            conn = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL").fetchall()
            conn.execute("PRAGMA synchronous=NORMAL")  # counters, not records: a power cut may lose the last hits
            for statement in SCHEMA:
                conn.execute(statement)
            self.conn, self.pid = conn, os.getpid()
        return self.conn

    def run(self, sql: str, params: tuple = ()) -> tuple[list[tuple], int]:
        """One statement in its own transaction: its rows (read to the end, which ends the statement and
        its lock) and how many rows it changed."""
        with self.lock:
            cursor = self._connection().execute(sql, params)
            return cursor.fetchall(), cursor.rowcount

    def sweep(self, table: str, column: str, before: float) -> None:
        """Now and then, lapsed rows go (cheap: they are not counted anyway)."""
        if time.monotonic() - self.swept > SWEEP_SECONDS:
            self.swept = time.monotonic()
            self.run(f"DELETE FROM {table} WHERE {column} <= ?", (before,))  # names are constants of this module

    # ---- open event streams --------------------------------------------------------------------------
    def take_slot(self, user_id: int, per_user: int, hold_seconds: float) -> str | None:
        """A stream slot of user_id (its id), or None when they hold per_user already (on any process)."""
        now = time.time()
        self.sweep("stream_slot", "until", now)
        rows, _ = self.run(
            "INSERT INTO stream_slot (user_id, until) SELECT ?, ? WHERE "
            "(SELECT count(*) FROM stream_slot WHERE user_id = ? AND until > ?) < ? RETURNING id",
            (user_id, now + hold_seconds, user_id, now, per_user))
        return str(rows[0][0]) if rows else None

    def release_slot(self, slot_id: str) -> None:
        self.run("DELETE FROM stream_slot WHERE id = ?", (int(slot_id),))


# KEYS[1]: the user's set; ARGV: now, per_user, until, member, hold. Atomic in Redis: no two processes
# both see room for the last slot.
TAKE_SLOT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[5])
return 1
"""


class RedisSlots:
    """Open event streams per user in Redis: a sorted set per user, members scored by when they lapse."""

    def __init__(self, url: str) -> None:
        self.redis = redis.Redis.from_url(url)
        self.take = self.redis.register_script(TAKE_SLOT)

    @staticmethod
    def key(user_id: int) -> str:
        return f"myapp:stream-slots:{user_id}"

    def take_slot(self, user_id: int, per_user: int, hold_seconds: float) -> str | None:
        now, member = time.time(), uuid.uuid4().hex
        taken = self.take(keys=[self.key(user_id)],
                          args=[now, per_user, now + hold_seconds, member, math.ceil(hold_seconds)])
        return f"{user_id}:{member}" if taken else None

    def release_slot(self, slot_id: str) -> None:
        user_id, _, member = slot_id.partition(":")
        self.redis.zrem(self.key(int(user_id)), member)


SlotStore = SharedFile | RedisSlots


class SQLiteStorage(Storage, MovingWindowSupport):
    """`limits` storage on a SharedFile: `myappsqlite:///absolute/path.sqlite`."""

    STORAGE_SCHEME = ["myappsqlite"]

    def __init__(self, uri: str, wrap_exceptions: bool = False, **options: float | str | bool) -> None:
        self.file = SharedFile(uri.removeprefix("myappsqlite://"))
        self.longest = 0.0  # the longest window seen: hits older than it are swept
        super().__init__(uri, wrap_exceptions=wrap_exceptions, **options)

    @property
    def base_exceptions(self) -> type[Exception] | tuple[type[Exception], ...]:
        return sqlite3.Error

    # moving window: one row per hit, counted by time
    def acquire_entry(self, key: str, limit: int, expiry: int, amount: int = 1) -> bool:
        if amount > limit:
            return False
        now = time.time()
        self.longest = max(self.longest, expiry)
        self.file.sweep("hit", "at", now - self.longest)
        added, _ = self.file.run(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
            "INSERT INTO hit (key, at) SELECT ?, ? FROM n WHERE "
            "(SELECT count(*) FROM hit WHERE key = ? AND at > ?) + ? <= ? RETURNING 1",
            (amount, key, now, key, now - expiry, amount, limit))
        return len(added) == amount

    def get_moving_window(self, key: str, limit: int, expiry: int) -> tuple[float, int]:
        now = time.time()
        [(oldest, count)], _ = self.file.run("SELECT min(at), count(*) FROM hit WHERE key = ? AND at > ?",
                                             (key, now - expiry))
        return (oldest if count else now), count

    # fixed windows (the Storage interface; the platform's limits use moving windows)
    def incr(self, key: str, expiry: float, amount: int = 1) -> int:
        now = time.time()
        [(value,)], _ = self.file.run(
            "INSERT INTO counter (key, value, expires_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET "
            "value = CASE WHEN expires_at <= ? THEN excluded.value ELSE value + excluded.value END, "
            "expires_at = CASE WHEN expires_at <= ? THEN excluded.expires_at ELSE expires_at END RETURNING value",
            (key, amount, now + expiry, now, now))
        return int(value)

    def get(self, key: str) -> int:
        rows, _ = self.file.run("SELECT value FROM counter WHERE key = ? AND expires_at > ?", (key, time.time()))
        return int(rows[0][0]) if rows else 0

    def get_expiry(self, key: str) -> float:
        rows, _ = self.file.run("SELECT expires_at FROM counter WHERE key = ? AND expires_at > ?",
                                (key, time.time()))
        return float(rows[0][0]) if rows else time.time()

    def check(self) -> bool:
        try:
            self.file.run("SELECT 1")
        except sqlite3.Error:
            return False
        return True

    def reset(self) -> int | None:
        _, hits = self.file.run("DELETE FROM hit")
        _, counters = self.file.run("DELETE FROM counter")
        return hits + counters

    def clear(self, key: str) -> None:
        self.file.run("DELETE FROM hit WHERE key = ?", (key,))
        self.file.run("DELETE FROM counter WHERE key = ?", (key,))


def slot_store(app: Flask) -> SlotStore:
    """Where the app counts open streams per user: Redis when configured, else the shared file."""
    found = app.extensions.get("myapp-stream-slot-store")
    if found is None:
        url = app.config.get("REDIS_URL")
        made = RedisSlots(url) if url else SharedFile(app.config["MYAPP_SHARED_LIMITS_FILE"])
        found = app.extensions.setdefault("myapp-stream-slot-store", made)
    return found
