"""A notebook's lifecycle: the state machine, and what a worker does to make the state follow intent.

The web app stores intent (`Notebook.desired`: running, stopped, deleted) and enqueues
`myapp.notebook_reconcile`; a worker calls `reconcile()`, which renders the catalog's `notebook`
template, puts the notebook's Jupyter token Secret, submits through the notebook's backend, polls
until JupyterLab answers, and writes the state back. Every failure ends `failed` with the reason:
a notebook is never left `pending` by an error. Stop and delete cancel the attempt and clean it up after
the commit that recorded the stop, never while the row is held (`_stop`); the work folder (the `<name>-work`
claim) is kept by a stop and removed by a delete.
"""
from __future__ import annotations

import datetime as dt
import secrets
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from ..backends.base import PULLING_IMAGE, Backend, BackendError, JobRef, JobState, ObjectRef, Status
from ..extensions import db
from ..models import (
    JobTemplate,
    Notebook,
    NotebookIntent,
    NotebookState,
    Project,
    ResourceGroup,
    utcnow,
)
from ..outputs.declarations import VOLUME as OUTPUTS_VOLUME
from ..pipelines.images import pull_secrets
from ..pipelines.manifests import group_spec, template_data
from ..rendering import RenderContext, RenderError, render
from ..rendering.kinds.notebook import token_secret_name, url_prefix, work_claim_name
from .states import (
    ACTIVE,
    SERVING,
    TEMPLATE,
    TRANSITIONS,
    InvalidTransition,
    S,
    StartError,
    seal_token,
    transition,
)

__all__ = ["ACTIVE", "SERVING", "TEMPLATE", "TRANSITIONS", "Hooks", "InvalidTransition", "due",
           "fail_unexpectedly", "reconcile", "release", "render_notebook", "transition"]

# How long one reconcile waits for JupyterLab to answer before it hands the notebook back to beat.
START_WAIT = 45.0
POLL = 0.1
# Claims are the work folder: a stop keeps them, a delete removes them (not the project's outputs claim).
VOLUME_KIND = "PersistentVolumeClaim"

# ---- the worker -----------------------------------------------------------------------------------------
BackendFor = Callable[[int | None], Backend]


@dataclass
class Hooks:
    """What a worker plugs in: the backend of a resource group, the log archive, and optional checks
    (an environment being prepared -> `pulling`, admission -> `waiting`), each returning a reason to
    wait or None."""

    backend_for: BackendFor
    archive: Any
    prepare: Callable[[Notebook], str | None] | None = None
    admit: Callable[[Notebook], str | None] | None = None
    start_wait: float = START_WAIT


def _locked(notebook_id: int) -> Notebook | None:
    """The row, locked for this transaction (PostgreSQL; SQLite writes one at a time anyway)."""
    return db.session.scalar(sa.select(Notebook).where(Notebook.id == notebook_id).with_for_update())


def reconcile(notebook_id: int, hooks: Hooks) -> NotebookState | None:
    """Make one notebook follow its intent as far as it goes now; commits. Returns its state (None:
    deleted). Safe to repeat and to run twice: each step is idempotent."""
    nb = _locked(notebook_id)
    if nb is None:
        db.session.commit()
        return None
    nb.requested_at = utcnow()  # being worked on: beat leaves it alone for a while (due())
    if nb.state == S.STOPPING or (nb.desired == NotebookIntent.STOPPED and nb.state != S.STOPPED) \
            or nb.desired == NotebookIntent.DELETED:
        nb = _stop(nb, hooks)
        if nb is None:
            return None
    if nb.state in (S.STOPPED, S.FAILED):
        db.session.commit()  # nothing asked to start it (a start moves it to pending first)
        return nb.state
    try:
        state = _advance(nb, hooks)
    except (BackendError, RenderError, StartError, OSError) as exc:
        _fail(nb, f"cannot start: {exc}")
        state = nb.state
    db.session.commit()
    if state == S.STOPPING:  # it failed: what it started is stopped now, after that commit
        return reconcile(notebook_id, hooks)
    return state


def _advance(nb: Notebook, hooks: Hooks) -> NotebookState:
    if not (nb.job or {}).get("ref"):
        for check, state in ((hooks.prepare, S.PULLING), (hooks.admit, S.WAITING)):
            why = check(nb) if check is not None else None
            if why is not None:
                transition(nb, state, why)
                return nb.state
        _submit(nb, hooks)
        db.session.commit()  # the attempt is recorded before anything waits on it
        nb = _locked(nb.id) or nb
    backend = hooks.backend_for(nb.resource_group_id)
    ref = JobRef.from_dict(nb.job["ref"])  # type: ignore[index]
    deadline = time.monotonic() + hooks.start_wait
    while True:
        status = backend.status(ref)
        if status.state == JobState.RUNNING:
            _serving(nb, status)
            return nb.state
        if status.state in (JobState.FAILED, JobState.SUCCEEDED, JobState.CANCELLED):
            _fail(nb, f"JupyterLab exited: {status.reason or status.state.value}")
            return nb.state
        waiting = (S.WAITING if status.state == JobState.WAITING
                   else S.PULLING if (status.reason or "").startswith(PULLING_IMAGE) else S.PENDING)
        if nb.state != waiting or nb.reason != (status.reason or "starting JupyterLab"):
            transition(nb, waiting, status.reason or "starting JupyterLab")
            db.session.commit()
            nb = _locked(nb.id) or nb
            if nb.desired != NotebookIntent.RUNNING:
                return nb.state  # stopped meanwhile: the request that said so will stop it
        if time.monotonic() > deadline:
            return nb.state  # beat's tick asks again
        time.sleep(POLL)


