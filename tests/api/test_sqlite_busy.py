"""SQLite has one writer at a time: a request whose write waited out the busy timeout runs again from the
start (myapp/api/routing.py), and when the database stays locked it answers 503 with Retry-After, never a
500. Another real connection holds the write lock (BEGIN IMMEDIATE), as the worker's pass does; the app's
connections wait 0.1 s instead of 10 s, so a run of the request finds it locked quickly."""
from __future__ import annotations

import contextlib
import io
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.support import TEST_DATABASE, unique
from tests.world import created

pytestmark = pytest.mark.skipif(TEST_DATABASE == "postgresql", reason="SQLite's single writer")


@pytest.fixture()
def database(app) -> Iterator[str]:
    """The app's SQLite file, its connections waiting 0.1 s for a lock while the test runs."""
    from myapp.extensions import db

    with app.app_context():
        engine = db.engine

    def short_wait(dbapi_connection, _record, _proxy) -> None:
        dbapi_connection.execute("PRAGMA busy_timeout=100")

    sa.event.listen(engine, "checkout", short_wait)
    try:
        yield str(engine.url.database)
    finally:
        sa.event.remove(engine, "checkout", short_wait)
        engine.dispose()  # connections made from now on wait the platform's own timeout again


@contextlib.contextmanager
def write_lock(path: str, release_after: float | None = None) -> Iterator[None]:
    """Another connection holding SQLite's write lock, for release_after seconds or the whole block."""
    holder = sqlite3.connect(path, isolation_level=None, timeout=10, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    timer = threading.Timer(release_after, holder.rollback) if release_after is not None else None
    if timer is not None:
        timer.start()
    try:
        yield
    finally:
        if timer is not None:
            timer.join()
        holder.rollback()
        holder.close()


def names(owner, pid: int) -> list[str]:
    return [p["name"] for p in owner.get(f"/api/v1/pipeline/?project_id={pid}&page_size=100").get_json()["items"]]


def test_a_write_that_finds_the_database_locked_runs_again_and_succeeds(database, make_user):
    owner = make_user()
    pid = created(owner.post("/api/v1/project/", json={"name": unique("busy")}))["id"]
    started = time.monotonic()
    with write_lock(database, release_after=0.5):
        answer = owner.post("/api/v1/pipeline/", json={"project_id": pid, "name": "after-the-lock"})
    assert answer.status_code == 201, answer.get_json()
    assert time.monotonic() - started >= 0.5  # it did wait for the other writer
    assert names(owner, pid) == ["after-the-lock"]  # stored once
    pipeline = answer.get_json()["id"]
    with write_lock(database, release_after=0.5):  # a delete likewise (the notebook delete that once was a 500)
        assert owner.delete(f"/api/v1/pipeline/{pipeline}").status_code == 200
    assert names(owner, pid) == []


def test_a_database_locked_through_every_run_answers_503_with_retry_after(database, make_user):
    owner = make_user()
    pid = created(owner.post("/api/v1/project/", json={"name": unique("busy")}))["id"]
    with write_lock(database):
        answer = owner.post("/api/v1/pipeline/", json={"project_id": pid, "name": "never"})
    assert answer.status_code == 503 and answer.headers["Retry-After"].isdigit()
    assert "busy" in answer.get_json()["message"]
    assert names(owner, pid) == []


def test_an_upload_run_again_keeps_one_file(database, make_user, app):
    """What a run did outside the transaction (the file it stored) is undone before the next run."""
    owner = make_user()
    project = created(owner.post("/api/v1/project/", json={"name": unique("busy")}))
    form = {"project_id": str(project["id"]), "name": "iris", "framework": "sklearn",
            "file": (io.BytesIO(b"model bytes"), "model.joblib")}
    with write_lock(database, release_after=0.5):
        answer = owner.post("/api/v1/model_version/upload", data=form, content_type="multipart/form-data")
    assert answer.status_code == 201, answer.get_json()
    store = Path(app.config["INSTANCE_PATH"]) / "jobs" / "data" / project["namespace"] / "models" / "iris"
    assert [p.read_bytes() for p in store.rglob("*") if p.is_file()] == [b"model bytes"]
    assert Path(answer.get_json()["uri"]).read_bytes() == b"model bytes"


def test_a_task_that_finds_the_database_locked_runs_again(database, app):
    """Worker and beat tasks (here the heartbeat) are run again from the start as routes are: a busy
    database is a pause in the worker's log, not a failed task."""
    from myapp.tasks import heartbeat

    host = unique("host")
    with write_lock(database, release_after=0.5):
        assert heartbeat(host)["beats"] == 1
    with write_lock(database), pytest.raises(sa.exc.OperationalError, match="database is locked"):
        heartbeat(host)  # locked through every run: the task fails as before, saying why
    assert heartbeat(host)["beats"] == 2  # the failed runs changed nothing


@pytest.mark.parametrize("right", [True, False], ids=["right-password", "wrong-password"])
def test_signing_in_while_the_database_is_locked_runs_again_and_never_answers_500(database, app, make_user, right):
    """The sign-in paths write the sign-in limits (FAB's views and the login hook, outside the API's routes):
    a lock that ends is waited out, one that lasts is 503 with Retry-After, never a 500."""
    user = make_user()
    body = {"username": user.username, "password": user.password if right else "not the password",
            "provider": "db"}
    client = app.test_client()
    with write_lock(database, release_after=0.5):
        answer = client.post("/api/v1/security/login", json=body)
    assert answer.status_code == (200 if right else 401), answer.get_json()
    with write_lock(database):
        answer = client.post("/api/v1/security/login", json=body)
    assert answer.status_code == 503 and answer.headers["Retry-After"].isdigit(), answer.get_data()[:300]
    assert "busy" in answer.get_json()["message"]
