"""A container's command on this host: ``EntryMap`` maps the paths a template's Dockerfile copies into its
image back to the source tree's files (the catalog's and the job SDK), ``missing_paths`` says when a script
is not there, and, with no network namespace locally, ``remap_ports`` and ``readiness`` move the container
ports a server is told to listen on and probed at to the host ports chosen for it.
"""
from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...rendering.catalog import CATALOG_FOLDER, JOB_SDK, SOURCE_ROOT

PYTHON_NAME = re.compile(r"python(3(\.[0-9]+)?)?")


class EntryMap:
    """Container paths -> host paths, from the ``COPY``/``ADD`` lines of a template's Dockerfile.

    Its build context is the source tree's root (myapp.rendering.catalog): ``COPY job-templates/python/main.py
    /app/main.py`` makes ``/app/main.py`` mean ``<catalog>/python/main.py`` wherever the catalog is, and a
    job SDK file (``myapp/checkpoint.py``) means the platform's own, the one the sandbox binds. Other sources
    have no local copy and stay unmapped.
    """

    def __init__(self, folder: Path | None):
        self.folder = folder if folder is not None and folder.is_dir() else None
        self.files: dict[str, Path] = {}
        self.dirs: dict[str, Path] = {}
        dockerfile = self.folder / "Dockerfile" if self.folder else None
        if self.folder is not None and dockerfile is not None and dockerfile.is_file():
            self._parse(dockerfile.read_text(encoding="utf-8"))

    def source(self, name: str) -> Path | None:
        """The host file or folder of a build-context path, or None (not in the catalog or the job SDK)."""
        relative = os.path.normpath(name)
        if self.folder is None or "://" in name or os.path.isabs(relative):
            return None
        if relative in JOB_SDK:
            return SOURCE_ROOT / relative
        top, _, rest = relative.partition("/")
        catalog = self.folder.parent.resolve()
        host = (catalog / rest).resolve()
        return host if top == CATALOG_FOLDER and rest and host.is_relative_to(catalog) else None

    def _parse(self, text: str) -> None:
        workdir = "/"
        for line in re.sub(r"\\\n", " ", text).splitlines():
            words = line.strip().split(None, 1)
            if len(words) < 2 or words[0].startswith("#"):
                continue
            instruction, rest = words[0].upper(), words[1].strip()
            if instruction == "WORKDIR":
                workdir = os.path.normpath(os.path.join(workdir, rest))
            elif instruction in ("COPY", "ADD"):
                try:
                    tokens = json.loads(rest) if rest.startswith("[") else shlex.split(rest)
                except ValueError:
                    continue
                flags = [t for t in tokens if t.startswith("--")]
                tokens = [t for t in tokens if not t.startswith("--")]
                if any(f.startswith("--from") for f in flags) or len(tokens) < 2:
                    continue  # multi-stage copies come from another image
                *sources, dest = tokens
                dest_abs = os.path.normpath(os.path.join(workdir, dest))
                for source in sources:
                    host = self.source(source)
                    if host is None:
                        continue
                    if host.is_dir():
                        self.dirs[dest_abs] = host
                    elif host.is_file():
                        target = dest_abs if len(sources) == 1 and not dest.endswith("/") \
                            else os.path.join(dest_abs, os.path.basename(source))
                        self.files[target] = host

    def map(self, token: str) -> str:
        if token in self.files:
            return str(self.files[token])
        for container_dir, host in self.dirs.items():
            if token == container_dir or token.startswith(container_dir.rstrip("/") + "/"):
                return str(host / os.path.relpath(token, container_dir))
        return token


def remap_ports(argv: list[str], env: dict[str, str], remap: Mapping[int, int]) -> tuple[list[str], dict[str, str]]:
    """No network namespace locally: a server told to listen on its containerPort (``--port 8080``,
    ``--port=8080`` or a ``*PORT*`` env var) listens on the host port chosen for it instead."""
    out = list(argv)
    for index, token in enumerate(out):
        flag, eq, value = token.partition("=")
        if eq and "port" in flag.lower() and value.isdigit() and int(value) in remap:
            out[index] = f"{flag}={remap[int(value)]}"
        elif index > 0 and token.isdigit() and int(token) in remap and argv[index - 1].startswith("-") \
                and "=" not in argv[index - 1] and "port" in argv[index - 1].lower():
            out[index] = str(remap[int(token)])
    env = {k: (str(remap[int(v)]) if "PORT" in k.upper() and v.isdigit() and int(v) in remap else v)
           for k, v in env.items()}
    return out, env


def readiness(container: Mapping[str, Any], remap: Mapping[int, int]) -> dict[str, Any] | None:
    probe = container.get("readinessProbe") or {}
    named = {p.get("name"): int(p["containerPort"]) for p in container.get("ports") or [] if "containerPort" in p}

    def host_port(port: Any) -> int | None:
        number = named.get(port) if isinstance(port, str) and not port.isdigit() else int(port)
        return remap.get(number, number) if number is not None else None

    if "httpGet" in probe:
        return {"type": "http", "port": host_port(probe["httpGet"].get("port")),
                "path": probe["httpGet"].get("path", "/")}
    if "tcpSocket" in probe:
        return {"type": "tcp", "port": host_port(probe["tcpSocket"].get("port"))}
    return None  # ready as soon as the process runs


def missing_paths(argv: list[str]) -> list[str]:
    """``python /app/main.py``: the script must exist on the host after mapping."""
    if len(argv) >= 2 and PYTHON_NAME.fullmatch(os.path.basename(argv[0])) and argv[1].startswith("/") \
            and not os.path.exists(argv[1]):
        return [argv[1]]
    return []
