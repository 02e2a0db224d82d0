"""A start that cannot succeed ends `failed` with the reason: never a notebook left pending."""
from __future__ import annotations

from typing import Any

import pytest

from tests.world import created

pytestmark = pytest.mark.backends


class Refusing:
    """A backend that takes the token Secret and refuses the submit."""

    name = "refusing"

    def __init__(self) -> None:
        self.secrets: dict[tuple[str, str], dict[str, str]] = {}

    def put_secret(self, namespace: str, name: str, data: dict[str, str]) -> None:
        self.secrets[(namespace, name)] = data

    def delete_secret(self, namespace: str, name: str) -> None:
        self.secrets.pop((namespace, name), None)

    def submit(self, manifests: list[dict[str, Any]]) -> Any:
        from myapp.backends.base import UnsupportedKind

        raise UnsupportedKind("a local notebook needs Jupyter in the host Python: pip install jupyterlab")


def test_a_refused_start_fails_with_the_reason_and_leaves_nothing(app, user, notebook_world):
    from myapp.extensions import db
    from myapp.models import Notebook, NotebookState
    from myapp.notebooks.lifecycle import Hooks, fail_unexpectedly, reconcile

    pid, image = notebook_world["project"]["id"], notebook_world["image"]
    nb = created(user.post("/api/v1/notebook/", json={"project_id": pid, "name": "lab", "image": image}))
    backend = Refusing()
    with app.app_context():
        hooks = Hooks(backend_for=lambda _group: backend, archive=None)  # type: ignore[arg-type]
        assert reconcile(nb["id"], hooks) == NotebookState.FAILED
        row = db.session.get(Notebook, nb["id"])
        assert row.reason.startswith("cannot start: a local notebook needs Jupyter") and not backend.secrets
    shown = user.get(f"/api/v1/notebook/{nb['id']}").get_json()
    assert shown["state"] == "failed" and "pip install jupyterlab" in shown["reason"]
    again = user.post(f"/api/v1/notebook/{nb['id']}/start").get_json()
    assert again["state"] == "pending"  # a failed notebook may be started again

    with app.app_context():  # a worker that broke on something unforeseen says so too
        fail_unexpectedly(nb["id"], KeyError("ref"))
        assert db.session.get(Notebook, nb["id"]).reason == "cannot start: internal error: KeyError: 'ref'"


def test_a_start_while_stopping_stops_then_starts_again(app, user, notebook_world):
    from myapp.extensions import db
    from myapp.models import Notebook, NotebookState
    from myapp.notebooks.lifecycle import Hooks, reconcile

    pid, image = notebook_world["project"]["id"], notebook_world["image"]
    nb = created(user.post("/api/v1/notebook/", json={"project_id": pid, "name": "lab", "image": image}))
    assert user.post(f"/api/v1/notebook/{nb['id']}/stop").get_json()["state"] == "stopping"
    restarted = user.post(f"/api/v1/notebook/{nb['id']}/start").get_json()
    assert restarted["state"] == "stopping" and restarted["desired"] == "running"
    assert restarted["reason"] == "stopping, then starting again"
    backend = Refusing()
    with app.app_context():
        assert reconcile(nb["id"], Hooks(backend_for=lambda _group: backend, archive=None)) \
            == NotebookState.FAILED  # type: ignore[arg-type]
        row = db.session.get(Notebook, nb["id"])
        assert row.attempt == 2 and "pip install jupyterlab" in row.reason  # it did try to start again


