"""Webhooks: a signed JSON POST when a run ends or a task fails for good, only to addresses checked first.

A webhook is a request the platform makes on a user's behalf, so it must not reach the platform's own
network (SSRF): its host may be or resolve to public addresses only (not loopback, link-local with the
cloud metadata address, private, unspecified, multicast, reserved, nor IPv6 forms embedding those),
unless the admin allow-list `MYAPP_WEBHOOK_ALLOWED_HOSTS` names the host or covers the address. The URL
is checked when it is saved (`check_url`) and again at every delivery (`target`): the name is resolved
once, every address checked, and the request connects to a checked address (the Host header, TLS SNI and
certificate check keep the name), so a DNS answer that changes in between (rebinding) cannot redirect it.
Redirects are not followed, proxies from the environment are not used (they would connect anywhere),
the answer is read to at most MAX_ANSWER_BYTES, and each delivery is signed (see docs/webhooks.md).
"""
from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import os
import secrets
import socket
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import SplitResult, urlsplit, urlunsplit

import requests
import sqlalchemy as sa
from flask import current_app
from requests.adapters import HTTPAdapter

from ..auth.sealed import SealError, is_sealed, seal, unseal
from ..errors import DomainError, FieldError, Kind
from ..extensions import db
from ..models import Pipeline, PipelineRun, Project, Task, TaskRun, TaskState

CONNECT_TIMEOUT, READ_TIMEOUT = 5.0, 10.0  # seconds; a delivery takes at most about their sum per address
MAX_ANSWER_BYTES = 1024  # of the receiver's answer, read only to quote it in an error
ALLOW_SETTING = "MYAPP_WEBHOOK_ALLOWED_HOSTS"
METADATA_ADDRESS = ipaddress.ip_address("169.254.169.254")
NAT64 = ipaddress.ip_network("64:ff9b::/96")
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
SECRET_PURPOSE = "webhook-secret"  # myapp/auth/sealed.py: the column holds the secret sealed under this purpose


class WebhookError(RuntimeError):
    """A delivery that failed; `retry` says whether trying again later may help (notify_run's backoff)."""

    def __init__(self, message: str, retry: bool = True):
        super().__init__(message)
        self.retry = retry


class Refused(Exception):
    """The URL may not be called: the reason, and whether it may pass later (DNS down, not a rule)."""

    def __init__(self, reason: str, transient: bool = False):
        super().__init__(reason)
        self.reason, self.transient = reason, transient


def new_secret() -> str:
    return secrets.token_hex(32)


def give_secret(pipeline: Pipeline) -> str:
    """A new signing secret for pipeline (in the caller's transaction), stored sealed; the plain value."""
    secret = new_secret()
    pipeline.webhook_secret = seal(current_app.config["SECRET_KEY"], SECRET_PURPOSE, secret)
    return secret


def secret_of(pipeline: Pipeline) -> str | None:
    """The plain signing secret, or None without one. A row stored before sealing (migration 0019 seals
    them when it runs in the app, not from a bare Alembic) is sealed now, in the caller's transaction.
    A conflict if SECRET_KEY changed since it was sealed: the secret is lost, rotating makes a new one."""
    stored = pipeline.webhook_secret
    if not stored:
        return None
    key = current_app.config["SECRET_KEY"]
    if not is_sealed(stored):
        pipeline.webhook_secret = seal(key, SECRET_PURPOSE, stored)
        return stored
    try:
        return unseal(key, SECRET_PURPOSE, stored)
    except SealError:
        raise DomainError(f"pipeline {pipeline.name!r}: its webhook secret was sealed under another SECRET_KEY; "
                          "rotate it to make a new one", kind=Kind.CONFLICT) from None


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """The X-Myapp-Signature value: HMAC-SHA256 of "<timestamp>.<body>" under the pipeline's secret."""
    mac = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return f"sha256={mac.hexdigest()}"


