"""The embedded broker: a small kombu transport on a SQLite file in MYAPP_HOME (no new service).

kombu's filesystem transport moved about 2 messages/s under Celery (it lists and sorts the
whole folder for every message, and waits a second whenever the worker had no room), and
kombu's own SQLAlchemy transport keeps every delivered message forever. Here a queue is rows
of one table: publish is an INSERT, consume a DELETE ... RETURNING of the oldest row (one
statement, so two consumers never get the same message), and exchange bindings live in the
file too, so fanout (Celery's control and ping) reaches other processes.

Like every virtual transport, a message is gone from the file once a worker has it: a worker
killed mid-task loses it. SQL is the source of truth; beat re-sends reconciles whose request
went stale (myapp/shared/reconcile_requests.py).
"""
from __future__ import annotations

import fcntl
import sqlite3
import threading
from queue import Empty
from time import monotonic
from typing import Any

from kombu.transport import TRANSPORT_ALIASES, virtual
from kombu.utils.json import dumps, loads

SCHEME = "myappsql"
POLLING_INTERVAL = 0.05  # seconds a consumer with nothing to do waits before it looks again
SCHEMA = """
CREATE TABLE IF NOT EXISTS message (id INTEGER PRIMARY KEY AUTOINCREMENT, queue TEXT NOT NULL,
                                    payload TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS message_queue_id ON message (queue, id);
CREATE TABLE IF NOT EXISTS binding (exchange TEXT NOT NULL, routing_key TEXT NOT NULL, pattern TEXT NOT NULL,
                                    queue TEXT NOT NULL, PRIMARY KEY (exchange, routing_key, pattern, queue));
"""


class Channel(virtual.Channel):
    supports_fanout = True  # bindings are in the file: every process sees every binding

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._sql_lock = threading.Lock()  # a channel may move between a pool's threads
        self._sql: sqlite3.Connection | None = None

    def _db(self) -> sqlite3.Connection:
        if self._sql is None:
            path = self.connection.client.transport_options["path"]
            # Autocommit: each statement is its own transaction; writers wait for each other.
            conn = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
            # Web, worker and beat open it at once on a first start: switching to WAL and creating
            # the tables can fail with "database is locked" without waiting, so one at a time.
            with open(f"{path}.lock", "a") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.executescript(SCHEMA)
            conn.execute("PRAGMA synchronous=NORMAL")
            self._sql = conn
        return self._sql

    def _execute(self, sql: str, params: tuple = ()) -> list[tuple]:
        with self._sql_lock:
            return self._db().execute(sql, params).fetchall()

    # kombu's own base classes disagree on the argument's name (message vs payload).
    def _put(self, queue, payload, **kwargs):  # type: ignore[override]
        self._execute("INSERT INTO message (queue, payload) VALUES (?, ?)", (queue, dumps(payload)))

    def _get(self, queue, timeout=None):
        while True:
            # A read first: polling an empty queue takes no write lock.
            head = self._execute("SELECT id FROM message WHERE queue = ? ORDER BY id LIMIT 1", (queue,))
            if not head:
                raise Empty()
            taken = self._execute("DELETE FROM message WHERE id = ? RETURNING payload", (head[0][0],))
            if taken:
                return loads(taken[0][0])
            # another consumer took it between the two statements: look again

    def _size(self, queue):
        return self._execute("SELECT count(*) FROM message WHERE queue = ?", (queue,))[0][0]

    def _purge(self, queue):
        return len(self._execute("DELETE FROM message WHERE queue = ? RETURNING id", (queue,)))

    def get_table(self, exchange):
        # (routing key, pattern, queue): the rows of an exchange's table, as the virtual base keeps them
        return self._execute("SELECT routing_key, pattern, queue FROM binding WHERE exchange = ?", (exchange,))

    def _queue_bind(self, exchange, routing_key, pattern, queue):
        self._execute("INSERT OR IGNORE INTO binding VALUES (?, ?, ?, ?)",
                      (exchange, routing_key or "", pattern or "", queue or ""))

    def _put_fanout(self, exchange, payload, routing_key, **kwargs):
        for _, _, queue in self.get_table(exchange):
            self._put(queue, payload)

    def _delete(self, queue, exchange, routing_key, pattern, *args, **kwargs):
        super()._delete(queue, exchange, routing_key, pattern, *args, **kwargs)
        self._execute("DELETE FROM binding WHERE exchange = ? AND routing_key = ? AND pattern = ? AND queue = ?",
                      (exchange, routing_key or "", pattern or "", queue or ""))
        self._execute("DELETE FROM message WHERE queue = ?", (queue,))

    # An ack or a reject makes room in the worker: wake the consuming loop now (Transport.drain_events).
    def basic_ack(self, delivery_tag, multiple=False):
        super().basic_ack(delivery_tag, multiple)
        self._made_room()

    def basic_reject(self, delivery_tag, requeue=False):
        super().basic_reject(delivery_tag, requeue)
        self._made_room()

    def _made_room(self) -> None:
        if self.connection is not None:  # None once the channel closed (late acks at shutdown)
            self.connection.room.set()

    def close(self) -> None:
        super().close()
        with self._sql_lock:
            if self._sql is not None:
                self._sql.close()
                self._sql = None


class Transport(virtual.Transport):
    Channel = Channel
    global_state = virtual.BrokerState()  # the routing state lives in the file; share the rest
    implements = virtual.Transport.implements.extend(asynchronous=False,
                                                     exchange_type=frozenset(["direct", "topic", "fanout"]))
    default_port = None
    driver_type = "sql"
    driver_name = "sqlite"
    polling_interval = POLLING_INTERVAL

    def __init__(self, client: Any, **kwargs: Any) -> None:
        super().__init__(client, **kwargs)
        self.state = self.global_state
        self.room = threading.Event()

    # kombu's base classes disagree on this signature too (timeout vs **kwargs).
    def drain_events(self, connection: Any, timeout: float | None = None) -> None:  # type: ignore[override]
        """kombu's loop sleeps a polling interval whenever it got nothing, including when the
        worker had no room for a message (prefetch): that capped Celery at about two messages
        per interval. Here the wait ends early when an ack makes room."""
        started = monotonic()
        assert self.cycle is not None  # set by kombu when the connection opened
        while True:
            try:
                self.cycle.get(self._deliver, timeout=timeout)
                return
            except Empty:
                if timeout is not None and monotonic() - started >= timeout:
                    raise TimeoutError() from None
                self.room.wait(self.polling_interval)
                self.room.clear()

    def driver_version(self) -> str:
        return sqlite3.sqlite_version

    @property
    def default_connection_params(self) -> dict[str, Any]:
        # A file, not a host: without a default hostname kombu does not warn that none was given.
        return {"port": None}


TRANSPORT_ALIASES[SCHEME] = f"{__name__}:Transport"
