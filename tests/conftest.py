"""Fixtures shared by the whole suite (helpers that are not fixtures are in tests/support.py).

One app per process (FAB allows no more), on SQLite or PostgreSQL: MYAPP_TEST_DATABASE=postgresql runs
the same tests on a fresh PostgreSQL database created for this process on 127.0.0.1:5432 and dropped
afterwards, with Redis (127.0.0.1:6379) as broker and cache; the platform processes tests start
(`platform_env`) get the same, each on a database of their own.

The Kubernetes API-server double (`double`) and the real Kubernetes backend on it (`k8s_backend`) are
here too: tests/backends/kubernetes, tests/test_install.py and tests/security use them.
"""
from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support import (
    TEST_DATABASE,
    TEST_PASSWORD_HASH,
    ApiClient,
    default_backend,
    flush_redis,
    login_token,
    pg_database,
    pg_url,
    platform_environment,
    redis_test_url,
    stop_local_jobs,
    unique,
)

if TYPE_CHECKING:
    from myapp.backends.kubernetes import KubernetesBackend
    from tests.k8s_double import ApiServerDouble
    from tests.k8s_double.support import Sleeps


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The modules with slow tests first, each module's tests kept together and in order: `make test`
    splits the tests between two xdist workers that steal from each other's queue (--dist worksteal),
    so the long tests start while both queues are long, and both workers end with short ones."""
    first_of: dict[str, int] = {}
    for index, item in enumerate(items):
        first_of.setdefault(item.nodeid.split("::")[0], index)
    slow = {item.nodeid.split("::")[0] for item in items if item.get_closest_marker("slow")}
    position = {id(item): index for index, item in enumerate(items)}

    def key(item: pytest.Item) -> tuple[bool, int, int]:
        module = item.nodeid.split("::")[0]
        return module not in slow, first_of[module], position[id(item)]

    items.sort(key=key)


@pytest.fixture(scope="session", autouse=True)
def no_local_job_outlives_the_tests(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Local jobs outlive the platform that started them (a restart adopts them): whatever the tests'
    platforms left running (notebooks, model servers) is stopped when this process's tests end."""
    yield
    stop_local_jobs(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="session")
def instance_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("instance")


@pytest.fixture(scope="session")
def app(instance_dir: Path) -> Iterator:
    pg_name = None
    if TEST_DATABASE == "postgresql":
        pg_name = f"myapp_test_{uuid.uuid4().hex[:10]}"
        pg_database(pg_name, create=True)
        os.environ["DATABASE_URL"] = pg_url(pg_name)
        os.environ["REDIS_URL"] = redis_test_url("app")
        flush_redis(os.environ["REDIS_URL"])  # what an earlier session left queued or cached
    else:
        os.environ.pop("DATABASE_URL", None)
        os.environ.pop("REDIS_URL", None)
    os.environ["MYAPP_HOME"] = str(instance_dir)

    from myapp.app import create_app
    from myapp.models.migrate import upgrade
    from myapp.setup_data import sync_roles

    # Webhook tests post to local receivers (127.0.0.1) and hooks.local, names no DNS has. Passwords are
    # hashed as FAB hashes them, with one PBKDF2 round instead of scrypt's 0.1-0.16 CPU s per hash and per
    # check (every test user is made and signs in; tests/auth/test_password_hashing.py checks the real
    # setting is scrypt and that a user made and signed in with it works).
    flask_app = create_app({"TESTING": True, "WTF_CSRF_ENABLED": True,
                            "MYAPP_WEBHOOK_ALLOWED_HOSTS": ("127.0.0.1", "hooks.local"),
                            "FAB_PASSWORD_HASH_METHOD": TEST_PASSWORD_HASH})
    with flask_app.app_context():
        upgrade()
        sync_roles()
    yield flask_app
    if pg_name:
        from myapp.extensions import db

        with flask_app.app_context():
            db.engine.dispose()
        pg_database(pg_name, create=False)
        flush_redis(os.environ["REDIS_URL"])  # runs enqueued that no worker consumed


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

    from myapp.extensions import db
    from myapp.models import JobTemplate
    from myapp.rendering.catalog import load_catalog
    from myapp.setup_data import sync_catalog

    with app.app_context():
        sync_catalog(load_catalog())
        return db.session.scalar(sa.select(JobTemplate.id).filter_by(name="python"))


@pytest.fixture()
def fake_default_backend(app):
    """Workers resolve backends through the registry; put a fake one there for this test."""
    from tests.fake_backend import FakeBackend

    with default_backend(app, FakeBackend()) as backend:
        yield backend


@pytest.fixture()
def double() -> Iterator[ApiServerDouble]:
    """A Kubernetes API-server double on 127.0.0.1 (tests/k8s_double), stopped after the test."""
    from tests.k8s_double import ApiServerDouble

    with ApiServerDouble() as server:
        yield server


@pytest.fixture()
def sleeps() -> Sleeps:
    """The backoff delays the Kubernetes backend would have slept (it is given this instead of time.sleep)."""
    from tests.k8s_double.support import Sleeps

    return Sleeps()


@pytest.fixture()
def k8s_backend(double: ApiServerDouble, sleeps: Sleeps) -> Iterator[KubernetesBackend]:
    """The real Kubernetes backend, talking to `double`, with fast test settings (make_backend)."""
    from tests.k8s_double.support import make_backend

    instance = make_backend(double, sleeps)
    yield instance
    instance.close()
