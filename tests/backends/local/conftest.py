"""Fixtures of the local backend tests: LocalBackends on the test's own workdir, every job stopped after."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from myapp.backends.local import LocalBackend
from tests.backends.local.support import Backends


@pytest.fixture()
def backends(tmp_path: Path) -> Iterator[Backends]:
    """backends(**options) -> a LocalBackend on the test's workdir with fast test settings."""
    factory = Backends(tmp_path / "work")
    try:
        yield factory
    finally:
        factory.stop_all()


@pytest.fixture()
def backend(backends: Backends) -> LocalBackend:
    """The local backend under test (the Kubernetes one is `k8s_backend`, in tests/conftest.py)."""
    return backends()
