"""Test fixtures: one app per process (FAB allows no more), on SQLite or PostgreSQL.

MYAPP_TEST_DATABASE=postgresql runs the same tests on a fresh PostgreSQL database
created for this process on 127.0.0.1:5432 and dropped afterwards.
"""
from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

PG_ADMIN_URL = os.environ.get("MYAPP_TEST_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
REDIS_TEST_URL = os.environ.get("MYAPP_TEST_REDIS", "redis://127.0.0.1:6379/15")


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
    backend = os.environ.get("MYAPP_TEST_DATABASE", "sqlite")
    pg_name = None
    os.environ.pop("REDIS_URL", None)
    if backend == "postgresql":
        pg_name = f"myapp_test_{uuid.uuid4().hex[:10]}"
        _pg_database(pg_name, create=True)
        os.environ["DATABASE_URL"] = PG_ADMIN_URL.rsplit("/", 1)[0] + f"/{pg_name}"
    else:
        os.environ.pop("DATABASE_URL", None)
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
