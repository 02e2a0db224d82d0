"""Helpers shared by the tests: waiting, API clients, the pass's database and broker, platform processes.

Not fixtures (those live in the conftest.py files, which import from here) and not tests.
"""
from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import logging
import os
import re
import socket
import sys
import threading
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


# ---- waiting ------------------------------------------------------------------------------------------
def wait_until(predicate: Callable[[], T], *, what: str | Callable[[], str], timeout: float = 20.0,
               interval: float = 0.05) -> T:
    """Call `predicate` every `interval` seconds until it returns something truthy, and return that.

    After `timeout` seconds raise AssertionError naming `what` was awaited (a callable is asked at that
    moment, to describe the state things were left in). The predicate is always called at least once,
    and once more at the deadline. Tests never sleep a fixed time: they wait for the real condition."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what() if callable(what) else what}")
        time.sleep(interval)


@contextlib.contextmanager
def in_process_worker(celery: Any, **options: Any) -> Iterator[Any]:
    """A Celery worker in this process (celery.contrib.testing's ``start_worker``), the root logger left as it
    was: the worker's logging setup sets it to its loglevel (ERROR) and swaps its handlers for the rest of the
    process, and a later test there would see no warning at all (``caplog`` empty, whichever test ran first)."""
    from celery.contrib.testing.worker import start_worker

    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    try:
        with start_worker(celery, **options) as worker:
            yield worker
    finally:
        root.setLevel(level)
        root.handlers[:] = handlers


def in_thread(fn: Callable[..., Any], *args: Any) -> tuple[threading.Thread, list[Any]]:
    """Run ``fn`` in a daemon thread; its result (or exception) lands in the returned list."""
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(fn(*args))
        except BaseException as exc:
            out.append(exc)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


# ---- the pass's database and broker -------------------------------------------------------------------
def elsewhere(statement: Any, write: bool = False) -> Any:
    """Run a statement on a connection of its own that waits for no lock, as another process would: a read
    sees only what was committed (its scalar is returned); a write (``write``) answers whether it went
    through, refused while another transaction holds its row (PostgreSQL) or the database (SQLite)."""
    import sqlalchemy as sa

    from myapp.extensions import db

    sqlite = db.engine.dialect.name == "sqlite"
    engine = sa.create_engine(db.engine.url, **({"connect_args": {"timeout": 0}} if sqlite else {}))
    try:
        with engine.connect() as connection:
            if not sqlite:
                connection.exec_driver_sql("SET lock_timeout = '200ms'")
            if not write:
                return connection.scalar(statement)
            connection.execute(statement)
            connection.commit()
            return True
    except sa.exc.OperationalError:
        if not write:
            raise
        return False
    finally:
        engine.dispose()


class StopProbe:
    """A backend that records, at each call that stops or removes something (cancel, cleanup, delete_secret),
    whether the worker has a transaction open and whether another writer can write the row ``row_id`` of
    ``model`` (setting ``column`` to itself; the test sets ``row_id`` once it knows the row)."""

    def __init__(self, inner: Any, model: Any, column: str) -> None:
        self.inner, self.model, self.column, self.row_id = inner, model, column, 0
        self.calls: list[tuple[str, bool, bool]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _probe(self, call: str) -> None:
        import sqlalchemy as sa

        from myapp.extensions import db

        write = sa.update(self.model).where(self.model.id == self.row_id).values(
            {self.column: getattr(self.model, self.column)})
        self.calls.append((call, db.session().in_transaction(), elsewhere(write, write=True)))

    def cancel(self, ref: Any) -> None:
        self._probe("cancel")
        self.inner.cancel(ref)

    def cleanup(self, ref: Any, archive: Any) -> None:
        self._probe("cleanup")
        self.inner.cleanup(ref, archive)

    def delete_secret(self, namespace: str, name: str) -> None:
        self._probe("delete_secret")
        self.inner.delete_secret(namespace, name)


TEST_DATABASE = os.environ.get("MYAPP_TEST_DATABASE", "sqlite")
PG_ADMIN_URL = os.environ.get("MYAPP_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS_TEST_SERVER = re.sub(r"/\d*$", "", os.environ.get("MYAPP_TEST_REDIS", "redis://127.0.0.1:6379"))
REDIS_ROLES = ("app", "tests", "platform")
REDIS_LAST_DB = 13  # 14 is benchmarks/controller.py's, 15 is left for people; 0 is Redis's default


def redis_test_url(role: str) -> str:
    """A Redis DB of this test process alone: xdist worker gwN gets 1 + 3N .. 3 + 3N, one per role
    ("app": the session's app, "tests": workers and caches tests start themselves, "platform":
    platform processes), so parallel workers never consume or flush each other's queues."""
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))
    number = 1 + len(REDIS_ROLES) * worker + REDIS_ROLES.index(role)
    if number > REDIS_LAST_DB:
        raise RuntimeError(f"no Redis DB left for xdist worker gw{worker}: use at most 4 workers")
    return f"{REDIS_TEST_SERVER}/{number}"


