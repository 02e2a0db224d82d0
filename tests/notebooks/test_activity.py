"""Idle culling from Jupyter's kernel and terminal activity (its answers given, no Jupyter needed)."""
from __future__ import annotations

import datetime as dt

from tests.world import created


def test_idle_then_culled_after_the_projects_timeout(app, user, notebook_world):
    from myapp.extensions import db
    from myapp.models import Notebook, NotebookIntent, NotebookState, Project
    from myapp.notebooks import activity

    pid = notebook_world["project"]["id"]
    nb_id = created(user.post("/api/v1/notebook/", json={"project_id": pid, "name": "lab",
                                                          "image": notebook_world["image"]}))["id"]
    assert user.put(f"/api/v1/project/{pid}", json={"notebook_idle_timeout": 1800}).status_code == 200
    start = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.UTC)
    answers = {"api/kernels": [{"id": "k", "execution_state": "idle", "last_activity": "2026-01-01T12:10:00Z"}],
               "api/terminals": [{"name": "1", "last_activity": "2026-01-01T12:05:00.000000Z"}]}

    def fetch(url: str, token: str):
        if token != "t0k":  # another test's notebook in the session's database: not answering
            raise OSError("not this test's")
        return next(v for k, v in answers.items() if url.endswith(k))

    with app.app_context():
        nb = db.session.get(Notebook, nb_id)
        nb.state, nb.started_at, nb.upstream, nb.job = NotebookState.RUNNING, start, "http://127.0.0.1:1", \
            {"ref": None, "token": "t0k"}
        db.session.commit()
        assert nb_id not in activity.check_all(start + dt.timedelta(minutes=12), fetch)
        assert db.session.get(Notebook, nb_id).state == NotebookState.RUNNING  # active 2 min ago
        assert nb_id not in activity.check_all(start + dt.timedelta(minutes=20), fetch)
        nb = db.session.get(Notebook, nb_id)
        assert nb.state == NotebookState.IDLE and "10 min" in nb.reason
        answers["api/kernels"][0]["execution_state"] = "busy"  # a long cell is activity
        assert nb_id not in activity.check_all(start + dt.timedelta(minutes=50), fetch)
        assert db.session.get(Notebook, nb_id).state == NotebookState.RUNNING
        answers["api/kernels"][0]["execution_state"] = "idle"
        assert nb_id in activity.check_all(start + dt.timedelta(minutes=81), fetch)  # 31 min since 12:50
        nb = db.session.get(Notebook, nb_id)
        assert nb.state == NotebookState.STOPPING and nb.desired == NotebookIntent.STOPPED
        assert "culled" in nb.reason and "work folder is kept" in nb.reason
        project = db.session.get(Project, pid)
        project.notebook_idle_timeout = 0  # never culled
        db.session.commit()


def test_a_start_over_the_quota_waits_with_the_reason(app, admin, user, notebook_world):
    from myapp.admission.gate import admit_notebook
    from myapp.backends.archive import FileLogArchive
    from myapp.extensions import db
    from myapp.models import Notebook, NotebookState
    from myapp.notebooks.lifecycle import Hooks, reconcile

    pid, image = notebook_world["project"]["id"], notebook_world["image"]
    suffix = image[-8:]
    cluster = created(admin.post("/api/v1/cluster/", json={"name": "qc-" + suffix, "kind": "local"}))
    group = created(admin.post("/api/v1/resource_group/", json={
        "name": "qg-" + suffix, "cluster_id": cluster["id"], "cpu": "2", "memory": "8Gi", "gpus": 0}))
    created(admin.post("/api/v1/quota/", json={"project_id": pid, "resource_group_id": group["id"],
                                                "cpu": "1", "memory": "4Gi", "gpus": 0, "can_borrow": False}))
    body = {"project_id": pid, "image": image, "resource_group_id": group["id"], "resources": {"cpu": "1",
                                                                                              "memory": "1Gi"}}
    first = created(user.post("/api/v1/notebook/", json=body | {"name": "one"}))
    second = created(user.post("/api/v1/notebook/", json=body | {"name": "two"}))
    with app.app_context():
        db.session.get(Notebook, first["id"]).job = {"ref": {"job_name": "one"}, "token": "x"}  # the first one runs
        db.session.commit()
        hooks = Hooks(backend_for=lambda _group: None, archive=FileLogArchive("/nonexistent"),  # type: ignore
                      admit=admit_notebook)
        assert reconcile(second["id"], hooks) == NotebookState.WAITING
        reason = db.session.get(Notebook, second["id"]).reason
        assert reason == "waiting: project quota cpu 1/1 (this project does not borrow)", reason
        db.session.get(Notebook, first["id"]).job = None  # the first one stopped: room again
        db.session.commit()
        assert admit_notebook(db.session.get(Notebook, second["id"])) is None
