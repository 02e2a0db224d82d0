"""Configuration from environment variables, with safe defaults.

The embedded default needs nothing installed: SQLite in the instance folder and a
Celery transport on a SQLite file (myapp/shared/broker.py). `DATABASE_URL` and `REDIS_URL` switch to
PostgreSQL and Redis.
"""
from __future__ import annotations

import math
import os
import secrets
import sys
import urllib.parse
from pathlib import Path
from typing import Any

from flask_appbuilder.const import AUTH_DB
from kombu import Queue


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


ACTIONS_QUEUE, BACKGROUND_QUEUE = "myapp.actions", "myapp.background"


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
        # User actions (a new run, a cancel) have a queue of their own, which the workers read in
        # turn with the background queue (beat's reconciles, webhooks): never behind a backlog.
        "task_default_queue": BACKGROUND_QUEUE,
        "task_queues": (Queue(ACTIONS_QUEUE), Queue(BACKGROUND_QUEUE)),
    }
    if redis_url:
        return {**common, "broker_url": redis_url, "result_backend": redis_url}
    (folder / "celery").mkdir(parents=True, exist_ok=True)
    return {
        **common,
        "broker_url": "myappsql://",  # myapp/shared/broker.py: a queue table in a SQLite file
        "broker_transport_options": {"path": str(folder / "celery" / "broker.sqlite")},
        "result_backend": f"db+sqlite:///{folder / 'celery-results.sqlite'}",
    }


def cache_settings(folder: Path, redis_url: str | None) -> dict[str, Any]:
    """Shared by every process of the platform: Redis, or a folder when embedded."""
    common = {"CACHE_DEFAULT_TIMEOUT": 300, "CACHE_KEY_PREFIX": "myapp:"}
    if redis_url:
        return {**common, "CACHE_TYPE": "RedisCache", "CACHE_REDIS_URL": redis_url}
    return {**common, "CACHE_TYPE": "FileSystemCache", "CACHE_DIR": str(folder / "cache")}


def env_flag(name: str, default: bool) -> bool:
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return default
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"{name}={value!r}: say true or false")