def _submit(nb: Notebook, hooks: Hooks) -> None:
    project = db.session.get(Project, nb.project_id)
    manifests = render_notebook(nb)
    backend = hooks.backend_for(nb.resource_group_id)
    token = secrets.token_urlsafe(32)
    # The token lives in the notebook's own Secret (its pod reads it as JUPYTER_TOKEN) and, sealed, in
    # the row, which only the worker and the authz checks read: never in an answer, a manifest or a log.
    backend.put_secret(project.namespace, token_secret_name(nb.name), {"token": token})
    kept = seal_token(token)
    nb.job = {"ref": None, "token": kept}
    transition(nb, S.PENDING, "starting JupyterLab")
    ref = backend.submit(manifests)
    nb.job = {"ref": ref.as_dict(), "token": kept}


def render_notebook(nb: Notebook) -> list[dict[str, Any]]:
    """The manifests of the notebook's current attempt (pure given the rows it reads)."""
    project = db.session.get(Project, nb.project_id)
    template = db.session.scalar(sa.select(JobTemplate).filter_by(name=TEMPLATE).order_by(JobTemplate.id.desc()))
    if template is None:
        raise RenderError("the job-template catalog has no 'notebook' template (run `myapp init`)")
    group = db.session.get(ResourceGroup, nb.resource_group_id) if nb.resource_group_id else None
    ctx = RenderContext(project=project.name, namespace=project.namespace, task=nb.name, run_id="nb",
                        attempt=max(1, nb.attempt), service_account=project.service_account,
                        resource_group=group_spec(group), pull_secrets=pull_secrets(nb.project_id))
    args = {"name": nb.name, "image": nb.image or "", "volume_claim": nb.volume or ""}
    return render(template_data(template), args, ctx, nb.resources or None)


def _serving(nb: Notebook, status: Status) -> None:
    """JupyterLab answers: record where the proxy reaches it and the link users open."""
    project = db.session.get(Project, nb.project_id)
    nb.upstream = upstream_of(status.url, project.namespace, nb.name)
    nb.url = url_prefix(project.name, nb.name) + "lab"
    if nb.state not in SERVING:
        transition(nb, S.RUNNING, None)
        nb.last_activity_at = utcnow()


def upstream_of(url: str | None, namespace: str, name: str) -> str:
    """scheme://host:port of the backend's answer (local: a loopback port), else the notebook's Service."""
    if url:
        parts = urllib.parse.urlsplit(url)
        return f"{parts.scheme}://{parts.netloc}"
    return f"http://{name}.{namespace}.svc.cluster.local"


def fail_unexpectedly(notebook_id: int, exc: BaseException) -> None:
    """A reconcile that broke on something unforeseen: a notebook on its way to running says so and
    stops there (what it runs, if anything, is stopped by the user's stop or delete); commits."""
    nb = _locked(notebook_id)
    if nb is not None and nb.desired == NotebookIntent.RUNNING and nb.state in (S.PENDING, S.PULLING, S.WAITING):
        nb.state = S.FAILED
        nb.reason = f"cannot start: internal error: {type(exc).__name__}: {exc}"[:4000]
    elif nb is not None and nb.desired == NotebookIntent.DELETED:  # beat asks again (due()) until it is gone
        nb.reason = f"delete not finished, tried again within a minute: {exc}"[:4000]
        nb.requested_at = utcnow()
    db.session.commit()


def _fail(nb: Notebook, reason: str) -> None:
    """A start that cannot succeed: the notebook fails with the reason once what it started is stopped (reconcile
    stops it after this commit; until then it is stopping, which beat's due() asks about again)."""
    nb.job = {**(nb.job or {}), "failed": True}
    nb.state = S.STOPPING  # from any state: the reason says what happened
    nb.reason = reason[:4000]


