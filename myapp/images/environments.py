"""Local Python environments: what an image is on a machine without a container engine.

A build from a base image and a pip package list (myapp/images/) makes a venv under
``MYAPP_HOME/environments/<hash>/``, the hash taken over the content (base image, the sorted
normalized package list, the Python version): the same list again finds the environment made
before. A build registers its image for its project (``images/<namespace>/<image>.json``), and
``resolve(image, namespace)`` is how local jobs (myapp/backends/local/plan.py) and notebooks find
the environment of an image they name. No database and no backend here: the local backend reads
these files, the web computes hashes.

Layout of the root::

    <hash>/                            the venv, bound read-only into the jobs that use it
    <hash>/.myapp-environment.json     written last: the environment is complete
    .<hash>.lock                       one build of a hash at a time
    images/<namespace>/<image>.json    {"image": ..., "environment": <hash>} per project
    shared/<image>.json                the platform's own environments (`myapp init`), for every project
"""
from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import sys
import tempfile
import urllib.parse
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..errors import FieldError
from ..fs.beneath import Folder

MARKER = ".myapp-environment.json"
IMAGES = "images"
SHARED = "shared"  # not under IMAGES: no namespace can be called like it
# A pip requirement without options, paths or URLs: name, extras, version specifiers.
REQUIREMENT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(\[[A-Za-z0-9._,-]+\])?"
                         r"((==|>=|<=|~=|!=|<|>|===)[A-Za-z0-9.*+!_-]+)?(,(==|>=|<=|~=|!=|<|>)[A-Za-z0-9.*+!_-]+)*")
REQUIREMENT_HELP = "must be a pip requirement such as numpy==2.1 (no options, paths or URLs)"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*")
NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")
MAX_PACKAGES = 1000


@dataclass(frozen=True)
class Environment:
    """A complete environment: run ``python``, put ``bin`` first on PATH, bind ``path`` read-only."""

    hash: str
    path: Path

    @property
    def bin(self) -> Path:
        return self.path / "bin"

    @property
    def python(self) -> Path:
        return self.bin / "python"

    def site_dirs(self) -> list[Path]:
        """Where its packages are: its site-packages, then the folders it chains (the platform's default
        environment chains the platform venv's, myapp/images/defaults.py), as its Python searches them."""
        own = sorted(self.path.glob("lib/python*/site-packages"))
        try:
            chains = json.loads((self.path / MARKER).read_text()).get("chains") or []
        except (OSError, ValueError, AttributeError):
            chains = []
        return [*own, *(Path(str(c)) for c in chains if isinstance(c, str))]


def python_version() -> str:
    """The interpreter environments are made with (the platform's): part of every hash."""
    return f"{sys.version_info[0]}.{sys.version_info[1]}"


def normalize(requirement: str) -> str:
    """One spelling per requirement: the name as PEP 503 normalizes it, no spaces."""
    text = requirement.replace(" ", "")
    match = _NAME.match(text)
    if match is None:
        return text
    name = re.sub(r"[-_.]+", "-", match.group(0)).lower()
    return name + text[match.end():].lower()


def check_requirements(requirements: Iterable[str], field: str) -> list[str]:
    """The requirements normalized, sorted, without repeats; FieldError naming ``field[i]``."""
    out = set()
    for index, requirement in enumerate(requirements):
        if not isinstance(requirement, str) or not REQUIREMENT.fullmatch(requirement.strip()):
            raise FieldError(f"{field}[{index}]", f"{requirement!r} {REQUIREMENT_HELP}")
        out.add(normalize(requirement.strip()))
    if len(out) > MAX_PACKAGES:
        raise FieldError(field, f"at most {MAX_PACKAGES} packages")
    return sorted(out)


def parse_requirements(text: str, field: str = "requirements") -> list[str]:
    """A requirements.txt of plain requirements (comments and blank lines allowed); FieldError naming the
    line: options (-r, -e, --index-url), paths and URLs are refused, never passed to pip."""
    out = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if not REQUIREMENT.fullmatch(line.replace(" ", "")):
            raise FieldError(field, f"line {number}: {line!r} {REQUIREMENT_HELP}")
        out.append(line.replace(" ", ""))
    return out


