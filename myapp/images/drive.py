"""The worker's side of an image build (Celery task ``myapp.build_image``): build, log, register.

Where it builds: a build whose resource group is on a Kubernetes cluster runs a Kaniko Job there
(``kaniko.py``); every other build makes a local Python environment (``builder.py``). Either way the
log goes to the build's file (``logs.py``), the state and reason to its row, and a success registers
the image in the catalog for the project (an ``Image`` row; locally also the environment that image
stands for, ``myapp.images.environments.register``). Safe to run again for the same build: a finished build
is left alone, a Kaniko Job already submitted is adopted.
"""
from __future__ import annotations

import contextlib
import datetime as dt
import importlib.metadata
import sys
import time
from collections.abc import Callable, Iterable
from email.parser import BytesHeaderParser

import sqlalchemy as sa
from flask import current_app

from ..auth.sealed import SealError
from ..backends import Backend, BackendError, JobRef, JobState
from ..backends.local.plan import LAYER
from ..backends.registry import backend_for_group, local_workdir, log_archive
from ..extensions import db
from ..fs.beneath import Folder, Refused
from ..models import (
    BuildSource,
    Cluster,
    ClusterKind,
    Image,
    ImageBuild,
    JobTemplate,
    Notebook,
    Project,
    ResourceGroup,
    ServiceState,
    utcnow,
)
from ..notebooks import worker_auth
from ..notebooks.packages import SnapshotError, installed
from ..notebooks.states import SERVING, jupyter_token, not_serving
from ..pipelines.images import pull_secrets
from ..pipelines.manifests import group_spec, template_data
from ..rendering import RenderError
from ..rendering.kinds.notebook import url_prefix, work_claim_name
from . import credentials, environments, kaniko
from .builder import BuildError, build_environment
from .dockerfile import dockerfile_for
from .logs import LogWriter, log_path

NO_ENGINE = "no container engine: build this on Kubernetes, or use a package list"
NO_APT = ("apt packages need a container engine: build this on Kubernetes (a resource group of a "
          "Kubernetes cluster), or leave apt_packages empty for a local environment")
TEMPLATE = "image-build"
METADATA_LIMIT = 64 * 1024  # bytes of a METADATA file read for its headers (Name, Version come first)


class Failed(Exception):
    """The build cannot succeed; the message is its reason."""


def drive(build_id: int, *, poll_seconds: float = 2.0, sleep: Callable[[float], None] = time.sleep) -> str | None:
    build = db.session.get(ImageBuild, build_id)
    if build is None or build.is_finished:
        return None
    log = LogWriter(log_path(current_app.config["INSTANCE_PATH"], build.id))
    if build.state == ServiceState.PENDING:
        build.state, build.started_at, build.reason = ServiceState.RUNNING, utcnow(), "building"
        db.session.commit()
    try:
        image = _kaniko(build, log, poll_seconds, sleep) if _on_kubernetes(build) else _local(build, log)
    except (Failed, BuildError) as exc:
        _failed(build_id, log, str(exc))
        return ServiceState.FAILED.value
    except Exception as exc:  # a bug or a broken machine: the build says so instead of staying "running"
        _failed(build_id, log, f"the build broke: {type(exc).__name__}: {exc}")
        raise
    build = db.session.get(ImageBuild, build_id)
    build.image_id = image.id
    _finish(build, ServiceState.SUCCEEDED, f"built {build.reference}" + (" (from the cache)" if build.cached else ""))
    return build.state.value


def _failed(build_id: int, log: LogWriter, reason: str) -> None:
    db.session.rollback()
    log(f"build failed: {reason}")
    _finish(db.session.get(ImageBuild, build_id), ServiceState.FAILED, reason)


def stale_builds(now: dt.datetime | None = None) -> list[int]:
    """Builds nobody is driving: pending for more than a minute (the request was lost), or running and
    untouched for longer than a build may take (its worker died). Each is marked touched, so beat asks
    once per period, not on every tick."""
    now = now or utcnow()
    timeout = float(current_app.config.get("MYAPP_ENV_BUILD_TIMEOUT") or 1800)
    pending = sa.and_(ImageBuild.state == ServiceState.PENDING, ImageBuild.updated_at < now - dt.timedelta(seconds=60))
    running = sa.and_(ImageBuild.state == ServiceState.RUNNING,
                      ImageBuild.updated_at < now - dt.timedelta(seconds=timeout + 300))
    ids = list(db.session.scalars(sa.select(ImageBuild.id).where(sa.or_(pending, running)).limit(100)))
    if ids:
        db.session.execute(sa.update(ImageBuild).where(ImageBuild.id.in_(ids)).values(updated_at=now))
    db.session.commit()
    return ids


