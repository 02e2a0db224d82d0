"""Configuration from environment variables, with safe defaults.

The embedded default needs nothing installed: SQLite in the instance folder and a
filesystem Celery transport. `DATABASE_URL` and `REDIS_URL` switch to PostgreSQL and Redis.
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import Any

from flask_appbuilder.const import AUTH_DB


def instance_path() -> Path:
    """The instance folder: database, secret key, Celery queues, job work dirs. Private (0700):
    jobs and other local users have no business in it."""
    path = Path(os.environ.get("MYAPP_HOME", Path.cwd() / "instance")).resolve()
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    if path.stat().st_uid == os.geteuid():
        os.chmod(path, 0o700)
    return path


def load_secret_key(folder: Path) -> str:
    """Generated on first start and kept in the instance folder, never a literal in code."""
    if os.environ.get("SECRET_KEY"):
        return os.environ["SECRET_KEY"]
    key_file = folder / "secret_key"
    if not key_file.exists():
        # O_EXCL: two processes starting at once must not both write a key.
        try:
            fd = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_urlsafe(48))
    return key_file.read_text().strip()


def normalize_database_url(url: str) -> str:
    # Plain postgres URLs select psycopg 3, the driver we install.
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


def celery_settings(folder: Path, redis_url: str | None) -> dict[str, Any]:
    """Celery broker, results and transport options: Redis when given, else embedded."""
    common: dict[str, Any] = {
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "task_serializer": "json",
        "result_serializer": "json",
        "accept_content": ["json"],
        "broker_connection_retry_on_startup": True,
        "timezone": "UTC",
    }
    if redis_url:
        return {**common, "broker_url": redis_url, "result_backend": redis_url}
    queue_dir, processed, control = (folder / "celery" / name for name in ("queue", "processed", "control"))
    for path in (queue_dir, processed, control):
        path.mkdir(parents=True, exist_ok=True)
    return {
        **common,
        "broker_url": "myappfs://",  # myapp/broker.py: kombu's filesystem transport, atomic writes
        "broker_transport_options": {
            "data_folder_in": str(queue_dir),
            "data_folder_out": str(queue_dir),
            "processed_folder": str(processed),
            "control_folder": str(control),  # kombu's default is ./control in the working directory
            "store_processed": False,
        },
        "result_backend": f"db+sqlite:///{folder / 'celery-results.sqlite'}",
    }


def cache_settings(folder: Path, redis_url: str | None) -> dict[str, Any]:
    """Shared by every process of the platform: Redis, or a folder when embedded."""
    common = {"CACHE_DEFAULT_TIMEOUT": 300, "CACHE_KEY_PREFIX": "myapp:"}
    if redis_url:
        return {**common, "CACHE_TYPE": "RedisCache", "CACHE_REDIS_URL": redis_url}
    return {**common, "CACHE_TYPE": "FileSystemCache", "CACHE_DIR": str(folder / "cache")}


def build_config(overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    overrides = dict(overrides or {})
    folder = Path(overrides.pop("INSTANCE_PATH", None) or instance_path())
    folder.mkdir(parents=True, exist_ok=True)
    database_url = normalize_database_url(
        os.environ.get("DATABASE_URL") or f"sqlite:///{folder / 'myapp.sqlite'}"
    )
    redis_url = os.environ.get("REDIS_URL") or None
    config: dict[str, Any] = {
        "INSTANCE_PATH": str(folder),
        "SECRET_KEY": load_secret_key(folder),
        "SQLALCHEMY_DATABASE_URI": database_url,
        "SQLALCHEMY_TRACK_MODIFICATIONS": False,
        "SQLALCHEMY_ENGINE_OPTIONS": {"pool_pre_ping": True},
        "REDIS_URL": redis_url,
        "CELERY": celery_settings(folder, redis_url),
        **cache_settings(folder, redis_url),
        "APP_NAME": "MyApp ML Platform",
        # Security: database auth, no self-registration, no default accounts.
        "AUTH_TYPE": AUTH_DB,
        "AUTH_USER_REGISTRATION": False,
        "AUTH_ROLE_ADMIN": "Admin",
        "AUTH_ROLE_PUBLIC": "Public",
        # Users are managed through myapp/api/users.py (password policy, self-protection), not FAB's generic API.
        "FAB_ADD_SECURITY_API": False,
        "FAB_API_SWAGGER_UI": True,
        "FAB_API_MAX_PAGE_SIZE": 100,
        "FAB_UPDATE_PERMS": True,
        "JWT_ACCESS_TOKEN_EXPIRES": 3600,
        "WTF_CSRF_ENABLED": True,
        "WTF_CSRF_TIME_LIMIT": None,
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Lax",
        "MYAPP_BACKEND": os.environ.get("MYAPP_BACKEND", "local"),
        # The built browser UI (frontend/dist by default; see myapp/web.py).
        "MYAPP_UI_DIR": os.environ.get("MYAPP_UI_DIR"),
        # How often beat re-reconciles unfinished runs (status polling, retries, timeouts).
        "MYAPP_TICK_SECONDS": float(os.environ.get("MYAPP_TICK_SECONDS", "2")),
        "MYAPP_BASE_URL": os.environ.get("MYAPP_BASE_URL", "http://127.0.0.1:8080"),
        # A run's platform API token expires after this many seconds (or its longest task timeout),
        # a backstop only: it is revoked as soon as the run ends (myapp/run_tokens.py).
        "MYAPP_RUN_TOKEN_LIFETIME": int(os.environ.get("MYAPP_RUN_TOKEN_LIFETIME", str(24 * 3600))),
        # Request bodies larger than this answer 413 before anything parses them.
        "MAX_CONTENT_LENGTH": int(os.environ.get("MYAPP_MAX_BODY_BYTES", str(2 * 1024 * 1024))),
    }
    config.update(overrides)
    return config
