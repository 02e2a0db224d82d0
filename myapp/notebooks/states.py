"""A notebook's states and the intent the API records (no backend here: the web app imports it).

`lifecycle.py` is the worker's side: it makes the state follow the intent.
"""
from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from flask import current_app

from ..auth import sealed
from ..extensions import db
from ..models import Notebook, NotebookIntent, NotebookState, Project, utcnow
from ..rendering.kinds.notebook import token_secret_name, work_claim_name

TEMPLATE = "notebook"  # the catalog template every notebook renders
TOKEN_PURPOSE = "notebook-token"

S = NotebookState
TRANSITIONS: dict[NotebookState, frozenset[NotebookState]] = {
    S.PENDING: frozenset({S.PULLING, S.WAITING, S.RUNNING, S.STOPPING, S.STOPPED, S.FAILED}),
    S.PULLING: frozenset({S.PENDING, S.WAITING, S.RUNNING, S.STOPPING, S.STOPPED, S.FAILED}),
    S.WAITING: frozenset({S.PENDING, S.PULLING, S.RUNNING, S.STOPPING, S.STOPPED, S.FAILED}),
    # Back to pending while the backend restarts a JupyterLab that exited (the reason says why).
    S.RUNNING: frozenset({S.IDLE, S.PENDING, S.STOPPING, S.STOPPED, S.FAILED}),
    S.IDLE: frozenset({S.RUNNING, S.PENDING, S.STOPPING, S.STOPPED, S.FAILED}),
    S.STOPPING: frozenset({S.STOPPED, S.FAILED}),
    S.STOPPED: frozenset({S.PENDING, S.STOPPING}),
    S.FAILED: frozenset({S.PENDING, S.STOPPING, S.STOPPED}),
}
ACTIVE = frozenset({S.PENDING, S.PULLING, S.WAITING, S.RUNNING, S.IDLE})
SERVING = frozenset({S.RUNNING, S.IDLE})


class InvalidTransition(ValueError):
    pass


class StartError(Exception):
    """A start that cannot succeed (its image's build failed, say): the notebook fails with this reason."""


def transition(nb: Notebook, state: NotebookState, reason: str | None = None) -> None:
    """Move `nb` to `state` (a same-state move only updates the reason)."""
    if state != nb.state and state not in TRANSITIONS[nb.state]:
        raise InvalidTransition(f"notebook {nb.name}: cannot go from {nb.state.value} to {state.value}")
    nb.state = state
    nb.reason = reason
    if state in SERVING and nb.started_at is None:
        nb.started_at = utcnow()
    if state not in ACTIVE:
        nb.started_at = None


# ---- the Jupyter token, sealed at rest ---------------------------------------------------------------
def seal_token(token: str) -> str:
    """The token as the row keeps it (`Notebook.job["token"]`): a dump of the table opens no notebook."""
    return sealed.seal(current_app.config["SECRET_KEY"], TOKEN_PURPOSE, token)


def jupyter_token(nb: Notebook) -> str | None:
    """The notebook's Jupyter token, for the authz checks and activity polling; None when it has none
    or it was sealed under another SECRET_KEY (the next start makes a new one). A row written before
    sealing reads as it is."""
    stored = (nb.job or {}).get("token")
    if not stored:
        return None
    try:
        return sealed.unseal(current_app.config["SECRET_KEY"], TOKEN_PURPOSE, str(stored))
    except sealed.SealError:
        return None


def not_serving(nb: Notebook) -> str:
    """Why the authz checks refuse a notebook that cannot be opened now (their 409)."""
    if nb.state in SERVING and (nb.job or {}).get("token") and jupyter_token(nb) is None:
        return f"notebook {nb.name} must be started again: its token cannot be read (SECRET_KEY changed?)"
    return f"notebook {nb.name} is {nb.state.value}" + (f": {nb.reason}" if nb.reason else "")


# ---- intent, as the API records it -------------------------------------------------------------------
def request_start(nb: Notebook) -> None:
    nb.desired = NotebookIntent.RUNNING
    if nb.state in (S.STOPPED, S.FAILED):
        nb.attempt += 1
        transition(nb, S.PENDING, "starting")
    elif nb.state == S.STOPPING:  # the worker finishes the stop, then starts it again
        nb.reason = "stopping, then starting again"
    nb.requested_at = utcnow()


def request_stop(nb: Notebook, reason: str = "stopped by user") -> None:
    nb.desired = NotebookIntent.STOPPED
    if nb.state != S.STOPPED:
        transition(nb, S.STOPPING, reason)
    nb.requested_at = utcnow()


def request_delete(nb: Notebook) -> None:
    nb.desired = NotebookIntent.DELETED
    if nb.state != S.STOPPING:
        nb.state = S.STOPPING  # from any state: a delete always goes through the worker's cleanup
    nb.reason = "deleting"
    nb.requested_at = utcnow()


def project_attempts(project_id: int) -> list[dict[str, Any]]:
    """What a project's deletion must stop (its rows go with it): each notebook's attempt, token Secret
    and work claim, as plain data for `lifecycle.release()`."""
    project = db.session.get(Project, project_id)
    out = []
    for nb in db.session.scalars(sa.select(Notebook).filter_by(project_id=project_id)):
        out.append({"resource_group_id": nb.resource_group_id, "namespace": project.namespace,
                    "secret": token_secret_name(nb.name), "ref": (nb.job or {}).get("ref"),
                    "volumes": [{"api_version": "v1", "kind": "PersistentVolumeClaim", "namespace": project.namespace,
                                 "name": work_claim_name(nb.name)}]})
    return out