REDIS_TEST_URL = redis_test_url("tests")
# How the test app hashes passwords (FAB_PASSWORD_HASH_METHOD): the platform's hash (scrypt) costs 0.1-0.16
# CPU s per hash and per check, and every test user is made and signs in.
TEST_PASSWORD_HASH = "pbkdf2:sha256:1"


def flush_redis(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    client.flushdb()
    client.close()


def pg_url(name: str) -> str:
    return PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"


def pg_database(name: str, create: bool) -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        if create:
            conn.execute(f'CREATE DATABASE "{name}"')
        else:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def scratch_database(tmp_path: Path) -> Iterator[str]:
    """The URL of an empty database of the pass's kind, for a migration test: a SQLite file in tmp_path, or
    on PostgreSQL a fresh database dropped afterwards."""
    if TEST_DATABASE != "postgresql":
        yield f"sqlite:///{tmp_path / 'scratch.sqlite'}"
        return
    name = f"myapp_scratch_{uuid.uuid4().hex[:10]}"
    pg_database(name, create=True)
    try:
        yield pg_url(name)
    finally:
        pg_database(name, create=False)


# ---- platform processes -------------------------------------------------------------------------------
# The console script a user runs, installed by `pip install -e .`
MYAPP = [str(Path(sys.executable).parent / "myapp")]


@contextlib.contextmanager
def platform_environment(home: Path) -> Iterator[dict[str, str]]:
    """The environment of platform processes a test starts (`myapp init`, `myapp run`, ...), on the
    pass's database and broker: on PostgreSQL a fresh database (dropped afterwards) and this worker's
    platform Redis DB (flushed before and after); otherwise the embedded default in `home`."""
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "MYAPP_ADMIN_PASSWORD")}
    env["MYAPP_HOME"] = str(home)
    if TEST_DATABASE != "postgresql":
        yield env
        return
    name, redis_url = f"myapp_proc_{uuid.uuid4().hex[:10]}", redis_test_url("platform")
    pg_database(name, create=True)
    flush_redis(redis_url)
    try:
        yield env | {"DATABASE_URL": pg_url(name), "REDIS_URL": redis_url}
    finally:
        pg_database(name, create=False)
        flush_redis(redis_url)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def wsgi_server(app: Any) -> Iterator[str]:
    """A WSGI app over real HTTP (threads) on a free loopback port; yields its base URL."""
    from werkzeug.serving import make_server

    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()


@contextlib.contextmanager
def aiohttp_server(application: Any, what: str) -> Iterator[str]:
    """An aiohttp application on its own event-loop thread on a free loopback port; yields its base URL
    once it listens (`what` names it in the wait's error)."""
    import asyncio

    from aiohttp import web

    port = free_port()
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(application)

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(runner.setup())
        loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", port).start())
        loop.run_forever()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    def listening() -> bool:
        with socket.socket() as sock:
            return sock.connect_ex(("127.0.0.1", port)) == 0

    wait_until(listening, what=f"{what} listening")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


@contextlib.contextmanager
def default_backend(app: Any, backend: Any) -> Iterator[Any]:
    """`backend` is the one workers and the web resolve for the app's default backend, until the block ends
    (then whatever was registered before is back)."""
    from myapp.backends import registry

    key = ("default", app.config["MYAPP_BACKEND"])
    saved = registry._backends.get(key)
    registry._backends[key] = backend
    try:
        yield backend
    finally:
        registry._backends.pop(key)
        if saved is not None:
            registry._backends[key] = saved


def healthy(base: str) -> bool:
    """Whether the platform's web at `base` answers /health (False while it is not listening yet, or starting)."""
    import requests

    try:
        return requests.get(f"{base}/health", timeout=5).status_code == 200
    except requests.RequestException:
        return False


