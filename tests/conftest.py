"""Test fixtures: one app per process (FAB allows no more), on SQLite or PostgreSQL.

MYAPP_TEST_DATABASE=postgresql runs the same tests on a fresh PostgreSQL database
created for this process on 127.0.0.1:5432 and dropped afterwards, with Redis (127.0.0.1:6379)
as broker and cache; the platform processes tests start (`platform_env`) get the same, each
on a database of their own.
"""
from __future__ import annotations

import contextlib
import os
import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

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


def _flush_redis(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    client.flushdb()
    client.close()


def _pg_url(name: str) -> str:
    return PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{name}"


def _pg_database(name: str, create: bool) -> None:
    import psycopg

    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as conn:
        if create:
            conn.execute(f'CREATE DATABASE "{name}"')
        else:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="session")
def instance_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("instance")


@pytest.fixture(scope="session")
def app(instance_dir: Path) -> Iterator:
    pg_name = None
    if TEST_DATABASE == "postgresql":
        pg_name = f"myapp_test_{uuid.uuid4().hex[:10]}"
        _pg_database(pg_name, create=True)
        os.environ["DATABASE_URL"] = _pg_url(pg_name)
        os.environ["REDIS_URL"] = redis_test_url("app")
        _flush_redis(os.environ["REDIS_URL"])  # what an earlier session left queued or cached
    else:
        os.environ.pop("DATABASE_URL", None)
        os.environ.pop("REDIS_URL", None)
    os.environ["MYAPP_HOME"] = str(instance_dir)

    from myapp.app import create_app
    from myapp.migrate import upgrade
    from myapp.setup_data import sync_roles

    flask_app = create_app({"TESTING": True, "WTF_CSRF_ENABLED": True})
    with flask_app.app_context():
        upgrade()
        sync_roles()
    yield flask_app
    if pg_name:
        from myapp.extensions import db

        with flask_app.app_context():
            db.engine.dispose()
        _pg_database(pg_name, create=False)
        _flush_redis(os.environ["REDIS_URL"])  # runs enqueued that no worker consumed


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
    _pg_database(name, create=True)
    _flush_redis(redis_url)
    try:
        yield env | {"DATABASE_URL": _pg_url(name), "REDIS_URL": redis_url}
    finally:
        _pg_database(name, create=False)
        _flush_redis(redis_url)


@pytest.fixture()
def platform_env() -> Iterator[Callable[[Path], dict[str, str]]]:
    """platform_env(home) -> the environment for platform processes (see platform_environment),
    cleaned up after the test. One platform per test: they would share the worker's Redis DB."""
    with contextlib.ExitStack() as stack:
        yield lambda home: stack.enter_context(platform_environment(home))


@pytest.fixture()
def ctx(app):
    with app.app_context():
        yield


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


@pytest.fixture()
def make_user(app):
    """make_user(admin=False) -> ApiClient logged in as a new user."""

    def _make(admin: bool = False) -> ApiClient:
        from myapp.setup_data import create_user

        name = unique("admin" if admin else "user")
        password = uuid.uuid4().hex
        with app.app_context():
            user = create_user(name, password, admin=admin)
            user_id = user.id
        client = app.test_client()
        api = ApiClient(client, login_token(client, name, password))
        api.username, api.password, api.user_id = name, password, user_id
        return api

    return _make


@pytest.fixture()
def admin(make_user) -> ApiClient:
    return make_user(admin=True)


@pytest.fixture()
def user(make_user) -> ApiClient:
    return make_user()


@pytest.fixture()
def catalog(app):
    """The shipped job-template catalog in the database; returns the `python` template's id."""
    import sqlalchemy as sa

    from myapp.catalog import load_catalog
    from myapp.extensions import db
    from myapp.models import JobTemplate
    from myapp.setup_data import sync_catalog

    with app.app_context():
        sync_catalog(load_catalog())
        return db.session.scalar(sa.select(JobTemplate.id).filter_by(name="python"))