def freeze_requirements(text: str) -> list[str]:
    """What ``pip freeze`` printed, as requirements: pinned lines kept, editable installs, direct URLs
    (``name @ file://...``) and comments left out (they name files of the notebook, not packages)."""
    out = []
    for raw in text.splitlines():
        line = raw.strip()
        if line and not line.startswith(("#", "-")) and "@" not in line and REQUIREMENT.fullmatch(line):
            out.append(line)
    return out


def content_hash(base_image: str | None, packages: Iterable[str], version: str | None = None) -> str:
    """The environment's name: the same base, packages (in any order or spelling) and Python give the same."""
    body = json.dumps({"base": base_image or "", "packages": sorted({normalize(p) for p in packages}),
                       "python": version or python_version()}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(body.encode()).hexdigest()[:32]


def default_root() -> Path:
    from flask import current_app

    return Path(current_app.config["INSTANCE_PATH"]) / "environments"


def find(root: Path, env_hash: str) -> Environment | None:
    """The complete environment of a hash, or None (never built, or a build that did not finish)."""
    if not re.fullmatch(r"[0-9a-f]{32}", env_hash or ""):
        return None
    path = Path(root) / env_hash
    return Environment(env_hash, path) if (path / MARKER).is_file() else None


def _image_file(root: Path, namespace: str, image: str) -> Path:
    if not NAMESPACE.fullmatch(namespace or ""):
        raise ValueError(f"invalid namespace {namespace!r}")
    return Path(root) / IMAGES / namespace / (urllib.parse.quote(image, safe="") + ".json")


def register(root: Path, namespace: str, image: str, env_hash: str) -> None:
    """From now on ``image`` means this environment for the project's local jobs and notebooks."""
    _write_index(_image_file(root, namespace, image), image, env_hash)


def _shared_file(root: Path, image: str) -> Path:
    return Path(root) / SHARED / (urllib.parse.quote(image, safe="") + ".json")


def _write_index(path: Path, image: str, env_hash: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix="~")
    with os.fdopen(fd, "w") as fh:
        json.dump({"image": image, "environment": env_hash}, fh)
    os.replace(tmp, path)


def register_shared(root: Path, image: str, env_hash: str) -> None:
    """``image`` means this environment for every project's local jobs and notebooks (a project's own
    image of the same name wins)."""
    _write_index(_shared_file(root, image), image, env_hash)


def unregister(root: Path, namespace: str, image: str) -> None:
    _image_file(root, namespace, image).unlink(missing_ok=True)


@contextlib.contextmanager
def locked(root: Path, env_hash: str) -> Iterator[None]:
    """One writer of an environment at a time: its build, a registration that relies on it, its removal."""
    with open(Path(root) / f".{env_hash}.lock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


def registered_hashes(root: Path) -> set[str]:
    """Every environment some project's image stands for."""
    out = set()
    for path in [*(Path(root) / IMAGES).glob("*/*.json"), *(Path(root) / SHARED).glob("*.json")]:
        try:
            out.add(str(json.loads(path.read_text()).get("environment", "")))
        except (OSError, ValueError, AttributeError):
            continue
    return out


def forget(root: Path, namespace: str, image: str) -> str | None:
    """A project's image deleted from the catalog: ``resolve`` no longer finds it, and its environment is
    removed when no other image (of any project) stands for the same content. Returns the removed hash."""
    path = _image_file(root, namespace, image)
    try:
        env_hash = str(json.loads(path.read_text()).get("environment", ""))
    except (OSError, ValueError, AttributeError):
        env_hash = ""
    path.unlink(missing_ok=True)
    if find(root, env_hash) is None:
        return None
    with locked(root, env_hash):  # a build registering the same content waits, then finds it gone
        if env_hash in registered_hashes(root):
            return None
        with contextlib.suppress(FileNotFoundError), Folder.open(root) as environments:
            environments.remove(f"{env_hash}/{MARKER}")  # incomplete first: never handed out half-removed
            environments.remove_tree(env_hash)
    return env_hash


def resolve(image: str, namespace: str, root: Path | None = None) -> Environment | None:
    """The environment a project's image stands for locally, or None (a plain image: the host's Python).

    Per project (its namespace): another project's image of the same name is not this one's; the
    platform's own environments (``register_shared``) stand for their image in every project."""
    root = Path(root if root is not None else default_root())
    try:
        own = [_image_file(root, namespace, image)]
    except ValueError:  # not a namespace
        own = []
    for path in [*own, _shared_file(root, image)]:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        return find(root, str(data.get("environment", "")))
    return None