# ---- which addresses a webhook may reach -------------------------------------------------------------
@dataclass(frozen=True)
class AllowList:
    names: frozenset[str]
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]

    @classmethod
    def from_config(cls, entries: Iterable[str]) -> AllowList:
        names, networks = set(), []
        for entry in entries:
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                names.add(_host_key(entry))
        return cls(frozenset(names), tuple(networks))

    def covers(self, addr: Address) -> bool:
        return any(addr in net for net in self.networks if net.version == addr.version)


def _host_key(host: str) -> str:
    return host.strip().lower().rstrip(".")


def allow_list() -> AllowList:
    return AllowList.from_config(current_app.config.get(ALLOW_SETTING) or ())


def address_problem(addr: Address) -> str | None:
    """Why a webhook may not connect to addr, or None for a public address."""
    if isinstance(addr, ipaddress.IPv6Address):
        embedded = addr.ipv4_mapped or addr.sixtofour or (addr.teredo[1] if addr.teredo else None)
        if embedded is None and addr in NAT64:
            embedded = ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
        if embedded is not None:  # the IPv4 address it reaches decides
            inner = address_problem(embedded)
            return f"{inner} ({embedded} inside {addr})" if inner else None
        if addr.is_site_local:
            return "a site-local address"
    checks = (("is_unspecified", "the unspecified address"), ("is_loopback", "a loopback address"),
              ("is_link_local", "a link-local address"), ("is_multicast", "a multicast address"),
              ("is_reserved", "a reserved address"), ("is_private", "a private address"))
    if addr == METADATA_ADDRESS:
        return "the cloud metadata address"
    for flag, label in checks:
        if getattr(addr, flag):
            return label
    return None if addr.is_global else "not a public address"


def resolve(host: str, port: int) -> list[Address]:
    """Every address host has, in the resolver's order (tests replace this to play DNS)."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    found: list[Address] = []
    for info in infos:
        addr = ipaddress.ip_address(str(info[4][0]).split("%")[0])  # a scope id (fe80::1%eth0) is no part of it
        if addr not in found:
            found.append(addr)
    return found


@dataclass(frozen=True)
class Target:
    """A checked webhook URL: its parts and the addresses it may connect to."""

    parts: SplitResult
    host: str
    port: int
    addresses: tuple[Address, ...]


def _parse(url: str) -> tuple[SplitResult, str, int]:
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise Refused(f"is not a valid URL: {exc}") from None
    if parts.scheme not in ("http", "https"):
        raise Refused("must be an http or https URL")
    if not parts.hostname:
        raise Refused("must name a host")
    return parts, parts.hostname, port or (443 if parts.scheme == "https" else 80)


def _vet(url: str, resolve_allowed: bool) -> Target:
    """The URL's target, every address checked; resolve_allowed: resolve a host the allow-list names too."""
    parts, host, port = _parse(url)
    allowed = allow_list()
    named = _host_key(host) in allowed.names
    if named and not resolve_allowed:
        return Target(parts, host, port, ())
    try:
        addresses = resolve(host, port)
    except (OSError, UnicodeError) as exc:
        raise Refused(f"host {host!r} does not resolve: {exc}", transient=True) from None
    if not addresses:
        raise Refused(f"host {host!r} has no address", transient=True)
    if not named:
        for addr in addresses:
            problem = address_problem(addr)
            if problem and not allowed.covers(addr):
                where = f"{addr} is" if host == str(addr) else f"host {host!r} resolves to {addr},"
                raise Refused(f"{where} {problem}; an admin can allow it with {ALLOW_SETTING}")
    return Target(parts, host, port, tuple(addresses))


def check_url(url: str) -> None:
    """At save time: FieldError naming webhook_url unless the URL may be called (a host that does not
    resolve is refused too: better said now than at the first failed delivery)."""
    try:
        _vet(url, resolve_allowed=False)
    except Refused as exc:
        raise FieldError("webhook_url", exc.reason) from None


