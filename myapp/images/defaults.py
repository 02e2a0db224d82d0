"""The platform's own environments, which `myapp init` registers in the shared catalog so that a new user
can open a notebook before anyone built an image (docs/images.md, "Default environments").

- Locally: a Python environment (``MYAPP_LOCAL_ENVIRONMENT``, default ``myapp/python-ml:<python>``) with
  the packages of the platform's own venv as jobs see them (what `make start` installed: the notebook,
  ML and serving extras). It is a venv under ``MYAPP_HOME/environments/<hash>/`` whose site-packages
  chain the platform venv's (a ``.pth`` file), made once per content like any built environment and bound
  read-only into the jobs that use it; the job sandbox keeps the platform's variables, secret key and
  database out of reach, as for every job.
- On Kubernetes: the JupyterLab image named by ``MYAPP_NOTEBOOK_IMAGE`` (default the catalog's `notebook`
  template image), an image row without an environment.

Both are shared images (no project) marked by their names in configuration
(myapp/notebooks/image_choices.default_images).
"""
from __future__ import annotations

import contextlib
import importlib.metadata
import json
import subprocess
import sys
import sysconfig
from pathlib import Path

import sqlalchemy as sa

from ..extensions import db
from ..fs.beneath import Folder
from ..models import Image
from ..notebooks.image_choices import default_images
from . import environments
from .environments import MARKER, Environment, content_hash, find, locked, python_version

BASE = "myapp-platform"  # the base "image" of the local default: the platform's own Python
CHAIN = "_myapp_platform.pth"


def platform_sites() -> list[str]:
    """The platform venv's site-packages (pure and platform-specific), as jobs running its Python see them."""
    paths = sysconfig.get_paths()
    return list(dict.fromkeys(str(Path(paths[key])) for key in ("purelib", "platlib")))


def platform_packages(sites: list[str]) -> list[str]:
    """`name==version` of every distribution there: the content the default environment's hash is over."""
    pinned = {}
    for dist in importlib.metadata.distributions(path=sites):
        name = dist.metadata["Name"]
        if name and dist.version:
            pinned[environments.normalize(name)] = f"{environments.normalize(name)}=={dist.version}"
    return sorted(pinned.values())


def chain_line(sites: list[str]) -> str:
    """A .pth line that adds these folders as site folders (their own .pth files apply, as in the venv)."""
    return "import site; " + "; ".join(f"site.addsitedir({site!r})" for site in sites) + "\n"


def ensure_local_environment(root: Path) -> tuple[Environment, bool]:
    """The local default environment for the platform's current packages: found (False) or made now (True).

    Made by the platform from its own files (no package's code runs), so no sandbox is needed; the marker
    is written last, as for a build."""
    root = Path(root)
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    sites = platform_sites()
    packages = platform_packages(sites)
    env_hash = content_hash(BASE, packages)
    with locked(root, env_hash):
        found = find(root, env_hash)
        if found is not None:
            return found, False
        with Folder.open(root) as folder:
            folder.remove_tree(env_hash)  # one that did not finish
        path = root / env_hash
        try:
            subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True,
                           capture_output=True, timeout=300)
            (site,) = sorted(path.glob("lib/python*/site-packages"))
            with Folder.open(root) as folder:
                folder.write(f"{site.relative_to(root)}/{CHAIN}", chain_line(sites).encode(), 0o644)
                folder.write(f"{env_hash}/{MARKER}", json.dumps({
                    "hash": env_hash, "base_image": BASE, "packages": packages, "python": python_version(),
                    "chains": sites}).encode(), 0o644)
        except BaseException:
            with contextlib.suppress(FileNotFoundError), Folder.open(root) as folder:
                folder.remove_tree(env_hash)
            raise
        return Environment(env_hash, path), True


def _upsert(reference: str, description: str, environment: str | None) -> None:
    repository, _, tag = reference.rpartition(":")
    row = db.session.scalar(sa.select(Image).filter_by(repository=repository, tag=tag))
    if row is None:
        db.session.add(Image(repository=repository, tag=tag, description=description, environment=environment))
        return
    if row.project_id is not None:
        raise RuntimeError(f"{reference} is a project's image: set MYAPP_LOCAL_ENVIRONMENT or MYAPP_NOTEBOOK_IMAGE "
                           "to another name")
    row.description, row.environment = description, environment


def ensure_defaults(root: Path, local_backend: bool = True) -> list[str]:
    """Register the default images in the shared catalog (idempotent); returns their names. The local
    environment only where jobs run on this machine (`MYAPP_BACKEND=local`): on a Kubernetes install it
    would be an image no cluster can pull, and the init Job has no place to keep it."""
    local, kubernetes = default_images()
    registered = []
    if local_backend:
        env, _made = ensure_local_environment(root)
        environments.register_shared(root, local, env.hash)
        _upsert(local, f"The platform's Python {python_version()} with its notebook and ML packages (JupyterLab, "
                       "PyTorch, scikit-learn, ...): runs on this machine. Packages installed in a notebook go "
                       "to that notebook's own work folder.", env.hash)
        registered.append(local)
    _upsert(kubernetes, "JupyterLab image for notebooks on Kubernetes resource groups (MYAPP_NOTEBOOK_IMAGE); "
                        "on this machine a notebook of it runs the platform's Python.", None)
    db.session.commit()
    return [*registered, kubernetes]
