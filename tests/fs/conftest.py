"""Every test of a walk beneath a folder runs twice: through openat2 and through the O_NOFOLLOW component walk."""
from __future__ import annotations

import pytest

from myapp.fs import resolve


@pytest.fixture(params=["openat2", "walk"])
def resolver(request, monkeypatch):
    """Which resolution the test runs on (the walk is what kernels without openat2 get)."""
    if request.param == "openat2" and not resolve.openat2_in_use():
        pytest.skip("openat2 is not available on this machine")
    if request.param == "walk":
        monkeypatch.setattr(resolve, "_openat2", None)
    return request.param
