"""Deleting a project that runs work: GET /project/{id}/running lists what the delete would stop, and the
delete stops every unfinished run's jobs through a worker (myapp/pipelines/release.py) after its rows are
gone, so nothing the platform started is orphaned (a job submitted in the moment of the delete:
test_project_delete_race.py)."""
from __future__ import annotations

from myapp.backends.archive import FileLogArchive
from tests.fake_backend import FakeBackend
from tests.pipelines.support import make_pipeline
from tests.support import unique
from tests.world import created


def started_run(app, catalog, project_id):
    """A run of the project whose one task's job is running on a fake backend (a controller pass)."""
    from myapp.pipelines.controller import RunController

    run_id, _ = make_pipeline(app, catalog, {"train": {}}, [], project_id=project_id)
    backend = FakeBackend({"train": ["hang"]})
    with app.app_context():
        assert RunController(lambda task: backend).reconcile(run_id).value == "running"
    return run_id, backend


def test_running_lists_what_a_delete_would_stop_to_members_only(app, catalog, user, make_user):
    from myapp.extensions import db
    from myapp.models import Notebook, NotebookState

    project = created(user.post("/api/v1/project/", json={"name": unique("busy")}))
    url = f"/api/v1/project/{project['id']}/running"
    assert user.get(url).get_json() == {"runs": [], "notebooks": [], "services": [], "builds": []}
    run_id, _ = started_run(app, catalog, project["id"])
    with app.app_context():
        db.session.add(Notebook(project_id=project["id"], name="nb", image="python:3.11", state=NotebookState.RUNNING))
        db.session.add(Notebook(project_id=project["id"], name="off", image="python:3.11",
                                state=NotebookState.STOPPED))
        db.session.commit()
    work = user.get(url).get_json()
    assert work["runs"] == [{"id": run_id, "name": f"pipe run #{run_id}", "state": "running"}]
    assert [n["name"] for n in work["notebooks"]] == ["nb"]  # a stopped notebook runs nothing
    assert make_user().get(url).status_code == 404  # another project's work is not revealed


def test_deleting_a_project_stops_its_running_jobs_and_their_token_secret(app, catalog, user, monkeypatch, tmp_path):
    import myapp.api.pipelines
    from myapp.pipelines.release import release

    sent: list[tuple] = []
    monkeypatch.setattr(myapp.api.pipelines, "enqueue", lambda name, *args, **_: sent.append((name, *args)))
    project = created(user.post("/api/v1/project/", json={"name": unique("gone")}))
    run_id, backend = started_run(app, catalog, project["id"])
    (job,) = backend.jobs
    backend.put_secret(project["namespace"], f"myapp-run-{run_id}-token", {"token": "t"})

    assert user.delete(f"/api/v1/project/{project['id']}").status_code == 200
    (item,) = [args[0] for name, *args in sent if name == "myapp.run_release"]
    assert item["run_id"] == run_id and item["namespace"] == project["namespace"] and len(item["attempts"]) == 1
    with app.app_context():
        release(item, lambda group_id: backend, FileLogArchive(tmp_path))
        release(item, lambda group_id: backend, FileLogArchive(tmp_path))  # a second delivery is harmless
    assert backend.cancelled == {job}
    assert backend.cleaned[job] >= 1
    assert (project["namespace"], f"myapp-run-{run_id}-token") not in backend.secrets
