"""The application factory: one init step per concern, as in Superset and Airflow 2."""
from __future__ import annotations

import logging
import time
from typing import Any

import sqlalchemy as sa
from flask import Flask, Response, request
from werkzeug.exceptions import NotFound
from werkzeug.routing import IntegerConverter

from .config import build_config
from .extensions import appbuilder, cache, csrf, db, generations
from .inputs.plain_data import INT32_MAX
from .projects import caps as project_caps
from .web.request_body import BoundedRequest


class Int64Converter(IntegerConverter):
    """`<int:...>` in every URL: an id beyond the INTEGER id columns is 404, so no database ever sees
    it (PostgreSQL raises on them). It raises NotFound rather than failing the match, which werkzeug
    would answer with 405 when a route of another method has the same path."""

    def to_python(self, value: str) -> Any:
        number = super().to_python(value)
        if number > INT32_MAX:
            raise NotFound(f"no object has id {value}: ids fit in 32 bits")
        return number


def create_app(overrides: dict[str, Any] | None = None) -> Flask:
    app = Flask(__name__)
    app.request_class = BoundedRequest  # a chunked body over the limit is 413, never read as a shorter one
    app.url_map.converters["int"] = Int64Converter  # before any route is added
    init_config(app, overrides)
    init_proxy(app)
    init_database(app)
    init_cache(app)
    with app.app_context():
        init_security(app)
        init_api(app)
    init_celery(app)
    init_health(app)
    init_ui(app)
    init_headers(app)
    init_read_requests(app)
    return app


def init_config(app: Flask, overrides: dict[str, Any] | None) -> None:
    app.config.update(build_config(overrides))
    app.instance_path = app.config["INSTANCE_PATH"]


def init_proxy(app: Flask) -> None:
    """The client address behind trusted reverse proxies (MYAPP_TRUSTED_PROXIES, myapp/web/proxies.py)."""
    from .web.proxies import install

    install(app)


def init_database(app: Flask) -> None:
    options = app.config.get("SQLALCHEMY_ENGINE_OPTIONS") or {}
    ping = bool(options.get("pool_pre_ping"))
    app.config["SQLALCHEMY_ENGINE_OPTIONS"] = {**options, "pool_pre_ping": False}  # done by _ping_when_idle
    db.init_app(app)
    project_caps.install(db.session)  # objects and storage per project, counted in every flush that adds some
    with app.app_context():
        if db.engine.dialect.name == "sqlite":
            _sqlite_pragmas(db.engine)
        if ping:
            _ping_when_idle(db.engine)


PING_AFTER_IDLE = 1.0  # seconds


def _ping_when_idle(engine: sa.Engine) -> None:
    """SQLAlchemy's pool_pre_ping, for connections idle in the pool for more than PING_AFTER_IDLE: a
    connection handed back less than a second ago was working then, and a ping on every checkout was a
    round trip (a wait for the database process's turn on a busy machine) on every request. A dead
    connection is replaced as pool_pre_ping does (the pool retries on DisconnectionError)."""

    @sa.event.listens_for(engine, "checkin")
    def _checked_in(_dbapi_conn, record):
        record.info["myapp_idle_since"] = time.monotonic()

    @sa.event.listens_for(engine, "checkout")
    def _checkout(dbapi_conn, record, _proxy):
        since = record.info.get("myapp_idle_since")
        if since is not None and time.monotonic() - since < PING_AFTER_IDLE:
            return
        try:
            engine.dialect.do_ping(dbapi_conn)
        except engine.dialect.loaded_dbapi.Error as exc:
            if engine.dialect.is_disconnect(exc, dbapi_conn, None):
                raise sa.exc.DisconnectionError(str(exc)) from exc
            raise


def _sqlite_pragmas(engine: sa.Engine) -> None:
    """SQLite enforces foreign keys only when asked; WAL lets readers and one writer overlap."""

    @sa.event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record):
        cursor = dbapi_conn.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=10000")
        cursor.close()


def init_cache(app: Flask) -> None:
    cache.init_app(app)
    generations.init_app(app)