def _finish(build: ImageBuild | None, state: ServiceState, reason: str) -> None:
    if build is None:
        return  # its project was deleted meanwhile (and its Kaniko job cancelled): nothing left to mark
    build.state, build.reason, build.finished_at = state, reason, utcnow()
    db.session.commit()


def _on_kubernetes(build: ImageBuild) -> bool:
    if not build.resource_group_id:
        return False
    group = db.session.get(ResourceGroup, build.resource_group_id)
    cluster = db.session.get(Cluster, group.cluster_id) if group else None
    return cluster is not None and cluster.kind == ClusterKind.KUBERNETES


def _packages(build: ImageBuild, log: LogWriter) -> list[str]:
    """The build's pip packages; a notebook snapshot takes them now, from the notebook's environment."""
    if build.source != BuildSource.NOTEBOOK or build.packages:
        return list(build.packages)
    notebook = db.session.get(Notebook, build.notebook_id) if build.notebook_id else None
    if notebook is None:
        raise Failed("the notebook to snapshot no longer exists")
    project = db.session.get(Project, notebook.project_id)
    own: list[str] = []
    if notebook.resource_group_id and _group_on_kubernetes(notebook.resource_group_id):
        packages = _running_packages(notebook, project)
    else:  # its environment's packages and, first, what was pip-installed in the notebook's own layer
        layer = layer_packages(project.namespace, notebook.name)
        own = pins(layer)
        packages = snapshot(environments.resolve(notebook.image, project.namespace), layer)
    log(f"snapshot of notebook {notebook.name} ({notebook.image}): {len(packages)} package(s)"
        + (f", {len(own)} of them installed in the notebook's own layer ({LAYER}): {', '.join(own)}" if own else ""))
    build.packages = packages
    build.base_image = build.base_image or notebook.image
    db.session.commit()
    return packages


def _group_on_kubernetes(group_id: int) -> bool:
    group = db.session.get(ResourceGroup, group_id)
    cluster = db.session.get(Cluster, group.cluster_id) if group else None
    return cluster is not None and cluster.kind == ClusterKind.KUBERNETES


def snapshot(env: environments.Environment | None, first: Iterable[tuple[str | None, str | None]] = ()) -> list[str]:
    """What ``pip freeze`` would list for a notebook's Python, read from the packages' metadata (running the
    environment's interpreter would run its packages' code, as the platform): `first` (a local notebook's own
    layer: layer_packages), then the environment's site-packages, or the host Python's for a notebook without
    an environment; a package in both at the version found first."""
    paths = [p for p in sys.path if p.endswith("site-packages")] if env is None else [str(p) for p in env.site_dirs()]
    return pins([*first, *((dist.metadata["Name"], dist.version)
                           for dist in importlib.metadata.distributions(path=paths))])


def layer_packages(namespace: str, name: str) -> list[tuple[str | None, str | None]]:
    """(name, version) of each distribution in a local notebook's own layer (`.myapp-venv` in its work folder,
    where its `pip install`s go: myapp/backends/local/plan.py), read by descriptor beneath the project's data
    folder: the notebook owns its work folder, so a link or anything but a folder or a regular file on the way
    is refused (the build fails saying so), never followed; [] when nothing was pip-installed there."""
    found: list[tuple[str | None, str | None]] = []
    try:
        with Folder.open(local_workdir() / "data" / namespace) as data, \
                data.folder(f"volumes/{work_claim_name(name)}/{LAYER}/lib") as lib:
            for python in _folders(lib, "python"):
                with contextlib.suppress(FileNotFoundError), lib.folder(f"{python}/site-packages") as site:
                    for dist in _folders(site, "", ".dist-info"):
                        with contextlib.suppress(FileNotFoundError):
                            headers = BytesHeaderParser().parsebytes(site.read(f"{dist}/METADATA", METADATA_LIMIT))
                            found.append((headers["Name"], headers["Version"]))
    except FileNotFoundError:
        return found
    except Refused as exc:
        raise Failed(f"the notebook's own layer ({LAYER}) cannot be read: {exc.message}") from None
    return found