def env_seconds(name: str, default: float) -> float:
    """A duration in seconds from the environment: a finite number, 0 or more; a bad value stops the process at
    start, naming the variable, rather than running with the default unsaid."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name}={raw!r}: must be a number of seconds, 0 or more (default {default:g})")
    return value


def build_config(overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    overrides = dict(overrides or {})
    folder = Path(overrides.pop("INSTANCE_PATH", None) or instance_path())
    folder.mkdir(parents=True, exist_ok=True)
    database_url = normalize_database_url(
        os.environ.get("DATABASE_URL") or f"sqlite:///{folder / 'myapp.sqlite'}"
    )
    redis_url = os.environ.get("REDIS_URL") or None
    base_url = os.environ.get("MYAPP_BASE_URL", "http://127.0.0.1:8080")
    secure_cookies = env_flag("MYAPP_SECURE_COOKIES", base_url.startswith("https://"))
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
        # Secure cookies (sent over https only): on by default when the platform is served over https.
        "SESSION_COOKIE_SECURE": secure_cookies,
        "REMEMBER_COOKIE_SECURE": secure_cookies,
        "REMEMBER_COOKIE_HTTPONLY": True,
        "REMEMBER_COOKIE_SAMESITE": "Lax",
        # Sign-in limits: attempts per client address (myapp/auth/logins.py; Flask-Limiter's engine `limits`: Redis
        # when configured, else a file every web process of this machine shares, myapp/shared/limits.py), and
        # backoff per (account, address) with a ceiling per account on new addresses (myapp/auth/login_limits.py, SQL).
        "MYAPP_SHARED_LIMITS_FILE": None if redis_url else str(folder / "limits.sqlite"),
        "RATELIMIT_STORAGE_URI": redis_url or f"myappsqlite://{folder / 'limits.sqlite'}",
        # Reverse proxies in front of the web (myapp/web/proxies.py): a count of hops or their addresses; only
        # then is X-Forwarded-For believed for the client address (login limits, access log).
        "MYAPP_TRUSTED_PROXIES": os.environ.get("MYAPP_TRUSTED_PROXIES", ""),
        "MYAPP_LOGIN_RATE_PER_IP": os.environ.get("MYAPP_LOGIN_RATE_PER_IP", "300 per minute"),
        # Failed passwords free per (account, address) streak, then a wait doubling from SECONDS up to
        # MAX_SECONDS; a streak is forgotten RESET_SECONDS after its last failure.
        "MYAPP_LOGIN_BACKOFF_FREE": int(os.environ.get("MYAPP_LOGIN_BACKOFF_FREE", "3")),
        "MYAPP_LOGIN_BACKOFF_SECONDS": float(os.environ.get("MYAPP_LOGIN_BACKOFF_SECONDS", "1")),
        "MYAPP_LOGIN_BACKOFF_MAX_SECONDS": float(os.environ.get("MYAPP_LOGIN_BACKOFF_MAX_SECONDS", "900")),
        "MYAPP_LOGIN_BACKOFF_RESET_SECONDS": float(os.environ.get("MYAPP_LOGIN_BACKOFF_RESET_SECONDS", "86400")),
        # Per account, attempts from addresses it never signed in from: BURST at once, then one per SECONDS;
        # an address it signed in from within KNOWN_ADDRESS_DAYS is exempt.
        "MYAPP_LOGIN_NEW_ADDRESS_BURST": int(os.environ.get("MYAPP_LOGIN_NEW_ADDRESS_BURST", "10")),
        "MYAPP_LOGIN_NEW_ADDRESS_SECONDS": float(os.environ.get("MYAPP_LOGIN_NEW_ADDRESS_SECONDS", "60")),
        "MYAPP_LOGIN_KNOWN_ADDRESS_DAYS": float(os.environ.get("MYAPP_LOGIN_KNOWN_ADDRESS_DAYS", "30")),
        # A browser session ends after this long even if never logged out (its server-side row expires).
        "MYAPP_SESSION_HOURS": float(os.environ.get("MYAPP_SESSION_HOURS", "24")),
        # Server-sent event streams open at once (myapp/api/streams.py): per user, and per web process
        # (default: what its threads allow, MYAPP_WEB_THREADS, keeping some for other requests).
        "MYAPP_STREAMS_PER_USER": int(os.environ.get("MYAPP_STREAMS_PER_USER", "10")),
        "MYAPP_STREAMS_PER_PROCESS": int(os.environ.get("MYAPP_STREAMS_PER_PROCESS", "0")) or None,
        "MYAPP_WEB_THREADS": int(os.environ.get("MYAPP_WEB_THREADS", "0")),  # set by `myapp run`
        "MYAPP_BACKEND": os.environ.get("MYAPP_BACKEND", "local"),
        # Longest an image build may take (a local environment's pip install, a Kaniko Job): myapp/images/.
        "MYAPP_ENV_BUILD_TIMEOUT": float(os.environ.get("MYAPP_ENV_BUILD_TIMEOUT", "1800")),
        # The built browser UI (frontend/dist by default; see myapp/web/ui_routes.py).
        "MYAPP_UI_DIR": os.environ.get("MYAPP_UI_DIR"),
        # How often beat requests the runs whose timer is due (polls, retries, timeouts:
        # myapp/shared/reconcile_requests.py).
        "MYAPP_TICK_SECONDS": float(os.environ.get("MYAPP_TICK_SECONDS", "2")),
        # Resource groups with discover_nodes: their Nodes listed again at most this often (capacity.py).
        "MYAPP_NODE_DISCOVERY_SECONDS": float(os.environ.get("MYAPP_NODE_DISCOVERY_SECONDS", "60")),
        # Each worker takes user actions (new runs, cancels) in a thread of their own besides its pool
        # (celery_app.ActionLane); the beat process watches Kubernetes clusters (backends/kubernetes/watch.py).
        "MYAPP_ACTION_LANE": os.environ.get("MYAPP_ACTION_LANE", "1") not in ("0", "false", "no"),
        "MYAPP_KUBERNETES_WATCH": os.environ.get("MYAPP_KUBERNETES_WATCH", "1") not in ("0", "false", "no"),
        # A backend call that keeps failing (unreachable cluster): submit is tried this many times, status
        # polling of a submitted attempt MYAPP_STATUS_ATTEMPTS times, waiting MYAPP_BACKEND_RETRY_SECONDS,
        # doubling up to a minute, between tries; then the attempt fails with the reason (the task's
        # retries apply). Errors that cannot pass (a kind this backend cannot run) fail it at once.
        "MYAPP_SUBMIT_ATTEMPTS": int(os.environ.get("MYAPP_SUBMIT_ATTEMPTS", "5")),
        "MYAPP_STATUS_ATTEMPTS": int(os.environ.get("MYAPP_STATUS_ATTEMPTS", "10")),
        "MYAPP_BACKEND_RETRY_SECONDS": float(os.environ.get("MYAPP_BACKEND_RETRY_SECONDS", "2")),
        # Defaults of the platform limits admins change through the API (myapp/pipelines/scheduling.py).
        "MYAPP_MAX_BACKFILL_DAYS": int(os.environ.get("MYAPP_MAX_BACKFILL_DAYS", "366")),
        "MYAPP_MIN_SCHEDULE_INTERVAL": int(os.environ.get("MYAPP_MIN_SCHEDULE_INTERVAL", "60")),
        "MYAPP_BASE_URL": base_url,
        # Notebooks (myapp/notebooks, docs/notebooks.md): where the notebook proxy answers (`myapp run` starts it
        # on the web port + 1), a notebook without kernel or terminal activity for MYAPP_NOTEBOOK_IDLE_AFTER
        # seconds shows idle, and is stopped after its project's timeout (default MYAPP_NOTEBOOK_CULL_SECONDS,
        # 0: never).
        "MYAPP_NOTEBOOK_URL": os.environ.get("MYAPP_NOTEBOOK_URL", "").rstrip("/") or _next_port(base_url),
        # What the notebook proxy proves itself with to the authz check (`myapp run` makes one per start;
        # unset: derived from the secret key).
        "MYAPP_NOTEBOOK_PROXY_KEY": os.environ.get("MYAPP_NOTEBOOK_PROXY_KEY") or None,
        # The default images `myapp init` registers (myapp/images/defaults.py): locally a Python environment
        # of the platform's own packages, on Kubernetes this JupyterLab image (the notebook template's).
        "MYAPP_LOCAL_ENVIRONMENT": os.environ.get("MYAPP_LOCAL_ENVIRONMENT")
        or f"myapp/python-ml:{sys.version_info[0]}.{sys.version_info[1]}",
        "MYAPP_NOTEBOOK_IMAGE": os.environ.get("MYAPP_NOTEBOOK_IMAGE", "ghcr.io/myapp-platform/notebook:1.0.0"),
        "MYAPP_NOTEBOOK_IDLE_AFTER": float(os.environ.get("MYAPP_NOTEBOOK_IDLE_AFTER", "300")),
        "MYAPP_NOTEBOOK_CULL_SECONDS": int(os.environ.get("MYAPP_NOTEBOOK_CULL_SECONDS", "3600")),
        # A run's platform API token expires after this many seconds (or its longest task timeout),
        # a backstop only: it is revoked as soon as the run ends (myapp/auth/run_tokens.py).
        "MYAPP_RUN_TOKEN_LIFETIME": int(os.environ.get("MYAPP_RUN_TOKEN_LIFETIME", str(24 * 3600))),
        # Webhook hosts allowed although they are or resolve to private, loopback or link-local
        # addresses: hostnames and IPs/CIDRs, comma-separated (myapp/pipelines/notify.py).
        "MYAPP_WEBHOOK_ALLOWED_HOSTS": tuple(
            entry.strip() for entry in os.environ.get("MYAPP_WEBHOOK_ALLOWED_HOSTS", "").split(",") if entry.strip()),
        # Request bodies larger than this answer 413 before anything parses them.
        "MAX_CONTENT_LENGTH": int(os.environ.get("MYAPP_MAX_BODY_BYTES", str(2 * 1024 * 1024))),
        # ... except a model file uploaded to the registry (myapp/api/serving.py), bounded by this.
        "MYAPP_MAX_MODEL_BYTES": int(os.environ.get("MYAPP_MAX_MODEL_BYTES", str(512 * 1024 * 1024))),
        # Caps per project (myapp/projects/caps.py; 0: none): objects of each kind, and the bytes its local data
        # and outputs folders take (over it: no new runs, no uploads).
        "MYAPP_PROJECT_MAX_OBJECTS": int(os.environ.get("MYAPP_PROJECT_MAX_OBJECTS", "10000")),
        "MYAPP_PROJECT_MAX_STORAGE_BYTES": int(os.environ.get("MYAPP_PROJECT_MAX_STORAGE_BYTES",
                                                              str(100 * 1024 ** 3))),
        # The Prometheus holding Istio's request figures of inference services on Kubernetes
        # (myapp/serving/prometheus.py); empty: their figures answer empty.
        "MYAPP_PROMETHEUS_URL": os.environ.get("MYAPP_PROMETHEUS_URL", ""),
        # The serving engine of Kubernetes clusters created without one: kserve (else deployments);
        # each cluster's own `serving_engine` decides (docs/serving.md "With KServe").
        "MYAPP_SERVING_KSERVE": env_flag("MYAPP_SERVING_KSERVE", False),
        # Kubernetes claims the platform cannot mount are read by reader pods, at most once per this many seconds
        # per running attempt's metrics.jsonl and per task's checkpoint folder (myapp/outputs/live.py).
        "MYAPP_CLAIM_METRICS_SECONDS": env_seconds("MYAPP_CLAIM_METRICS_SECONDS", 10.0),
        "MYAPP_CLAIM_CHECKPOINT_SECONDS": env_seconds("MYAPP_CLAIM_CHECKPOINT_SECONDS", 60.0),
    }
    config.update(overrides)
    return config


def _next_port(base_url: str) -> str:
    """The notebook proxy's default address: the web's, one port up (`myapp run --notebook-port`)."""
    parts = urllib.parse.urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return urllib.parse.urlunsplit((parts.scheme, f"{parts.hostname}:{port + 1}", "", "", "")).rstrip("/")