def _stop(nb: Notebook, hooks: Hooks) -> Notebook | None:
    """Stop the notebook's attempt: the stop is committed first (stopping, the job still named on the row: a
    worker that dies now leaves it to beat's due()), then its job is cancelled and cleaned up (logs archived), its
    token Secret dropped and, for a delete, its work folder removed, with no transaction open (a cancel waits out
    the grace period); then the row, locked again, says so (stopped, failed, deleted: None, or pending again for a
    start that came meanwhile). Idempotent."""
    notebook_id, ref_data = nb.id, (nb.job or {}).get("ref")
    if nb.state != S.STOPPING:
        transition(nb, S.STOPPING, nb.reason if nb.desired == NotebookIntent.DELETED else "stopped")
    project = db.session.get(Project, nb.project_id)
    work = {"resource_group_id": nb.resource_group_id, "namespace": project.namespace, "name": nb.name,
            "ref": ref_data, "remove_volumes": nb.desired == NotebookIntent.DELETED}
    db.session.commit()
    _stop_job(work, hooks)
    locked = _locked(notebook_id)
    if locked is None:
        db.session.commit()
        return None
    nb = locked
    if (nb.job or {}).get("ref") != ref_data or nb.state != S.STOPPING:
        return nb  # another worker finished this stop meanwhile (and may have started it again)
    failed = bool((nb.job or {}).get("failed"))
    nb.job = {"last": ref_data} if ref_data else None  # its log stays readable (archived) until the next start
    nb.upstream = None
    nb.url = None
    nb.last_activity_at = None
    if nb.desired == NotebookIntent.DELETED:
        db.session.delete(nb)
        db.session.commit()
        return None
    if nb.desired == NotebookIntent.STOPPED:
        transition(nb, S.STOPPED, nb.reason or "stopped")
    elif failed:
        nb.state = S.FAILED
        nb.started_at = None
    else:  # started again while it was stopping: the stop is done, now the start
        transition(nb, S.STOPPED, "stopped")
        nb.attempt += 1
        transition(nb, S.PENDING, "starting")
    return nb


def _stop_job(work: dict[str, Any], hooks: Hooks) -> None:
    """The backend's part of a stop (no transaction open): cancel and clean up the attempt, its log archived, drop
    its token Secret; with `remove_volumes`, also the work folder."""
    backend = hooks.backend_for(work["resource_group_id"])
    namespace = work["namespace"]
    ref_data = work["ref"]
    if ref_data:
        ref = JobRef.from_dict(ref_data)
        if hooks.archive is not None:
            _keep_log(backend, ref, hooks.archive)
        backend.cancel(ref)
        keep = [o for o in ref.objects if o.kind != VOLUME_KIND]
        backend.cleanup(JobRef(ref.backend, ref.namespace, ref.job_name, ref.primary, tuple(keep)), hooks.archive)
    backend.delete_secret(namespace, token_secret_name(work["name"]))
    if work["remove_volumes"]:
        volumes = tuple(o for o in ((ref_data and JobRef.from_dict(ref_data).objects) or ())
                        if o.kind == VOLUME_KIND and o.name != OUTPUTS_VOLUME)  # the project's outputs stay
        if not volumes:  # never started: the claim, if any, is named by rule
            volumes = (work_claim(namespace, work["name"]),)
        primary = volumes[0]
        backend.cleanup(JobRef(backend.name, namespace, work["name"], primary, volumes), hooks.archive)


def _keep_log(backend: Backend, ref: JobRef, archive: Any) -> None:
    """Archive JupyterLab's log before the cancel: on Kubernetes the cancel deletes the pod, and with it
    the log that cleanup would archive (cleanup never replaces a kept log with an empty one)."""
    try:
        lines = list(backend.logs(ref))
    except BackendError:
        return  # cleanup archives what it still finds
    if lines:
        archive.write(ref, lines)


def work_claim(namespace: str, name: str) -> ObjectRef:
    """The notebook's work folder claim (rendering names it by rule)."""
    return ObjectRef("v1", VOLUME_KIND, namespace, work_claim_name(name))


# ---- beat -----------------------------------------------------------------------------------------------
STALE = dt.timedelta(seconds=60)


def due(now: dt.datetime | None = None) -> list[int]:
    """Notebooks a worker should look at again: on their way somewhere (pending, pulling, waiting,
    stopping) or to be deleted (a delete a backend refused is tried again), and not asked about in the
    last minute (a lost message, a worker killed mid-start)."""
    now = now or utcnow()
    moving = (S.PENDING, S.PULLING, S.WAITING, S.STOPPING)
    return list(db.session.scalars(
        sa.select(Notebook.id).where(sa.or_(Notebook.state.in_(moving), Notebook.desired == NotebookIntent.DELETED),
                                     sa.or_(Notebook.requested_at.is_(None), Notebook.requested_at < now - STALE))
        .order_by(Notebook.id)))


def release(attempt: dict[str, Any], hooks: Hooks) -> None:
    """Stop and remove what `project_attempts` listed (the rows are gone already)."""
    backend = hooks.backend_for(None if attempt["resource_group_id"] is None else attempt["resource_group_id"])
    if attempt["ref"]:
        ref = JobRef.from_dict(attempt["ref"])
        backend.cancel(ref)
        backend.cleanup(ref, hooks.archive)
    backend.delete_secret(attempt["namespace"], attempt["secret"])
    volumes = tuple(ObjectRef(**o) for o in attempt["volumes"])
    if volumes:
        backend.cleanup(JobRef(backend.name, attempt["namespace"], volumes[0].name, volumes[0], volumes),
                        hooks.archive)
