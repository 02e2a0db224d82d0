"""A run's checkpoint folders go with it: deleting the run, its pipeline or its project writes down what to
remove in the same transaction, and a worker removes the folders afterwards from every backend its attempts
ran on (the local folder by descriptor, never through a link; a Kubernetes claim by a short-lived pod), so a
platform stopped in between, or a backend that fails once, leaves rows to finish, never a folder forever
(myapp/pipelines/checkpoint_cleanup.py)."""
from __future__ import annotations

import datetime as dt

import pytest
import sqlalchemy as sa

from tests.fake_backend import FakeBackend
from tests.pipelines.support import drive, make_pipeline
from tests.support import unique
from tests.world import created


def finished_run(app, catalog, project_id, outcome="succeeded", **task):
    """A run of the project whose one task `train` was submitted (a fake backend) and ended, or hangs."""
    run_id, _ = make_pipeline(app, catalog, {"train": task}, [], project_id=project_id, name=unique("pipe"))
    drive(app, FakeBackend({"train": [outcome]}), run_id, passes=1 if outcome == "hang" else 30)
    return run_id


def kept(backend, namespace, run_id, task="train"):
    """A task folder as attempts leave it: two checkpoints, and a link a job planted to a file outside."""
    folder = backend.checkpoints_dir(namespace) / str(run_id) / task
    folder.mkdir(parents=True)
    for step in (1, 2):
        (folder / f"ckpt-{step}.bin").write_bytes(b"x")
        (folder / f"ckpt-{step}.json").write_text("{}")
    (folder / "escape").symlink_to(backend.workdir.parent / "outside.txt")
    return folder


def rows(app):
    from myapp.extensions import db
    from myapp.models import CheckpointCleanup

    with app.app_context():
        return [(r.namespace, r.pipeline_run_id, r.resource_group_id, r.error) for r in
                db.session.scalars(sa.select(CheckpointCleanup).order_by(CheckpointCleanup.id))]


@pytest.fixture()
def local(tmp_path):
    from myapp.backends.local import LocalBackend

    (tmp_path / "outside.txt").write_text("not the job's")
    return LocalBackend(tmp_path / "jobs")


@pytest.fixture()
def sent(monkeypatch):
    import myapp.api.pipelines

    calls: list[tuple] = []
    monkeypatch.setattr(myapp.api.pipelines, "enqueue", lambda name, *args, **kw: calls.append((name, *args)))
    return calls


@pytest.fixture()
def clean_table(app):
    from myapp.extensions import db
    from myapp.models import CheckpointCleanup

    with app.app_context():
        db.session.execute(sa.delete(CheckpointCleanup))
        db.session.commit()


def test_a_deleted_runs_folders_are_removed_and_a_restart_in_between_loses_nothing(app, catalog, user, local, sent,
                                                                                  clean_table, tmp_path):
    from myapp.extensions import db
    from myapp.pipelines import checkpoint_cleanup

    project = created(user.post("/api/v1/project/", json={"name": unique("ck")}))
    namespace = project["namespace"]
    gone, other = finished_run(app, catalog, project["id"]), finished_run(app, catalog, project["id"])
    folder, beside = kept(local, namespace, gone), kept(local, namespace, other)
    # A finished run keeps its checkpoints: nothing is written down for it.
    assert rows(app) == [] and sorted(p.name for p in folder.iterdir()) == [
        "ckpt-1.bin", "ckpt-1.json", "ckpt-2.bin", "ckpt-2.json", "escape"]

    assert user.delete(f"/api/v1/pipeline_run/{gone}").status_code == 200
    assert ("myapp.checkpoint_cleanup",) in sent
    assert rows(app) == [(namespace, gone, None, None)]
    # The platform stopped before a worker took it: the row is still due, and beat asks for it again.
    with app.app_context():
        assert checkpoint_cleanup.due()
        assert checkpoint_cleanup.remove_due(lambda group: local) == 1
        assert not checkpoint_cleanup.due()
        db.session.commit()
    assert not folder.parent.exists() and beside.is_dir()  # the other run's are kept
    assert (tmp_path / "outside.txt").read_text() == "not the job's"  # the link went as a name
    assert rows(app) == []