def test_an_image_being_built_makes_it_pull_and_a_failed_build_fails_it(app, user, make_user, notebook_world):
    from myapp.extensions import db
    from myapp.models import ImageBuild, Notebook, NotebookState, ServiceState
    from myapp.notebooks import activity
    from myapp.notebooks.lifecycle import Hooks, reconcile

    pid = notebook_world["project"]["id"]
    build = created(user.post("/api/v1/image_build/", json={
        "project_id": pid, "repository": "registry.local/nbp/env", "tag": "v1", "packages": ["numpy==2.1"]}))
    body = {"project_id": pid, "name": "lab", "image": "registry.local/nbp/env:v1"}
    stranger = make_user()  # the image is this project's: another project cannot name it
    other = created(stranger.post("/api/v1/project/", json={"name": "o" + notebook_world["image"][-8:]}))
    refused = stranger.post("/api/v1/notebook/", json=body | {"project_id": other["id"]})
    assert refused.status_code == 400 and refused.get_json()["errors"][0]["field"] == "image"
    nb = created(user.post("/api/v1/notebook/", json=body))
    hooks = Hooks(backend_for=lambda _group: Refusing(), archive=None,  # type: ignore[arg-type]
                  prepare=activity.environment_check())
    with app.app_context():
        assert reconcile(nb["id"], hooks) == NotebookState.PULLING
        assert db.session.get(Notebook, nb["id"]).reason == \
            f"preparing the environment of registry.local/nbp/env:v1 (image build {build['id']})"
        row = db.session.get(ImageBuild, build["id"])
        row.state, row.reason = ServiceState.FAILED, "pip: no matching distribution for numpy==2.1"
        db.session.commit()
        assert reconcile(nb["id"], hooks) == NotebookState.FAILED
        assert db.session.get(Notebook, nb["id"]).reason == (
            f"cannot start: image registry.local/nbp/env:v1 is not in the catalog: build {build['id']} failed: "
            "pip: no matching distribution for numpy==2.1")


class Cleaning(Refusing):
    """A backend that removes what it is asked to (it records the claims)."""

    def __init__(self) -> None:
        super().__init__()
        self.cleaned: list[Any] = []

    def cleanup(self, ref: Any, archive: Any) -> None:
        self.cleaned.append(ref)


class RefusingCleanup(Refusing):
    """A backend whose cleanup is refused (a link the project planted in its work folder's way)."""

    def cleanup(self, ref: Any, archive: Any) -> None:
        from myapp.backends.base import PermanentBackendError

        raise PermanentBackendError("claim 'lab-work' not removed: a link on the way")


def test_a_delete_a_backend_refused_says_so_and_beat_tries_it_again(app, user, notebook_world):
    import datetime as dt

    from myapp.extensions import db
    from myapp.models import Notebook
    from myapp.models.base import utcnow
    from myapp.notebooks.lifecycle import Hooks, due, fail_unexpectedly, reconcile

    pid, image = notebook_world["project"]["id"], notebook_world["image"]
    nb = created(user.post("/api/v1/notebook/", json={"project_id": pid, "name": "lab", "image": image}))
    assert user.post(f"/api/v1/notebook/{nb['id']}/stop").status_code == 200
    assert user.delete(f"/api/v1/notebook/{nb['id']}").status_code in (200, 202)
    with app.app_context():
        with pytest.raises(Exception, match="not removed"):
            reconcile(nb["id"], Hooks(backend_for=lambda _group: RefusingCleanup(), archive=None))  # type: ignore[arg-type]
        db.session.rollback()
        fail_unexpectedly(nb["id"], RuntimeError("claim 'lab-work' not removed: a link on the way"))
        row = db.session.get(Notebook, nb["id"])
        assert row.reason.startswith("delete not finished") and "a link on the way" in row.reason
        assert nb["id"] not in due()  # asked about just now ...
        later = utcnow() + dt.timedelta(minutes=2)
        assert nb["id"] in due(later)  # ... and again a minute on, whatever state it was left in
        cleaning = Cleaning()
        assert reconcile(nb["id"], Hooks(backend_for=lambda _group: cleaning, archive=None)) is None  # type: ignore[arg-type]
        assert db.session.get(Notebook, nb["id"]) is None and [r.primary.name for r in cleaning.cleaned] == ["lab-work"]


class Killed(BaseException):
    """The worker dies (not an error the platform handles)."""


class Probing(Cleaning):
    """Serves a notebook, and records at each call of a stop whether the worker has a transaction open, whether
    another writer can write the notebook's row, and its state as another connection reads it; `die`: the worker
    dies at the first cancel."""

    def __init__(self, die: bool = False) -> None:
        super().__init__()
        self.die, self.calls = die, []
        self.notebook_id = 0

    def submit(self, manifests: list[dict[str, Any]]) -> Any:
        from myapp.backends.base import JobRef, ObjectRef

        meta = manifests[0]["metadata"]
        primary = ObjectRef(manifests[0]["apiVersion"], manifests[0]["kind"], meta["namespace"], meta["name"])
        return JobRef(self.name, meta["namespace"], meta["name"], primary, (primary,))

    def status(self, ref: Any) -> Any:
        from myapp.backends.base import JobState, Status

        return Status(JobState.RUNNING, url="http://127.0.0.1:9")

    def logs(self, ref: Any, follow: bool = False, after: Any = None) -> Any:
        return iter(())

    def _probe(self, call: str) -> None:
        import sqlalchemy as sa

        from myapp.extensions import db
        from myapp.models import Notebook
        from tests.support import elsewhere

        state = elsewhere(sa.select(Notebook.state).where(Notebook.id == self.notebook_id))
        free = elsewhere(sa.update(Notebook).where(Notebook.id == self.notebook_id).values(attempt=Notebook.attempt),
                         write=True)
        self.calls.append((call, db.session().in_transaction(), free, state.value))

    def cancel(self, ref: Any) -> None:
        if self.die:
            self.die = False
            raise Killed()
        self._probe("cancel")

    def cleanup(self, ref: Any, archive: Any) -> None:
        self._probe("cleanup")
        super().cleanup(ref, archive)

    def delete_secret(self, namespace: str, name: str) -> None:
        self._probe("delete_secret")
        super().delete_secret(namespace, name)