def target(url: str) -> Target:
    """At delivery: the checked target, or WebhookError (retried only if DNS may answer later)."""
    try:
        return _vet(url, resolve_allowed=True)
    except Refused as exc:
        raise WebhookError(f"webhook refused: {exc.reason}", retry=exc.transient) from None


# ---- delivery ----------------------------------------------------------------------------------------
class _PinnedTLS(HTTPAdapter):
    """HTTPS to an address while SNI and the certificate check use the URL's host name."""

    def __init__(self, hostname: str):
        self._hostname = hostname
        super().__init__(max_retries=0)

    def init_poolmanager(self, connections: int, maxsize: int, block: bool = False, **pool_kwargs: Any) -> None:
        pool_kwargs.update(server_hostname=self._hostname, assert_hostname=self._hostname)
        super().init_poolmanager(connections, maxsize, block, **pool_kwargs)


def _pinned_url(target: Target, addr: Address) -> str:
    ip = f"[{addr}]" if addr.version == 6 else str(addr)
    userinfo = target.parts.netloc.rpartition("@")[0]
    netloc = f"{userinfo}@{ip}:{target.port}" if userinfo else f"{ip}:{target.port}"
    return urlunsplit((target.parts.scheme, netloc, target.parts.path or "/", target.parts.query, ""))


def _host_header(target: Target) -> str:
    host = f"[{target.host}]" if ":" in target.host else target.host
    default = 443 if target.parts.scheme == "https" else 80
    return host if target.port == default else f"{host}:{target.port}"


def post(url: str, body: bytes, headers: dict[str, str]) -> int:
    """POST body to url through a checked address; the HTTP status, or WebhookError.

    2xx is a delivery; 5xx, 429 and network errors are retried; any other answer (3xx included:
    redirects are not followed) fails for good."""
    checked = target(url)
    session = requests.Session()
    session.trust_env = False  # an environment proxy would connect wherever it is told
    if checked.parts.scheme == "https":
        session.mount("https://", _PinnedTLS(checked.host))
    verify: bool | str = os.environ.get("REQUESTS_CA_BUNDLE") or True  # trust_env off: keep a site's CA bundle
    headers = {**headers, "Host": _host_header(checked)}
    failures = []
    try:
        for addr in checked.addresses:
            try:
                resp = session.post(_pinned_url(checked, addr), data=body, headers=headers, stream=True,
                                    allow_redirects=False, timeout=(CONNECT_TIMEOUT, READ_TIMEOUT), verify=verify)
            except requests.exceptions.SSLError as exc:  # the same certificate at every address
                raise WebhookError(f"webhook {url}: TLS check failed: {exc}") from exc
            except requests.ConnectionError as exc:  # not connected (or refused): the next address may answer
                failures.append(f"{addr}: {exc}")
                continue
            except requests.RequestException as exc:
                raise WebhookError(f"webhook {url} failed: {exc}") from exc
            with resp:
                answer = resp.raw.read(MAX_ANSWER_BYTES, decode_content=False)
            return _outcome(url, resp.status_code, answer)
    finally:
        session.close()
    raise WebhookError(f"webhook {url} unreachable: {'; '.join(failures)}")


def _outcome(url: str, status: int, answer: bytes) -> int:
    if 200 <= status < 300:
        return status
    quoted = answer[:200].decode("utf-8", "replace")
    if 300 <= status < 400:
        raise WebhookError(f"webhook {url} answered {status} (redirects are not followed)", retry=False)
    raise WebhookError(f"webhook {url} answered {status}: {quoted}", retry=status >= 500 or status == 429)


