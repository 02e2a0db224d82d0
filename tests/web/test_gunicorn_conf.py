"""The web server's settings (myapp/web/gunicorn_conf.py), on a real gunicorn: a keep-alive connection is
closed after KEEPALIVE_REQUESTS answers, so a client cannot stay on one worker for good, and the workers
take new connections in turn (myapp/web/gunicorn_worker.py)."""
from __future__ import annotations

import http.client
import subprocess
import sys
import time
from types import SimpleNamespace

import psutil

from myapp.web import gunicorn_worker
from tests.support import free_port, healthy, platform_environment, wait_until


def test_a_kept_alive_connection_is_closed_after_its_share_of_requests(tmp_path):
    port = free_port()
    with platform_environment(tmp_path) as env:
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "python:myapp.web.gunicorn_conf", "--bind", f"127.0.0.1:{port}",
             "--workers", "1", "myapp.wsgi:app"],
            env=env | {"MYAPP_KEEPALIVE_REQUESTS": "3", "MYAPP_WEB_THREADS": "4"},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_until(lambda: healthy(f"http://127.0.0.1:{port}"), what="gunicorn answering /health", timeout=60)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            closes = []
            for _ in range(7):
                conn.request("GET", "/health")
                resp = conn.getresponse()
                assert resp.status == 200 and resp.read()
                closes.append(resp.will_close)
                if resp.will_close:
                    conn.close()  # the next request connects again, as HTTP/1.1 clients do
            assert closes == [False, False, True, False, False, True, False]
        finally:
            server.terminate()
            server.wait(30)


def _connections_per_worker(server: subprocess.Popen, port: int, statuses=(psutil.CONN_ESTABLISHED,)) -> list[int]:
    counts = []
    for worker in psutil.Process(server.pid).children():
        counts.append(sum(1 for c in worker.net_connections("tcp")
                          if c.status in statuses and c.laddr and c.laddr.port == port))
    return sorted(counts)


# A worker's side of a connection, open or closed by the client but not yet by the worker (CLOSE_WAIT).
HELD = (psutil.CONN_ESTABLISHED, psutil.CONN_CLOSE_WAIT, psutil.CONN_LAST_ACK)


def _all_closed(server: subprocess.Popen, port: int) -> bool:
    """The workers closed their side of every connection the clients closed (so each counts it no more)."""
    return sum(_connections_per_worker(server, port, statuses=HELD)) == 0


def test_workers_take_turns_at_new_connections(tmp_path):
    """Kept-alive clients connecting one after another end up evenly on the workers (myapp/web/gunicorn_worker.py),
    not mostly on the one that happens to call accept() first. A worker still loading the app holds no
    one back, so the clients connect again until both workers are up (a split drawn meanwhile is uneven)."""
    port = free_port()
    with platform_environment(tmp_path) as env:
        server = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "python:myapp.web.gunicorn_conf", "--bind", f"127.0.0.1:{port}",
             "--workers", "2", "myapp.wsgi:app"],
            env=env | {"MYAPP_WEB_THREADS": "4"}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        splits = []

        def even_split() -> bool:
            clients = []
            try:
                for _ in range(12):
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
                    clients.append(conn)
                    conn.request("GET", "/health")
                    resp = conn.getresponse()
                    assert resp.status == 200 and resp.read() and not resp.will_close
                splits.append(_connections_per_worker(server, port))
                return splits[-1] == [6, 6]
            finally:
                for conn in clients:
                    conn.close()
                # The next clients find no connection left over: a loaded machine's worker may not have seen
                # these closes yet, and would count them against itself (a 4/8 split then, not balancing's fault).
                wait_until(lambda: _all_closed(server, port), timeout=30, interval=0.05,
                           what="the workers to close the clients' connections")

        try:
            wait_until(lambda: healthy(f"http://127.0.0.1:{port}"), what="gunicorn answering /health", timeout=60)
            wait_until(even_split, what=lambda: f"an even split, not {splits}", timeout=60)
            for _ in range(3):  # once both workers are up, every split is even
                assert even_split(), splits
        finally:
            server.terminate()
            server.wait(30)


