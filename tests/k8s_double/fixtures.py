"""pytest fixtures and helpers for tests that run the Kubernetes backend against the double.

Import the fixtures into a test module: ``from tests.k8s_double.fixtures import backend, double, sleeps``.
"""
from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from myapp.backends.kubernetes import KubernetesBackend, RetryPolicy
from myapp.rendering import RenderContext, render
from tests.rendering._support import (
    GANG_ARGS,
    GANG_CTX,
    PLAIN_CTX,
    REQUIRED_ARGS,
    catalog,
)

from .double import ApiServerDouble

NS = PLAIN_CTX.namespace
# Fast but not flaky: 1 s read timeout (hang faults last longer), four tries per call.
TEST_RETRY = RetryPolicy(attempts=4, base_delay=0.1, max_delay=1.0, jitter=0.2, connect_timeout=1.0,
                         read_timeout=1.0)


class Sleeps(list):
    """Injected ``sleep``: records the backoff delays instead of sleeping."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def manifests(template: str, *, gang: bool = False, **args: Any) -> list[dict[str, Any]]:
    """Real rendered manifests of a catalog template (plain or gang/GPU scenario)."""
    ctx: RenderContext = GANG_CTX if gang else PLAIN_CTX
    base = {**REQUIRED_ARGS.get(template, {}), **(GANG_ARGS.get(template, {}) if gang else {})}
    return render(catalog()[template], {**base, **args}, ctx)


def make_backend(double: ApiServerDouble, sleeps: Sleeps | None = None, **kwargs: Any) -> KubernetesBackend:
    options = {"retry": TEST_RETRY, "sleep": sleeps if sleeps is not None else Sleeps(),
               "poll_interval": 0.05, "drain_timeout": 3.0, **kwargs}
    return KubernetesBackend(double.api_client(), **options)


def in_thread(fn: Any, *args: Any) -> tuple[threading.Thread, list[Any]]:
    """Run ``fn`` in a daemon thread; its result (or exception) lands in the returned list."""
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(fn(*args))
        except BaseException as exc:  # noqa: BLE001
            out.append(exc)
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


@pytest.fixture
def double() -> Iterator[ApiServerDouble]:
    with ApiServerDouble() as server:
        yield server


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def backend(double: ApiServerDouble, sleeps: Sleeps) -> Iterator[KubernetesBackend]:
    instance = make_backend(double, sleeps)
    yield instance
    instance.close()
