"""The Dockerfile a package-list build runs on Kubernetes: pure, from plain data.

Every value is checked before it is written (the API checks them too): a package list can never
smuggle a second instruction or shell syntax into the RUN lines.
"""
from __future__ import annotations

import re
import shlex

from .environments import REQUIREMENT

APT_PACKAGE = re.compile(r"[a-z0-9][a-z0-9+.-]+(=[A-Za-z0-9.+:~-]+)?")  # Debian policy names, optional =version
IMAGE = re.compile(r"[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)*"
                   r"(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[a-f0-9]{64})?")
DEFAULT_BASE = "python:3.11-slim"


def dockerfile_for(base_image: str | None, packages: list[str], apt_packages: list[str]) -> str:
    base = base_image or DEFAULT_BASE
    if not IMAGE.fullmatch(base):
        raise ValueError(f"invalid base image {base!r}")
    bad = [p for p in packages if not REQUIREMENT.fullmatch(p)] + [p for p in apt_packages
                                                                     if not APT_PACKAGE.fullmatch(p)]
    if bad:
        raise ValueError(f"invalid package(s): {bad}")
    lines = [f"FROM {base}"]
    if apt_packages:
        lines.append("RUN apt-get update && apt-get install -y --no-install-recommends "
                     + " ".join(shlex.quote(p) for p in apt_packages) + " && rm -rf /var/lib/apt/lists/*")
    if packages:
        lines.append("RUN pip install --no-cache-dir " + " ".join(shlex.quote(p) for p in packages))
    return "\n".join(lines) + "\n"