def init_security(app: Flask) -> None:
    from .auth.security import PlatformSecurityManager, builtin_roles
    from .web.cookie_sessions import install as install_cookie_sessions
    from .web.ui_routes import SpaIndexView

    # FAB warns on every start about filters of its own security models; noise in CLI output.
    logging.getLogger("flask_appbuilder.models.filters").setLevel(logging.ERROR)
    app.config.setdefault("FAB_ROLES", builtin_roles())
    app.config.setdefault("FAB_CREATE_DB", False)  # Alembic owns the schema
    appbuilder.security_manager_class = PlatformSecurityManager
    appbuilder.indexview = SpaIndexView
    install_cookie_sessions(app)
    csrf.init_app(app)
    appbuilder.init_app(app, db.session)
    from .auth.run_tokens import install

    install(app.extensions["flask-jwt-extended"])  # run tokens are refused once their run has ended
    from .auth.security import install_request_auth

    install_request_auth(app)  # Bearer tokens alone, sign-in limits, server-side sessions


def init_api(app: Flask) -> None:
    from .api import register_apis
    from .api.errors import register_error_handlers

    register_apis(appbuilder)
    register_error_handlers(app)


def init_celery(app: Flask) -> None:
    from .celery_app import make_celery

    app.extensions["celery"] = make_celery(app)


def init_health(app: Flask) -> None:
    """Unauthenticated liveness probe for `myapp run`, Kubernetes and load balancers."""

    @app.get("/health")
    def health():
        db.session.execute(sa.text("SELECT 1"))
        return {"status": "ok"}


READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def init_read_requests(app: Flask) -> None:
    """API reads run their statements in autocommit: no BEGIN and no ROLLBACK round trips. Each
    statement already saw its own snapshot (READ COMMITTED on PostgreSQL; pysqlite begins a
    transaction only before a write), and reads write nothing (the route decorator rolls them back),
    so the answers are the same. First of the before-request hooks: the Bearer check reads the database."""

    def _autocommit_reads() -> None:
        if request.method in READ_METHODS and (request.path.startswith("/api/") or request.path == "/health"):
            db.session.connection(execution_options={"isolation_level": "AUTOCOMMIT"})

    app.before_request_funcs.setdefault(None, []).insert(0, _autocommit_reads)


def init_ui(app: Flask) -> None:
    """The browser UI (static files under /ui/) and its cookie-session login; Istio's ext-authz check of
    notebook requests on Kubernetes, which the browser's cookies reach through Envoy."""
    from .web.notebook_extauthz import register as register_notebook_extauthz
    from .web.ui_routes import register_ui

    register_ui(app)
    register_notebook_extauthz(app)


# The built UI loads only its own script and stylesheet (and a data: favicon); React and the DAG
# editor set styles through the DOM (style attributes), which style-src must allow.
CONTENT_SECURITY_POLICY = ("default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                           "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'")
# FAB's Swagger UI (admins) runs an inline script to start itself: that path only.
SWAGGER_CONTENT_SECURITY_POLICY = ("default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                                   "script-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'self'; "
                                   "form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = {
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}
# (lower-cased name, name, value), for the UI and API and for Swagger's pages
_HEADERS = tuple((name.lower(), name, value) for name, value in
                 {"Content-Security-Policy": CONTENT_SECURITY_POLICY, **SECURITY_HEADERS}.items())
_SWAGGER_HEADERS = tuple((name.lower(), name, value) for name, value in
                         {"Content-Security-Policy": SWAGGER_CONTENT_SECURITY_POLICY, **SECURITY_HEADERS}.items())


def init_headers(app: Flask) -> None:
    """Security headers on every answer: API, UI, errors (a header the answer sets itself is kept). One pass
    over the answer's headers: werkzeug's setdefault scans them once per header."""

    @app.after_request
    def _security_headers(response: Response) -> Response:
        present = {name.lower() for name, _value in response.headers}
        for lowered, name, value in _SWAGGER_HEADERS if request.path.startswith("/swagger/") else _HEADERS:
            if lowered not in present:
                response.headers.add(name, value)
        return response