def _folders(folder: Folder, prefix: str, suffix: str = "") -> list[str]:
    """The names of the real folders (no links) directly in `folder` that start and end so, sorted."""
    return [name for name in folder.folders() if name.startswith(prefix) and name.endswith(suffix)]


def pins(found: Iterable[tuple[str | None, str | None]]) -> list[str]:
    """`name==version` of each distribution as `pip freeze` lists them (pip's own tools left out); a name
    or version that is no requirement (a notebook can print anything) is dropped by `freeze_requirements`."""
    pinned: dict[str, str] = {}
    for name, version in found:
        if name and version and name.lower() not in ("pip", "setuptools", "wheel"):  # the first found wins
            pinned.setdefault(environments.normalize(name), f"{environments.normalize(name)}=={version}")
    return environments.freeze_requirements("\n".join(sorted(pinned.values())))


def _running_packages(notebook: Notebook, project: Project) -> list[str]:
    """A notebook on Kubernetes: its kernel lists them, asked through its Service (docs/images.md)."""
    token = jupyter_token(notebook)
    if notebook.state not in SERVING or not notebook.upstream or not token:
        raise Failed(f"the notebook must be running to snapshot it ({not_serving(notebook)})")
    base = notebook.upstream + url_prefix(project.name, notebook.name)
    headers = {worker_auth.HEADER: worker_auth.credential(project.name, notebook.name)}
    timeout = float(current_app.config.get("MYAPP_NOTEBOOK_SNAPSHOT_TIMEOUT") or 120)
    db.session.commit()  # no transaction held open while the notebook answers
    try:
        return pins(installed(base, headers, timeout))
    except SnapshotError as exc:
        raise Failed(f"cannot read the packages of notebook {notebook.name}: {exc}") from exc


# ---- locally ------------------------------------------------------------------------------------------
def _local(build: ImageBuild, log: LogWriter) -> Image:
    if build.source == BuildSource.DOCKERFILE or build.dockerfile:
        raise Failed(NO_ENGINE)
    if build.apt_packages:
        raise Failed(NO_APT)
    packages = _packages(build, log)
    namespace = db.session.get(Project, build.project_id).namespace
    build_id, base_image, reference = build.id, build.base_image, build.reference
    root = environments.default_root()
    timeout = float(current_app.config.get("MYAPP_ENV_BUILD_TIMEOUT") or 1800)
    db.session.commit()  # no transaction held open for the minutes pip may take
    engine = db.engine

    def gone() -> str | None:  # asked from the builder's watcher thread: a connection of its own
        with engine.connect() as conn:
            if conn.scalar(sa.select(ImageBuild.id).where(ImageBuild.id == build_id)) is None:
                return "the project was deleted while its environment was being built"
        return None

    env, cached = build_environment(root, base_image, packages, namespace, log,
                                    uids_table=local_workdir() / "uids.json", timeout=timeout, stop=gone)
    build = db.session.get(ImageBuild, build_id)
    if build is None:
        raise Failed("the project was deleted while its environment was being built")
    build.environment, build.cached = env.hash, cached
    image = _register(build, env.hash)
    with environments.locked(root, env.hash):  # not removed between finding it and naming it (forget())
        if environments.find(root, env.hash) is None:
            raise Failed(f"environment {env.hash} was removed while this build registered it: build again")
        environments.register(root, namespace, reference, env.hash)
    return image


def _register(build: ImageBuild, env_hash: str | None) -> Image:
    """The catalog entry of the built image, the project's; a name another project or the shared catalog
    holds is refused (the API refuses it first, this is the race between two builds)."""
    image = db.session.scalar(sa.select(Image).filter_by(repository=build.repository, tag=build.tag))
    if image is None:
        image = Image(repository=build.repository, tag=build.tag, project_id=build.project_id,
                      description=f"built by image build {build.id}")
        db.session.add(image)
    elif image.project_id != build.project_id:
        raise Failed(f"{build.reference} is already in the catalog for another project or for everyone")
    image.environment = env_hash
    db.session.flush()
    return image