def serving_notebook(app, user, notebook_world, backend: Probing) -> int:
    from myapp.models import NotebookState
    from myapp.notebooks.lifecycle import Hooks, reconcile

    pid, image = notebook_world["project"]["id"], notebook_world["image"]
    nb = created(user.post("/api/v1/notebook/", json={"project_id": pid, "name": "lab", "image": image}))
    backend.notebook_id = nb["id"]
    with app.app_context():
        assert reconcile(nb["id"], Hooks(backend_for=lambda _group: backend, archive=None)) == NotebookState.RUNNING
    return nb["id"]


def test_a_stop_and_a_delete_call_the_backend_after_their_commit(app, user, notebook_world):
    """The stop's cancel, cleanup and Secret delete run with no transaction of the worker open, the row free for
    other writers and its stop committed (another connection reads it stopping); a delete likewise, then the
    row goes."""
    from myapp.extensions import db
    from myapp.models import Notebook, NotebookState
    from myapp.notebooks.lifecycle import Hooks, reconcile

    backend = Probing()
    notebook_id = serving_notebook(app, user, notebook_world, backend)
    hooks = Hooks(backend_for=lambda _group: backend, archive=None)
    assert user.post(f"/api/v1/notebook/{notebook_id}/stop").status_code == 200
    with app.app_context():
        assert reconcile(notebook_id, hooks) == NotebookState.STOPPED
        row = db.session.get(Notebook, notebook_id)
        assert set(row.job) == {"last"} and row.reason == "stopped by user"  # its log stays readable
        db.session.commit()
    assert backend.calls == [(call, False, True, "stopping") for call in ("cancel", "cleanup", "delete_secret")]

    backend.calls.clear()
    assert user.delete(f"/api/v1/notebook/{notebook_id}").status_code in (200, 202)
    with app.app_context():
        assert reconcile(notebook_id, hooks) is None
        assert db.session.get(Notebook, notebook_id) is None
    assert backend.calls[-1][1:] == (False, True, "stopping"), backend.calls  # its work folder's removal
    assert {call[1:] for call in backend.calls} == {(False, True, "stopping")}, backend.calls


def test_a_stop_left_by_a_dead_worker_is_finished_by_the_next_tick(app, user, notebook_world):
    """The worker dies after the commit that began the stop, as it cancels the job: the notebook stays stopping,
    naming its job, and beat's due() hands it to a worker a minute on, which stops it."""
    import datetime as dt

    from myapp.extensions import db
    from myapp.models import Notebook, NotebookState
    from myapp.models.base import utcnow
    from myapp.notebooks.lifecycle import Hooks, due, reconcile

    backend = Probing(die=True)
    notebook_id = serving_notebook(app, user, notebook_world, backend)
    hooks = Hooks(backend_for=lambda _group: backend, archive=None)
    assert user.post(f"/api/v1/notebook/{notebook_id}/stop").status_code == 200
    with app.app_context():
        with pytest.raises(Killed):
            reconcile(notebook_id, hooks)
        db.session.rollback()
        row = db.session.get(Notebook, notebook_id)
        assert row.state == NotebookState.STOPPING and row.job["ref"]  # committed, naming what to stop
        assert notebook_id not in due() and notebook_id in due(utcnow() + dt.timedelta(minutes=2))
        db.session.commit()
        assert reconcile(notebook_id, hooks) == NotebookState.STOPPED
    assert [call[0] for call in backend.calls] == ["cancel", "cleanup", "delete_secret"]
    assert len(backend.cleaned) == 1