# ---- the API, as a script or the CLI calls it ---------------------------------------------------------
def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


class ApiClient:
    """A JSON client authenticated with a JWT, as a script or the CLI would be."""

    def __init__(self, flask_client, token: str | None, user=None):
        self.client = flask_client
        self.token = token
        self.user = user

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    def request(self, method: str, path: str, json=None, headers=None, **kwargs):
        return self.client.open(path, method=method, json=json, headers=self._headers() | (headers or {}), **kwargs)

    def get(self, path: str, **kw):
        return self.request("GET", path, **kw)

    def post(self, path: str, json=None, **kw):
        return self.request("POST", path, json=json, **kw)

    def put(self, path: str, json=None, **kw):
        return self.request("PUT", path, json=json, **kw)

    def delete(self, path: str, **kw):
        return self.request("DELETE", path, **kw)


def login_token(flask_client, username: str, password: str) -> str:
    resp = flask_client.post("/api/v1/security/login",
                             json={"username": username, "password": password, "provider": "db"})
    assert resp.status_code == 200, resp.get_json()
    return resp.get_json()["access_token"]


def stop_local_jobs(root: Path, timeout: float = 30.0) -> list[str]:
    """Cancel every local-backend job still running whose folder is under root, as LocalBackend.cancel does
    (the cancel file, SIGTERM to its supervisor, which stops its processes), and wait for them: local jobs
    outlive the platform that started them on purpose (a restart adopts them), so a test's platform home
    must stop its own when the test is done. Returns the folders of the jobs it stopped."""
    import psutil

    from myapp.backends.local.job_folders import META

    root = Path(root).resolve()
    stopped = []
    for proc in psutil.process_iter(["cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if "myapp.backends.local.supervisor" not in cmdline or cmdline[-1] == "myapp.backends.local.supervisor":
            continue
        jobdir = Path(cmdline[-1])
        if not jobdir.is_relative_to(root):
            continue
        with contextlib.suppress(OSError):
            (jobdir / META / "cancel").touch()
        with contextlib.suppress(psutil.Error):
            proc.terminate()
            stopped.append((proc, str(jobdir)))
    _gone, alive = psutil.wait_procs([proc for proc, _dir in stopped], timeout=timeout)
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    return [jobdir for _proc, jobdir in stopped]


# ---- Python packages from 127.0.0.1: no test installs from the network ------------------------------------
def wheel(name: str, value: object, version: str = "0.1") -> bytes:
    """A pure-Python wheel of one module, `<name>.VALUE == value`, with its `__version__` (the module named as
    pip imports the distribution `name`), written as the wheel format says (PEP 427): the module, METADATA,
    WHEEL and a RECORD of their hashes."""
    module = name.replace("-", "_")
    dist = f"{module}-{version}.dist-info"
    files = {f"{module}/__init__.py": f"VALUE = {value!r}\n__version__ = {version!r}\n".encode(),
             f"{dist}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
             f"{dist}/WHEEL": b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}

    def digest(data: bytes) -> str:
        return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()

    record = "".join(f"{path},sha256={digest(data)},{len(data)}\n" for path, data in files.items())
    files[f"{dist}/RECORD"] = (record + f"{dist}/RECORD,,\n").encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return out.getvalue()


def wheel_file(name: str, version: str = "0.1") -> str:
    return f"{name.replace('-', '_')}-{version}-py3-none-any.whl"


def publish(index: Path, name: str, value: object, version: str = "0.1") -> str:
    """The wheel of `name` (see `wheel`) in the package index served from `index` (`package_index`); the
    requirement that installs it."""
    project = index / "simple" / name.lower()
    project.mkdir(parents=True, exist_ok=True)
    (project / wheel_file(name, version)).write_bytes(wheel(name, value, version))
    return f"{name}=={version}"


@contextlib.contextmanager
def package_index(index: Path) -> Iterator[str]:
    """A PEP 503 index of the wheels under index/simple/<name>/ (http.server's folder listing is the project
    page pip reads) on 127.0.0.1; its URL, for PIP_INDEX_URL."""
    import http.server

    (index / "simple").mkdir(parents=True, exist_ok=True)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(index), **kwargs)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple/"
    finally:
        server.shutdown()
        server.server_close()
