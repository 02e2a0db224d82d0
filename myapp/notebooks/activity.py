"""What a notebook waits for before it starts (its image's build; resources are
`myapp.admission.gate.admit_notebook`'s), and idle culling from Jupyter's own activity.

Idle means no kernel and no terminal activity: Jupyter's `/api/kernels` and `/api/terminals` give
each one's `last_activity` (a kernel running a cell is busy, never idle). An open browser tab that
only polls does not count. A notebook idle for `MYAPP_NOTEBOOK_IDLE_AFTER` shows `idle`; idle for
its project's `notebook_idle_timeout` (else `MYAPP_NOTEBOOK_CULL_SECONDS`; 0: never) it is stopped,
its work folder kept.
"""
from __future__ import annotations

import datetime as dt
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from flask import current_app

from ..extensions import db
from ..models import (
    Image,
    ImageBuild,
    Notebook,
    NotebookIntent,
    NotebookState,
    Project,
    ServiceState,
    utcnow,
)
from ..rendering.kinds.notebook import url_prefix
from . import worker_auth
from .states import SERVING, StartError, jupyter_token, request_stop, transition

TIMEOUT = 5.0  # seconds for Jupyter to answer an activity query


def environment_check() -> Callable[[Notebook], str | None]:
    """`pulling` while the notebook's image is still being built for its project (locally: its
    environment being prepared); a finished or absent build lets it start."""
    def check(nb: Notebook) -> str | None:
        repository, _, tag = nb.image.rpartition(":")
        building = db.session.scalar(
            sa.select(ImageBuild.id).where(ImageBuild.project_id == nb.project_id, ImageBuild.repository == repository,
                                           ImageBuild.tag == tag,
                                           ImageBuild.state.in_((ServiceState.PENDING, ServiceState.RUNNING)))
            .order_by(ImageBuild.id.desc()).limit(1)) if repository else None
        if building:
            return f"preparing the environment of {nb.image} (image build {building})"
        registered = db.session.scalar(sa.select(Image.id).where(
            Image.repository == repository, Image.tag == tag,
            Image.visible_to(nb.project_id)).limit(1)) if repository else None
        if registered is None:  # its build ended without registering it
            failed = db.session.scalar(
                sa.select(ImageBuild).where(ImageBuild.project_id == nb.project_id,
                                            ImageBuild.repository == repository, ImageBuild.tag == tag)
                .order_by(ImageBuild.id.desc()).limit(1))
            why = f": build {failed.id} {failed.state.value}: {failed.reason or 'no reason given'}" if failed else ""
            raise StartError(f"image {nb.image} is not in the catalog{why}")
        return None

    return check


def last_activity(upstream: str, prefix: str, token: str, fetch: Callable[[str, str], Any]
                  ) -> tuple[dt.datetime | None, bool]:
    """(latest kernel or terminal activity, whether a kernel is busy now) from Jupyter's API."""
    latest: dt.datetime | None = None
    busy = False
    for path in ("api/kernels", "api/terminals"):
        for item in fetch(f"{upstream}{prefix}{path}", token) or []:
            busy = busy or item.get("execution_state") == "busy"
            when = _parse(item.get("last_activity"))
            if when is not None and (latest is None or when > latest):
                latest = when
    return latest, busy


def fetcher(project: str, name: str) -> Callable[[str, str], Any]:
    """GET with the token (a local Jupyter reads it) and the worker's credential (on Kubernetes the
    notebook's ext-authz check admits the worker by it and adds the token itself)."""
    def fetch(url: str, token: str) -> Any:
        request = urllib.request.Request(url, headers={"Authorization": f"token {token}",
                                                       worker_auth.HEADER: worker_auth.credential(project, name)})
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            return json.loads(response.read())

    return fetch


def _parse(value: Any) -> dt.datetime | None:
    if not isinstance(value, str):
        return None
    try:
        when = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


def cull_after(project: Project) -> int:
    timeout = project.notebook_idle_timeout
    return int(current_app.config["MYAPP_NOTEBOOK_CULL_SECONDS"] if timeout is None else timeout)


def check(nb: Notebook, now: dt.datetime, fetch: Callable[[str, str], Any] | None = None) -> str | None:
    """Update one serving notebook's activity and idle state: "culled" (stop requested), "unanswered"
    (a worker should look at its job), else None."""
    project = db.session.get(Project, nb.project_id)
    token = jupyter_token(nb)
    if not nb.upstream or not token:
        return "unanswered"
    try:
        latest, busy = last_activity(nb.upstream, url_prefix(project.name, nb.name), token,
                                     fetch or fetcher(project.name, nb.name))
    except (OSError, ValueError, urllib.error.URLError):
        return "unanswered"  # the reconcile's status poll decides what that means, not culling
    started = _aware(nb.started_at) or now
    seen = max(x for x in (latest, _aware(nb.last_activity_at), started) if x is not None)
    nb.last_activity_at = now if busy else seen
    idle_for = (now - nb.last_activity_at).total_seconds()
    limit = cull_after(project)
    if limit and idle_for >= limit:
        request_stop(nb, f"culled: no kernel or terminal activity for {int(idle_for // 60)} min "
                         f"(the project's limit is {limit // 60} min); the work folder is kept")
        return "culled"
    idle = idle_for >= current_app.config["MYAPP_NOTEBOOK_IDLE_AFTER"]
    if idle and nb.state == NotebookState.RUNNING:
        transition(nb, NotebookState.IDLE, f"no kernel or terminal activity for {int(idle_for // 60)} min")
    elif not idle and nb.state == NotebookState.IDLE:
        transition(nb, NotebookState.RUNNING, None)
    return None


def check_all(now: dt.datetime | None = None, fetch: Callable[[str, str], Any] | None = None) -> list[int]:
    """Beat: every serving notebook checked; returns the ids a worker should reconcile now: those culled
    (committed: stop requested) and those whose Jupyter did not answer (crashed, restarting)."""
    now = now or utcnow()
    culled = []
    ids = list(db.session.scalars(sa.select(Notebook.id).where(Notebook.state.in_(tuple(SERVING)),
                                                               Notebook.desired == NotebookIntent.RUNNING)))
    db.session.commit()
    for notebook_id in ids:
        nb = db.session.get(Notebook, notebook_id)
        if nb is not None and nb.state in SERVING and check(nb, now, fetch) is not None:
            culled.append(notebook_id)
        db.session.commit()
    return culled


def _aware(value: dt.datetime | None) -> dt.datetime | None:
    if value is None:
        return None
    return value if value.tzinfo else value.replace(tzinfo=dt.UTC)
