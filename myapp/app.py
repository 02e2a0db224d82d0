"""The application factory: one init step per concern, as in Superset and Airflow 2."""
from __future__ import annotations

import logging
from typing import Any

import sqlalchemy as sa
from flask import Flask

from .config import build_config
from .extensions import appbuilder, cache, csrf, db


def create_app(overrides: dict[str, Any] | None = None) -> Flask:
    app = Flask(__name__)
    init_config(app, overrides)
    init_database(app)
    init_cache(app)
    with app.app_context():
        init_security(app)
        init_api(app)
    init_celery(app)
    init_health(app)
    init_ui(app)
    return app


def init_config(app: Flask, overrides: dict[str, Any] | None) -> None:
    app.config.update(build_config(overrides))
    app.instance_path = app.config["INSTANCE_PATH"]


def init_database(app: Flask) -> None:
    db.init_app(app)
    with app.app_context():
        if db.engine.dialect.name == "sqlite":
            _sqlite_pragmas(db.engine)


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


def init_security(app: Flask) -> None:
    from .security import PlatformSecurityManager, builtin_roles
    from .web import SpaIndexView

    # FAB warns on every start about filters of its own security models; noise in CLI output.
    logging.getLogger("flask_appbuilder.models.filters").setLevel(logging.ERROR)
    app.config.setdefault("FAB_ROLES", builtin_roles())
    app.config.setdefault("FAB_CREATE_DB", False)  # Alembic owns the schema
    appbuilder.security_manager_class = PlatformSecurityManager
    appbuilder.indexview = SpaIndexView
    csrf.init_app(app)
    appbuilder.init_app(app, db.session)
    from .run_tokens import install

    install(app.extensions["flask-jwt-extended"])  # run tokens are refused once their run has ended


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


def init_ui(app: Flask) -> None:
    """The browser UI (static files under /ui/) and its cookie-session login."""
    from .web import register_ui

    register_ui(app)