class _Worker:
    myapp_slot: int | None = None


def test_only_live_workers_with_fewer_connections_hold_a_worker_back():
    server = SimpleNamespace(WORKERS={})
    workers = []
    for pid in (101, 102, 103):
        worker = _Worker()
        gunicorn_worker.assign_slot(server, worker)
        server.WORKERS[pid] = worker
        workers.append(worker)
    assert [w.myapp_slot for w in workers] == [0, 1, 2]
    now = time.monotonic()

    def publish(worker: _Worker, pid: int, count: int, stamp: float) -> None:
        gunicorn_worker._SLOT.pack_into(gunicorn_worker._table, (worker.myapp_slot or 0) * gunicorn_worker._SLOT.size,
                                        pid, count, stamp)

    publish(workers[0], 101, 5, now)
    publish(workers[1], 102, 3, now)
    publish(workers[2], 103, gunicorn_worker.GONE, now)  # stopping or full
    assert not gunicorn_worker.least_loaded(0, 5, now)  # worker 102 holds fewer
    assert gunicorn_worker.least_loaded(1, 3, now)
    assert gunicorn_worker.least_loaded(1, 4, now - 1)  # equal or fewer: 103 does not count
    publish(workers[1], 102, 3, now - gunicorn_worker.STALE - 1)  # 102 stopped publishing (dead or stuck)
    assert gunicorn_worker.least_loaded(0, 5, now)
    del server.WORKERS[102]  # a new worker takes the slot of one that is gone
    replacement = _Worker()
    gunicorn_worker.assign_slot(server, replacement)
    assert replacement.myapp_slot == 1
    assert gunicorn_worker.least_loaded(0, 5, now)  # a slot just assigned holds no one back


def test_the_access_line_is_gunicorns_own(monkeypatch):
    """myapp.web.gunicorn_log builds gunicorn's default access line itself: byte for byte what gunicorn writes,
    quotes escaped as gunicorn escapes them, for a plain request, a Basic-auth one and odd header values."""
    import datetime as dt
    import logging

    from gunicorn.config import Config
    from gunicorn.glogging import Logger

    from myapp.web.gunicorn_log import AccessLogger

    def line_of(logger_class, resp, environ):
        cfg = Config()
        cfg.set("accesslog", "-")
        logger = logger_class(cfg)
        monkeypatch.setattr(logger, "now", lambda: "[24/Nov/2026:22:00:00 +0000]")
        records: list[str] = []
        handler = logging.Handler()
        handler.emit = lambda record: records.append(record.getMessage())
        logger.access_log.handlers = [handler]
        logger.access(resp, SimpleNamespace(headers=[("Host", "x")]), environ, dt.timedelta(microseconds=1500))
        return records

    base = {"REQUEST_METHOD": "GET", "RAW_URI": "/api/v1/task_run/?state=running&page=2",
            "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "10.0.0.7", "PATH_INFO": "/api/v1/task_run/"}
    cases = [
        (SimpleNamespace(status="200 OK", sent=1234, headers=[("Content-Type", "application/json")]), base),
        (SimpleNamespace(status="404 NOT FOUND", sent=None, headers=[]),
         base | {"HTTP_AUTHORIZATION": "Basic YWxpY2U6c2VjcmV0", "HTTP_REFERER": 'http://a/"x"',
                 "HTTP_USER_AGENT": 'curl/8 "quoted"', "RAW_URI": '/a"b'}),
        (SimpleNamespace(status=503, sent=0, headers=[]), {k: v for k, v in base.items() if k != "REMOTE_ADDR"}),
    ]
    for resp, environ in cases:
        ours, theirs = line_of(AccessLogger, resp, environ), line_of(Logger, resp, environ)
        assert ours == theirs and len(ours) == 1, (ours, theirs)