def deliver(pipeline: Pipeline, event: str, payload: dict[str, Any], delivery_id: str | None = None) -> int:
    """Sign and POST payload; the same delivery_id on every retry lets a receiver drop duplicates."""
    try:
        secret = secret_of(pipeline)
    except DomainError as exc:  # trying again will not open it
        raise WebhookError(f"webhook not sent: {exc.message}", retry=False) from None
    if secret is None:  # a row written before secrets existed: give it one, readable by its members
        secret = give_secret(pipeline)
    if db.session.dirty:  # a secret made or sealed just now: kept before it signs anything
        db.session.commit()
    assert pipeline.webhook_url is not None
    body = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
    timestamp = str(int(time.time()))
    headers = {"Content-Type": "application/json", "User-Agent": "myapp-webhook/1", "X-Myapp-Event": event,
               "X-Myapp-Delivery": delivery_id or str(uuid.uuid4()), "X-Myapp-Timestamp": timestamp,
               "X-Myapp-Signature": signature(secret, timestamp, body)}
    return post(pipeline.webhook_url, body, headers)


def _wants(pipeline: Pipeline | None, event: str) -> bool:
    return bool(pipeline and pipeline.webhook_url and event in (pipeline.webhook_events or ()))


def run_payload(run: PipelineRun) -> dict:
    pipeline = db.session.get(Pipeline, run.pipeline_id)
    project = db.session.get(Project, run.project_id)
    tasks = db.session.execute(sa.select(Task.name, TaskRun.state, TaskRun.attempt)
                               .join(Task, Task.id == TaskRun.task_id)
                               .where(TaskRun.pipeline_run_id == run.id).order_by(TaskRun.id)).all()
    latest = {name: (state.value, attempt) for name, state, attempt in tasks}
    return {
        "event": f"run.{run.state.value}", "project": project.name, "pipeline": pipeline.name, "run_id": run.id,
        "state": run.state.value, "reason": run.reason, "trigger": run.trigger.value,
        "logical_date": run.logical_date.isoformat() if run.logical_date else None,
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "tasks": {name: {"state": state, "attempt": attempt} for name, (state, attempt) in latest.items()},
        "url": f"{current_app.config['MYAPP_BASE_URL']}/api/v1/pipeline_run/{run.id}",
    }


def send_run_webhook(run_id: int, delivery_id: str | None = None) -> int | None:
    """The HTTP status; None when there is nothing to send (no webhook, the event filtered out, the
    run not finished). Raises WebhookError."""
    run = db.session.get(PipelineRun, run_id)
    pipeline = db.session.get(Pipeline, run.pipeline_id) if run else None
    if run is None or not run.is_finished or not _wants(pipeline, f"run.{run.state.value}"):
        return None
    assert pipeline is not None
    return deliver(pipeline, f"run.{run.state.value}", run_payload(run), delivery_id)


def task_payload(attempt: TaskRun) -> dict:
    run = db.session.get(PipelineRun, attempt.pipeline_run_id)
    base = run_payload(run)
    task = db.session.get(Task, attempt.task_id)
    return {key: base[key] for key in ("project", "pipeline", "run_id", "trigger", "logical_date", "url")} | {
        "event": "task.failed", "task": task.name, "task_run_id": attempt.id, "attempt": attempt.attempt,
        "state": attempt.state.value, "reason": attempt.reason, "exit_code": attempt.exit_code,
        "finished_at": attempt.finished_at.isoformat() if attempt.finished_at else None,
    }


def send_task_webhook(task_run_id: int, delivery_id: str | None = None) -> int | None:
    """task.failed for an attempt that failed with no retry left; None when there is nothing to send."""
    attempt = db.session.get(TaskRun, task_run_id)
    run = db.session.get(PipelineRun, attempt.pipeline_run_id) if attempt else None
    pipeline = db.session.get(Pipeline, run.pipeline_id) if run else None
    if attempt is None or attempt.state != TaskState.FAILED or not _wants(pipeline, "task.failed"):
        return None
    assert pipeline is not None
    return deliver(pipeline, "task.failed", task_payload(attempt), delivery_id)
