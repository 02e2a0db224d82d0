"""The pool's ping (myapp.app._ping_when_idle): a connection idle for a while is checked before use and
replaced when its database session is gone; one handed back within PING_AFTER_IDLE is used as it is."""
from __future__ import annotations

import pytest
import sqlalchemy as sa

import myapp.app as app_module
from myapp.extensions import db

pytestmark = pytest.mark.backends


def _engine(app) -> sa.Engine:
    """A one-connection pool on the test database, with the app's ping."""
    with app.app_context():
        url = db.engine.url
    engine = sa.create_engine(url, pool_size=1, max_overflow=0)
    app_module._ping_when_idle(engine)
    return engine


def _kill(engine: sa.Engine, dbapi_conn) -> None:
    """End the connection's database session behind the pool's back, as a database restart would."""
    if engine.dialect.name == "postgresql":
        pid = dbapi_conn.info.backend_pid
        with engine.dialect.loaded_dbapi.connect(engine.url.render_as_string(hide_password=False).replace(
                "postgresql+psycopg://", "postgresql://"), autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    else:
        dbapi_conn.close()


def test_a_connection_idle_for_a_while_is_replaced_when_dead(app, monkeypatch):
    engine = _engine(app)
    try:
        with engine.connect() as conn:
            first = conn.connection.dbapi_connection
        _kill(engine, first)
        monkeypatch.setattr(app_module, "PING_AFTER_IDLE", 0.0)  # it has been idle long enough
        with engine.connect() as conn:
            assert conn.execute(sa.text("SELECT 1")).scalar() == 1
            assert conn.connection.dbapi_connection is not first
    finally:
        engine.dispose()


def test_a_connection_handed_back_just_now_is_not_pinged(app, monkeypatch):
    engine = _engine(app)
    pings = []
    ping = engine.dialect.do_ping

    def counted(dbapi_conn) -> bool:
        pings.append(dbapi_conn)
        return ping(dbapi_conn)

    monkeypatch.setattr(engine.dialect, "do_ping", counted)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
        assert len(pings) == 1  # a new connection is checked once
        for _ in range(3):
            with engine.connect() as conn:
                conn.execute(sa.text("SELECT 1"))
        assert len(pings) == 1
        monkeypatch.setattr(app_module, "PING_AFTER_IDLE", 0.0)
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
        assert len(pings) == 2
    finally:
        engine.dispose()