def test_a_removal_that_fails_is_tried_again_a_minute_on(app, catalog, user, local, sent, clean_table):
    from myapp.backends import BackendError
    from myapp.extensions import db
    from myapp.models import utcnow
    from myapp.pipelines import checkpoint_cleanup

    project = created(user.post("/api/v1/project/", json={"name": unique("ck")}))
    run_id = finished_run(app, catalog, project["id"])
    folder = kept(local, project["namespace"], run_id)
    assert user.delete(f"/api/v1/pipeline_run/{run_id}").status_code == 200

    class Unreachable:
        def delete_checkpoints(self, namespace, run_ids):
            raise BackendError("the API server is unreachable")

    now = utcnow()
    with app.app_context():
        assert checkpoint_cleanup.remove_due(lambda group: Unreachable(), now) == 0
        assert not checkpoint_cleanup.due(now + dt.timedelta(seconds=59))
        assert checkpoint_cleanup.due(now + dt.timedelta(seconds=60))
        db.session.commit()
    assert rows(app) == [(project["namespace"], run_id, None, "the API server is unreachable")]
    assert folder.is_dir()
    with app.app_context():
        assert checkpoint_cleanup.remove_due(lambda group: local, now + dt.timedelta(seconds=60)) == 1
        db.session.commit()
    assert not folder.exists() and rows(app) == []


def test_a_deleted_project_or_pipeline_takes_its_runs_folders_the_unfinished_ones_after_their_jobs(
        app, catalog, user, local, sent, clean_table):
    from myapp.extensions import db
    from myapp.models import PipelineRun, utcnow
    from myapp.pipelines import checkpoint_cleanup

    project = created(user.post("/api/v1/project/", json={"name": unique("ck")}))
    namespace = project["namespace"]
    done, running = finished_run(app, catalog, project["id"]), finished_run(app, catalog, project["id"], "hang")
    never = make_pipeline(app, catalog, {"train": {}}, [], project_id=project["id"], name=unique("pipe"))[0]
    folders = {run: kept(local, namespace, run) for run in (done, running)}
    with app.app_context():
        pipeline_of_done = db.session.get(PipelineRun, done).pipeline_id
    assert user.delete(f"/api/v1/pipeline/{pipeline_of_done}").status_code == 200  # its runs go with it
    assert rows(app) == [(namespace, done, None, None)]
    assert user.delete(f"/api/v1/project/{project['id']}").status_code == 200
    assert sorted(r[1] for r in rows(app)) == [done, running]  # `never` submitted nothing: it made no folder
    assert never not in [r[1] for r in rows(app)]

    now = utcnow()
    with app.app_context():
        checkpoint_cleanup.remove_due(lambda group: local, now)
        db.session.commit()
    assert not folders[done].exists() and folders[running].is_dir()  # its job is being stopped first
    with app.app_context():
        later = now + dt.timedelta(seconds=checkpoint_cleanup.RELEASE_SECONDS)
        assert checkpoint_cleanup.remove_due(lambda group: local, later) == 1
        db.session.commit()
    assert not folders[running].exists() and rows(app) == []


def test_the_claims_folders_of_deleted_runs_are_removed_by_a_pod_on_kubernetes(app, double, k8s_backend, tmp_path,
                                                                               clean_table):
    from myapp.extensions import db
    from myapp.models import CheckpointCleanup, utcnow
    from myapp.pipelines import checkpoint_cleanup
    from myapp.rendering.kinds.outputs_reader import CHECKPOINTS_MOUNT

    namespace, claim = unique("ns"), tmp_path / "claim"
    (tmp_path / "outside.txt").write_text("not the job's")
    for run in (900001, 900002, 900003):
        folder = claim / str(run) / "train"
        folder.mkdir(parents=True)
        (folder / "ckpt-1.bin").write_bytes(b"x")
        (folder / "escape").symlink_to(tmp_path / "outside.txt")
    double.checkpoint_claims[namespace] = claim
    with app.app_context():  # what deleting runs 900001 and 900002 wrote down, on a Kubernetes cluster's group
        db.session.add_all([CheckpointCleanup(namespace=namespace, pipeline_run_id=run, resource_group_id=7,
                                              due_at=utcnow()) for run in (900001, 900002)])
        db.session.commit()
        assert checkpoint_cleanup.remove_due(lambda group: k8s_backend if group == 7 else None) == 2
        db.session.commit()
    assert sorted(p.name for p in claim.iterdir()) == ["900003"]
    assert (tmp_path / "outside.txt").read_text() == "not the job's"
    (pod,) = [p for p in double.readers.seen if p["metadata"]["labels"].get("myapp.io/outputs-fetch")
              == "checkpoints-delete" and p["metadata"]["namespace"] == namespace]
    spec = pod["spec"]
    assert spec["volumes"] == [{"name": "myapp-checkpoints", "persistentVolumeClaim": {
        "claimName": "myapp-checkpoints", "readOnly": False}}]
    assert pod["spec"]["containers"][0]["command"][-3:] == [CHECKPOINTS_MOUNT, "900001", "900002"]
    assert spec["securityContext"]["runAsUser"] == 0 and "runAsNonRoot" not in spec["securityContext"]
    assert spec["containers"][0]["securityContext"]["capabilities"] == {"drop": ["ALL"]}
    assert [p for p in double.list("v1", "Pod", namespace) if p["metadata"]["name"].startswith("myapp-checkpoints")
            ] == []  # deleted once done
