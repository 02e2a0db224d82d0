"""Helpers of the tests that run the Kubernetes backend against the double. Its fixtures (`double`,
`sleeps`, `k8s_backend`) are in tests/conftest.py: the backend tests, the install test and the
run-token tests use them."""
from __future__ import annotations

from typing import Any

from myapp.backends.kubernetes import KubernetesBackend, RetryPolicy
from myapp.rendering import RenderContext, render
from tests.rendering.support import GANG_ARGS, GANG_CTX, PLAIN_CTX, REQUIRED_ARGS, catalog

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