# ---- on Kubernetes -----------------------------------------------------------------------------------
def _kaniko(build: ImageBuild, log: LogWriter, poll_seconds: float, sleep: Callable[[float], None]) -> Image:
    backend = backend_for_group(build.resource_group_id)
    namespace = db.session.get(Project, build.project_id).namespace
    if build.backend_ref is None:
        # The package list first: a snapshot that cannot be taken fails before any Secret is put.
        packages = [] if build.dockerfile else _packages(build, log)
        secret = _push_secret(build, backend, namespace, log)
        ref = backend.submit(_manifests(build, packages, secret))
        build.backend_ref = ref.as_dict()
        db.session.commit()
        log(f"submitted Kaniko Job {ref.namespace}/{ref.primary.name}")
    ref, build_id = JobRef.from_dict(build.backend_ref), build.id
    timeout = float(current_app.config.get("MYAPP_ENV_BUILD_TIMEOUT") or 1800)
    db.session.commit()  # no transaction open while the Job runs, nor while it is cancelled and removed
    try:
        state = _follow(backend, ref, log, time.monotonic() + timeout, poll_seconds, sleep)
    finally:  # ended, timed out (cancelled) or broken: the Job and its registry Secret go either way
        _cleanup(backend, ref, namespace, build_id, log)  # (a worker lost mid-build: the next drive gets here)
    if state.state != JobState.SUCCEEDED:
        raise Failed(f"the Kaniko build {state.state.value}: {state.reason or 'see the log'}\n{log.tail()}".strip())
    build = db.session.get(ImageBuild, build_id)
    return _register(build, None)


def _push_secret(build: ImageBuild, backend: Backend, namespace: str, log: LogWriter) -> str:
    """The Secret `push` mounts: the project's stored credentials put for this build alone, else the
    namespace's `registry-credentials` an admin made (docs/images.md)."""
    try:
        data = credentials.build_secret(build.project_id)
    except SealError as exc:
        raise Failed(f"the project's registry credentials cannot be read ({exc}): set them again") from exc
    if data is None:
        log(f"pushing with the namespace's Secret {kaniko.REGISTRY_SECRET} (the project stores no credentials)")
        return kaniko.REGISTRY_SECRET
    name = credentials.secret_name(build.id)
    backend.put_secret(namespace, name, data)
    log("pushing with the project's registry credentials")
    return name


def _cleanup(backend: Backend, ref: JobRef, namespace: str, build_id: int, log: LogWriter) -> None:
    try:
        backend.cleanup(ref, log_archive())
    except BackendError as exc:
        log(f"cleanup of the Kaniko Job failed (it stays until deleted): {exc}")
    try:
        backend.delete_secret(namespace, credentials.secret_name(build_id))  # absent: nothing to do
    except BackendError as exc:
        log(f"deleting the build's registry Secret failed: {exc}")


def _manifests(build: ImageBuild, packages: list[str], registry_secret: str) -> list[dict]:
    project = db.session.get(Project, build.project_id)
    template = db.session.scalar(sa.select(JobTemplate).filter_by(name=TEMPLATE).order_by(JobTemplate.id.desc()))
    if template is None:
        raise Failed(f"the {TEMPLATE} job template is not in the catalog (myapp init registers it)")
    if build.dockerfile:
        text = build.dockerfile
    else:
        try:
            text = dockerfile_for(build.base_image, packages, list(build.apt_packages))
        except ValueError as exc:
            raise Failed(str(exc)) from exc
    group = db.session.get(ResourceGroup, build.resource_group_id) if build.resource_group_id else None
    try:
        return kaniko.render_build(template_data(template), project=project.name, namespace=project.namespace,
                                   service_account=project.service_account, build_id=build.id,
                                   reference=build.reference, dockerfile=text, group=group_spec(group),
                                   registry_secret=registry_secret, pull_secrets=pull_secrets(project.id))
    except RenderError as exc:
        raise Failed(f"cannot render the Kaniko Job: {exc}") from exc


def _follow(backend: Backend, ref: JobRef, log: LogWriter, deadline: float, poll_seconds: float,
            sleep: Callable[[float], None]):
    """Poll the Job until it ends, copying new log lines (every container's) into the build's log."""
    cursor: dict[str, int] = {}
    while True:
        status = backend.status(ref)
        finished = status.state in (JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED)
        try:
            for line in backend.logs(ref, follow=False, after=dict(cursor)):
                cursor[line.replica] = max(cursor.get(line.replica, 0), line.seq)
                log(f"[{line.replica}] {line.line}")
        except BackendError as exc:
            log(f"(logs unavailable for now: {exc})")
        if finished:
            return status
        if time.monotonic() > deadline:
            backend.cancel(ref)
            raise Failed("the Kaniko build did not finish in time (MYAPP_ENV_BUILD_TIMEOUT)")
        sleep(poll_seconds)
